package materialize

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// WorkerDir is where worker id of a library keeps its worktree.
func WorkerDir(repo *git.Repo, lib *library.Library, id string) string {
	return filepath.Join(repo.DescentDir(), "worktrees", lib.Name, "w"+id)
}

// RemoveWorkers deletes every worker worktree of a library, including those a
// crashed run left behind.
func RemoveWorkers(ctx context.Context, repo *git.Repo, lib *library.Library) error {
	root := filepath.Join(repo.DescentDir(), "worktrees", lib.Name)
	entries, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if err := repo.RemoveWorktree(ctx, filepath.Join(root, e.Name())); err != nil {
			return err
		}
	}
	return repo.RemoveWorktree(ctx, root)
}

// ErrNoChange means the proposer left the library as it was.
var ErrNoChange = errors.New("no change to the library")

// InvalidEditError is a proposer edit git-descent refuses to commit.
type InvalidEditError struct {
	Reason string
	Paths  []string
}

func (e *InvalidEditError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, strings.Join(e.Paths, ", "))
}

// Edit is a proposer's change, captured from a worker worktree.
type Edit struct {
	Tree  git.Hash // the whole repository tree with the edit applied
	Paths []string // changed paths, relative to the library root
}

// Capture validates the edits in a worker worktree against base (the dev
// snapshot it was reset to) and records them as a tree. It refuses (*InvalidEditError) edits outside the
// library, to frozen (L0) files, or that create symlinks, and returns
// ErrNoChange when nothing inside the library changed.
func Capture(ctx context.Context, wt *git.Worktree, lib *library.Library, base git.Hash) (Edit, error) {
	// A proposer that committed its edit (an agent running `git commit`)
	// moved the worktree's HEAD: what it committed counts as its edit.
	head, err := wt.Head(ctx)
	if err != nil {
		return Edit{}, err
	}
	if head != base {
		if err := wt.Rewind(ctx, base); err != nil {
			return Edit{}, err
		}
	}
	changes, err := wt.Changes(ctx)
	if err != nil {
		return Edit{}, err
	}
	var outside, frozen, links, paths []string
	for _, c := range changes {
		rel, inside := lib.Rel(c.Path)
		if !inside {
			outside = append(outside, c.Path)
			continue
		}
		if fi, err := os.Lstat(filepath.Join(wt.Dir, filepath.FromSlash(c.Path))); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			links = append(links, rel)
		}
		if lib.LayerOf(rel) == library.L0 {
			frozen = append(frozen, rel)
		}
		paths = append(paths, rel)
	}
	switch {
	case len(outside) > 0:
		return Edit{}, &InvalidEditError{Reason: "edits outside the library", Paths: outside}
	case len(links) > 0:
		return Edit{}, &InvalidEditError{Reason: "symlinks are not allowed", Paths: links}
	case len(frozen) > 0:
		return Edit{}, &InvalidEditError{Reason: "edits to frozen (L0) files", Paths: frozen}
	case len(paths) == 0:
		return Edit{}, ErrNoChange
	}
	tree, err := wt.Snapshot(ctx, lib.Path)
	if err != nil {
		return Edit{}, err
	}
	baseTree, err := wt.Repo().TreeOf(ctx, base, "")
	if err != nil {
		return Edit{}, err
	}
	if tree == baseTree {
		return Edit{}, ErrNoChange
	}
	sort.Strings(paths)
	return Edit{Tree: tree, Paths: paths}, nil
}
