// Command git-descent improves agent skills by measured, parallel,
// reviewable edits inside a git repository. Run it as `git descent`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/git-descent/git-descent/internal/cli"
)

func main() { os.Exit(run()) }

// run executes the command line and returns the exit status: 0 success,
// 1 failure (or merge conflicts, for merge-driver), 2 bad usage,
// 130 interrupted.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exitCode(cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		if ee.Message != "" {
			fmt.Fprintln(os.Stderr, "git-descent: "+ee.Message)
		}
		return ee.Code
	}
	fmt.Fprintln(os.Stderr, "git-descent: "+err.Error())
	switch {
	case cli.IsUsage(err):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}
