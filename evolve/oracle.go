package evolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/sandbox"
)

// oracle runs the library's oracle command on a candidate that changes
// guarded (L1) files: the candidate's files in a fresh workspace, then the
// frozen (L0) files from dev written over them, so a candidate can neither
// rewrite nor shadow what the oracle checks against.
type oracle struct {
	repo *git.Repo
	lib  *library.Library
	exe  string
}

// Check implements aggregate.Oracle: "" when the command exits 0, else the
// tail of what it printed.
func (o *oracle) Check(ctx context.Context, cand, dev git.Hash) (string, error) {
	ws, err := sandbox.NewWorkspace("", "descent-oracle-")
	if err != nil {
		return "", err
	}
	defer ws.Remove()
	dir := filepath.Join(ws.Dir, filepath.FromSlash(o.lib.Path))
	if err := materialize.WriteTree(ctx, o.repo, cand, dir, nil); err != nil {
		return "", err
	}
	frozen := func(rel string) bool { return o.lib.LayerOf(rel) != library.L0 }
	if err := removeFrozen(dir, o.lib); err != nil {
		return "", err
	}
	if err := materialize.WriteTree(ctx, o.repo, dev, dir, frozen); err != nil {
		return "", err
	}
	home := filepath.Join(ws.Dir, ".home")
	_ = os.MkdirAll(home, 0o755)
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command: o.lib.Oracle,
		Dir:     dir,
		Env:     sandbox.Environ(o.lib.Env, map[string]string{"DESCENT_SKILL_DIR": dir, "HOME": home}, o.exe),
		Timeout: o.lib.OracleTimeout,
	})
	var exit *sandbox.ExitError
	switch {
	case errors.As(err, &exit):
		return tail(string(res.Stdout)+"\n"+string(res.Stderr), exit.ExitCode), nil
	case errors.Is(err, sandbox.ErrTimeout):
		return "timed out after " + o.lib.OracleTimeout.String(), nil
	}
	return "", err
}

// removeFrozen deletes the candidate's files in L0 paths before dev's are
// written: a file the candidate added there cannot shadow anything.
func removeFrozen(dir string, lib *library.Library) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if lib.LayerOf(filepath.ToSlash(rel)) == library.L0 {
			return os.Remove(p)
		}
		return nil
	})
}

// tail is the last lines of an oracle's output, for the decision.
func tail(out string, code int) string {
	var keep []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < 3; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	msg := strings.Join(keep, " | ")
	if len(msg) > 300 {
		msg = "…" + msg[len(msg)-300:]
	}
	if msg == "" {
		return fmt.Sprintf("exit status %d", code)
	}
	return fmt.Sprintf("exit status %d: %s", code, msg)
}
