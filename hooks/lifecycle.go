package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// Lifecycle hooks are commands a library configures (on-commit and
// on-promote in .descent) that git-descent runs when dev takes a commit
// and when stable is promoted, with the event as JSON on stdin: to open a
// pull request from stable, post to a channel, start a deployment. They are
// the user's own commands, as score-command is: run by /bin/sh at the
// repository's root, without isolation, with {{repo}} expanded.

// LifecycleTimeout is how long a lifecycle hook may run when Lifecycle
// does not say.
const LifecycleTimeout = 2 * time.Minute

// Event is what a lifecycle hook gets on stdin: a CommitEvent or a
// PromoteEvent.
type Event interface {
	// hook is the key of the library's hook for the event.
	hook(*library.Library) (key, command string)
}

// CommitEvent is what on-commit gets: dev moved from Parent to Dev, a
// merge of the proposals whose Decisions committed them. On stdin:
//
//	{"event": "commit", "library": "<name>", "dev": "<commit>", "parent": "<commit>",
//	 "decisions": [<ledger.Decision>, ...]}
//
// with each decision as the journal records it (decisions/r<round>/<id>.json).
type CommitEvent struct {
	Library   string            `json:"library"`
	Dev       git.Hash          `json:"dev"`
	Parent    git.Hash          `json:"parent"`
	Decisions []ledger.Decision `json:"decisions"`
}

func (CommitEvent) hook(l *library.Library) (string, string) { return "on-commit", l.OnCommit }

// MarshalJSON writes the event with "event": "commit" first, and an empty
// list for no decisions.
func (e CommitEvent) MarshalJSON() ([]byte, error) {
	type plain CommitEvent
	if e.Decisions == nil {
		e.Decisions = []ledger.Decision{}
	}
	return json.Marshal(struct {
		Event string `json:"event"`
		plain
	}{"commit", plain(e)})
}

// PromoteEvent is what on-promote gets: stable fast-forwarded From →
// Stable, by Promotion. On stdin:
//
//	{"event": "promote", "library": "<name>", "stable": "<commit>", "from": "<commit>",
//	 "promotion": <ledger.Promotion>}
//
// with the promotion as the journal's state.json records it.
type PromoteEvent struct {
	Library   string           `json:"library"`
	Stable    git.Hash         `json:"stable"`
	From      git.Hash         `json:"from"`
	Promotion ledger.Promotion `json:"promotion"`
}

func (PromoteEvent) hook(l *library.Library) (string, string) { return "on-promote", l.OnPromote }

// MarshalJSON writes the event with "event": "promote" first.
func (e PromoteEvent) MarshalJSON() ([]byte, error) {
	type plain PromoteEvent
	return json.Marshal(struct {
		Event string `json:"event"`
		plain
	}{"promote", plain(e)})
}

// Lifecycle is one run of a library's lifecycle hook.
type Lifecycle struct {
	Library *library.Library
	Top     string // the repository's top: the hook's directory and {{repo}} ("" in a bare repository: the current directory)
	Event   Event
	Timeout time.Duration // 0: LifecycleTimeout
	Out     io.Writer     // gets the hook's stdout when it succeeds; nil discards it
}

// LifecycleError is a lifecycle hook that failed.
type LifecycleError struct {
	Hook    string // on-commit or on-promote
	Command string // as configured
	Err     error  // a *sandbox.ExitError, sandbox.ErrTimeout, a *sandbox.StartError
	Output  string // the end of what it printed
}

func (e *LifecycleError) Error() string {
	var exit *sandbox.ExitError
	what := e.Err.Error()
	switch {
	case errors.As(e.Err, &exit):
		what = fmt.Sprintf("exit status %d", exit.ExitCode)
	case errors.Is(e.Err, sandbox.ErrTimeout):
		what = "timed out"
	}
	msg := fmt.Sprintf("%s hook %q: %s", e.Hook, e.Command, what)
	if e.Output != "" {
		msg += ": " + e.Output
	}
	return msg
}

func (e *LifecycleError) Unwrap() error { return e.Err }

// RunLifecycle runs the library's hook for l.Event (on-commit for a
// CommitEvent, on-promote for a PromoteEvent), if it configures one, with
// the event as JSON on stdin, and waits for it, up to l.Timeout. The hook
// runs in l.Top with the environment agents' commands get (PATH with
// git-descent first, the locale, HOME) plus the variables the library's
// env key names, DESCENT_EVENT (commit or promote) and DESCENT_LIBRARY. A
// hook that fails, exits non-zero or times out is a *LifecycleError; a
// cancelled context is the context's error. Safe for concurrent use.
func RunLifecycle(ctx context.Context, l Lifecycle) error {
	key, command := l.Event.hook(l.Library)
	if strings.TrimSpace(command) == "" {
		return nil
	}
	payload, err := json.Marshal(l.Event)
	if err != nil {
		return fmt.Errorf("%s hook: %w", key, err)
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = LifecycleTimeout
	}
	set := map[string]string{
		"DESCENT_EVENT":   strings.TrimPrefix(key, "on-"),
		"DESCENT_LIBRARY": l.Library.Name,
	}
	if home, err := os.UserHomeDir(); err == nil {
		set["HOME"] = home // where a tool that opens a pull request keeps its login
	}
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command: library.ExpandRepo(command, l.Top),
		Dir:     l.Top,
		Env:     sandbox.Environ(l.Library.Env, set, git.ExecutablePath()),
		Stdin:   payload,
		Timeout: timeout,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return &LifecycleError{Hook: key, Command: command, Err: err, Output: tail(string(res.Stderr)+"\n"+string(res.Stdout), 5, 500)}
	}
	if l.Out != nil {
		l.Out.Write(res.Stdout)
	}
	return nil
}

// tail is the last n non-empty lines of s, at most max bytes, on one line.
func tail(s string, n, max int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, " | ")
	if len(out) > max {
		out = "..." + out[len(out)-max:]
	}
	return out
}
