package fakellm

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCmd runs the scripts in testdata/scripts, which drive the fakellm
// command through a small HTTP client command, post.
func TestCmd(t *testing.T) {
	t.Run("scripts", func(t *testing.T) {
		testscript.Run(t, testscript.Params{
			Dir:                filepath.Join("testdata", "scripts"),
			RequireUniqueNames: true,
			Cmds:               map[string]func(*testscript.TestScript, bool, []string){"fakellm": Cmd, "post": cmdPost},
		})
	})
	// The parallel scripts have all ended here, so their servers must be gone.
	scripts.Lock()
	defer scripts.Unlock()
	if n := len(scripts.servers); n != 0 {
		t.Errorf("%d servers outlived their scripts", n)
	}
}

// cmdPost is the script command
//
//	post <body-file> [path]
//
// It posts the file to $OPENAI_BASE_URL followed by path (default
// /chat/completions), with "Authorization: Bearer $OPENAI_API_KEY" when that
// is set, and prints "status N", "retry-after V" when the header is present,
// and the body.
func cmdPost(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: post <body-file> [path]")
	}
	path := "/chat/completions"
	if len(args) == 2 {
		path = args[1]
	}
	body, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	req, err := http.NewRequest(http.MethodPost, ts.Getenv("OPENAI_BASE_URL")+path, strings.NewReader(string(body)))
	ts.Check(err)
	req.Header.Set("Content-Type", "application/json")
	if key := ts.Getenv("OPENAI_API_KEY"); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "status %d\n", resp.StatusCode)
	if v := resp.Header.Get("Retry-After"); v != "" {
		fmt.Fprintf(ts.Stdout(), "retry-after %s\n", v)
	}
	ts.Stdout().Write(data)
}
