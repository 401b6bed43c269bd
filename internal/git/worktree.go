package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Worktree is a linked working tree git-descent owns (under DescentDir),
// checked out sparsely: only the paths it was created for are on disk.
//
// A Worktree is used by one goroutine at a time.
type Worktree struct {
	repo  *Repo
	Dir   string
	paths []string
}

// sparseFlags enable sparse checkout for one command. git-descent never sets
// core.sparseCheckout in config: `git sparse-checkout` would turn on
// extensions.worktreeConfig in the user's repository.
var sparseFlags = []string{"-c", "core.sparseCheckout=true", "-c", "core.sparseCheckoutCone=false", "-c", "core.hooksPath=/dev/null"}

// AddWorktree creates a detached worktree at dir showing only paths
// (directories relative to the repository root) at commit. An old worktree
// at dir is removed first.
func (r *Repo) AddWorktree(ctx context.Context, dir string, commit Hash, paths []string) (*Worktree, error) {
	if err := r.RemoveWorktree(ctx, dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create worktree %q: %w", dir, err)
	}
	if _, err := r.run(ctx, cmd{}, "-c", "core.hooksPath=/dev/null", "worktree", "add", "--detach", "--no-checkout", "--lock", "--reason", "git-descent worker", dir, string(commit)); err != nil {
		return nil, fmt.Errorf("create worktree %q: %w", dir, err)
	}
	w := &Worktree{repo: r, Dir: dir, paths: paths}
	gd, err := w.run(ctx, cmd{}, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, err
	}
	var pat strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&pat, "/%s/\n", strings.Trim(p, "/"))
	}
	info := filepath.Join(strings.TrimSpace(string(gd)), "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(info, "sparse-checkout"), []byte(pat.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write sparse-checkout for %q: %w", dir, err)
	}
	return w, w.Reset(ctx, commit)
}

// RemoveWorktree removes a worktree git-descent made at dir, if any, and
// prunes git's record of worktrees whose directories are gone.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		if _, err := r.run(ctx, cmd{}, "worktree", "remove", "--force", "--force", dir); err != nil {
			var ce *CommandError
			if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "is not a working tree") {
				return fmt.Errorf("remove worktree %q: %w", dir, err)
			}
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("remove worktree %q: %w", dir, err)
			}
		}
	}
	_, err := r.run(ctx, cmd{}, "worktree", "prune")
	return err
}

func (w *Worktree) run(ctx context.Context, c cmd, args ...string) ([]byte, error) {
	c.dir = w.Dir
	return w.repo.run(ctx, c, args...)
}

// Reset makes the worktree exactly commit: tracked files restored,
// untracked and ignored files removed.
func (w *Worktree) Reset(ctx context.Context, commit Hash) error {
	if _, err := w.run(ctx, cmd{}, append(sparseFlags, "reset", "--quiet", "--hard", string(commit))...); err != nil {
		return fmt.Errorf("reset worktree %q to %s: %w", w.Dir, commit.Short(), err)
	}
	if _, err := w.run(ctx, cmd{}, "clean", "-ffdxq"); err != nil {
		return fmt.Errorf("clean worktree %q: %w", w.Dir, err)
	}
	return nil
}

// Change is one path the worktree differs from its HEAD in.
type Change struct {
	Path   string
	Status string // two-letter porcelain status, e.g. " M", "??", " D"
}

// Changes lists every changed, deleted or untracked path in the worktree,
// anywhere in it. Ignored files are not changes: they would not be committed.
func (w *Worktree) Changes(ctx context.Context) ([]Change, error) {
	out, err := w.run(ctx, cmd{}, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, fmt.Errorf("status of worktree %q: %w", w.Dir, err)
	}
	var cs []Change
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) < 4 {
			continue
		}
		cs = append(cs, Change{Status: rec[:2], Path: rec[3:]})
	}
	return cs, nil
}

// Snapshot records the worktree's files under path as a tree (the whole
// repository tree with path's changes applied) and returns it. It stages
// into the worktree's own index.
//
// Staging is tried up to three times when git could not create an object's
// temporary file: a `git gc` running meanwhile (the user's, or one git
// started in the background after a commit) removes empty object
// directories, and can remove the one git has just made for the object.
func (w *Worktree) Snapshot(ctx context.Context, path string) (Hash, error) {
	var err error
	for try := 1; try <= 3; try++ {
		if _, err = w.run(ctx, cmd{}, append(sparseFlags, "add", "--all", "--", ":(literal)"+path)...); !objectRace(err) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("stage edits in %q: %w", w.Dir, err)
	}
	out, err := w.run(ctx, cmd{}, "write-tree")
	if err != nil {
		return "", err
	}
	return parseHash(out)
}

// objectRace reports whether err is git failing to create an object's
// temporary file, which a concurrent gc can cause.
func objectRace(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce) && strings.Contains(ce.Stderr, "unable to create temporary file")
}

// Repo is the repository the worktree belongs to.
func (w *Worktree) Repo() *Repo { return w.repo }

// Head returns the commit the worktree's HEAD points at.
func (w *Worktree) Head(ctx context.Context) (Hash, error) {
	out, err := w.run(ctx, cmd{}, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	return parseHash(out)
}

// Rewind moves the worktree's HEAD back to commit, keeping its files and
// index: whatever was committed since shows up as changes again.
func (w *Worktree) Rewind(ctx context.Context, commit Hash) error {
	_, err := w.run(ctx, cmd{}, "reset", "--quiet", "--soft", string(commit))
	return err
}
