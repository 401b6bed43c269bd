package aggregate

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/git-descent/git-descent/merge"
)

// driverEnv makes the test binary act as `git descent merge-driver`, for
// the merges the fixtures' repositories run.
const driverEnv = "DESCENT_TEST_MERGE_DRIVER"

// TestDriverProcess is not a test: it is the merge driver git runs for the
// fixtures, `<test binary> -test.run=^TestDriverProcess$ -- %O %A %B %L %P`
// standing in for `git descent merge-driver`.
func TestDriverProcess(t *testing.T) {
	if os.Getenv(driverEnv) != "1" {
		t.Skip("run by git for the fixtures' merges")
	}
	args := flag.Args()
	if len(args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: merge-driver %O %A %B %L %P")
		os.Exit(2)
	}
	size, err := strconv.Atoi(args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, err := merge.RunDriver(context.Background(), nil, args[0], args[1], args[2], size, args[4])
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case n > 0:
		os.Exit(1)
	}
	os.Exit(0)
}
