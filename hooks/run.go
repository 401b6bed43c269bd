package hooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// RunRequest is one run of an installed hook, as git started it.
type RunRequest struct {
	Hook   string   // PreReceive or PrePush
	Script string   // the hook's path as git ran it ($0), to find the hook it chains; "": none
	Args   []string // git's arguments to the hook
	Stdin  io.Reader
	// Stdout and Stderr get the chained hook's output (git shows a
	// server's to the pusher).
	Stdout, Stderr io.Writer
}

// ChainedError is a chained hook that failed: the push is refused as git
// would have refused it without git-descent.
type ChainedError struct {
	Path string
	Err  error
}

func (e *ChainedError) Error() string {
	var exit *sandbox.ExitError
	if errors.As(e.Err, &exit) {
		return fmt.Sprintf("%s (the hook git-descent's runs first) refused it: exit status %d", e.Path, exit.ExitCode)
	}
	return fmt.Sprintf("%s (the hook git-descent's runs first): %v", e.Path, e.Err)
}
func (e *ChainedError) Unwrap() error { return e.Err }

// Run runs a hook: the hook it chains first (req.Script + ChainedSuffix,
// when there is one and it is executable) with the same arguments and
// input, then the guard on the descent refs of the push. A push the guard
// refuses is a *RefusedError; a chained hook that fails, a *ChainedError;
// any other error means the guard could not decide, and the push must be
// refused all the same. A push of no descent ref reads no configuration.
func Run(ctx context.Context, repo *git.Repo, req RunRequest) error {
	if req.Hook != PreReceive && req.Hook != PrePush {
		return fmt.Errorf("git-descent has no %q hook (it installs %s and %s)", req.Hook, PreReceive, PrePush)
	}
	input, err := io.ReadAll(req.Stdin)
	if err != nil {
		return fmt.Errorf("read the %s hook's input: %w", req.Hook, err)
	}
	if err := runChained(ctx, req, input); err != nil {
		return err
	}
	ups, err := parseUpdates(req.Hook, input)
	if err != nil {
		return err
	}
	if !anyDescent(ups) {
		return nil
	}
	g, err := NewGuard(ctx, repo, req.Hook)
	if err != nil {
		return err
	}
	refused, err := g.Check(ctx, ups)
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return &RefusedError{Refusals: refused}
	}
	return nil
}

func anyDescent(ups []Update) bool {
	for _, u := range ups {
		if isDescent(u.Ref) {
			return true
		}
	}
	return false
}

// NewGuard builds the guard a hook runs: for PreReceive, with the
// libraries of the .descent committed at HEAD and HEAD's history trusted
// (never what the push brings); for PrePush, with the working tree's
// .descent and the clone's HEAD.
func NewGuard(ctx context.Context, repo *git.Repo, hook string) (*Guard, error) {
	head, err := repo.ResolveRef(ctx, "HEAD")
	if err != nil && !errors.Is(err, git.ErrRefNotFound) {
		return nil, err
	}
	g := &Guard{Repo: repo, Trusted: head, Where: "HEAD"}
	if !head.IsZero() {
		g.Where = "HEAD " + head.Short()
	}
	switch {
	case hook == PrePush:
		g.Libraries, err = library.LoadAll(ctx, repo)
	case !head.IsZero():
		g.Libraries, err = library.LoadAt(ctx, repo, head)
	}
	if err != nil {
		return nil, fmt.Errorf("read the libraries' configuration: %w", err)
	}
	return g, nil
}

// parseUpdates reads a hook's input: "<old> <new> <ref>" lines for
// PreReceive, "<local ref> <local sha> <remote ref> <remote sha>" for
// PrePush (the update is to the remote ref).
func parseUpdates(hook string, input []byte) ([]Update, error) {
	var ups []Update
	sc := bufio.NewScanner(bytes.NewReader(input))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case hook == PreReceive && len(f) == 3:
			ups = append(ups, Update{Ref: f[2], Old: git.Hash(f[0]), New: git.Hash(f[1])})
		case hook == PrePush && len(f) == 4:
			ups = append(ups, Update{Ref: f[2], Old: git.Hash(f[3]), New: git.Hash(f[1])})
		default:
			return nil, fmt.Errorf("%s hook: unexpected input line %q", hook, sc.Text())
		}
	}
	return ups, sc.Err()
}

// runChained runs the hook git-descent's chains, if any, as git would
// have run it: same arguments, input and environment, in the same
// directory, its output passed on.
func runChained(ctx context.Context, req RunRequest, input []byte) error {
	if req.Script == "" {
		return nil
	}
	path, err := filepath.Abs(req.Script + ChainedSuffix)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return nil // git runs no hook that is missing or not executable
	}
	words := []string{shellQuote(path)}
	for _, a := range req.Args {
		words = append(words, shellQuote(a))
	}
	res, err := sandbox.Run(ctx, sandbox.Spec{Command: strings.Join(words, " "), Env: os.Environ(), Stdin: input})
	if req.Stdout != nil {
		req.Stdout.Write(res.Stdout)
	}
	if req.Stderr != nil {
		req.Stderr.Write(res.Stderr)
	}
	if err != nil {
		return &ChainedError{Path: path, Err: err}
	}
	return nil
}
