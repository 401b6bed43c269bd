package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// frozenRule refuses an update that changes the library's frozen (L0)
// files. A proposal is compared with its first parent, the dev commit it
// was made on (with none, everything it holds is new). dev and stable are
// compared with their old value, and a new one with where it meets the
// trusted history. A frozen file of dev or stable that changed since the
// old value passes when it is as the trusted history has it where the new
// commit meets it, and the new commit is not itself in that history: the
// user's own edit, merged in (git descent sync). A commit of the trusted
// history pushed as dev brings no such exception: on a clone, HEAD may be
// the very commit pushed.
func (g *Guard) frozenRule(ctx context.Context, p *push, t target, u Update) (string, error) {
	var base, meet git.Hash
	var err error
	switch t.kind {
	case workerRef, queueRef:
		ps, err := g.Repo.Parents(ctx, u.New)
		if err != nil {
			return "", err
		}
		if len(ps) > 0 {
			base = ps[0]
		}
	default:
		if meet, err = g.meet(ctx, u.New); err != nil {
			return "", err
		}
		base = u.Old
		if base.IsZero() {
			base = meet
		}
	}
	changed, err := frozenChanges(ctx, g.Repo, t.lib, base, u.New)
	if err != nil {
		return "", err
	}
	if !meet.IsZero() && base != meet && meet != u.New {
		if changed, err = notTrusted(ctx, g.Repo, t.lib, changed, u.New, meet); err != nil {
			return "", err
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	msg := fmt.Sprintf("changes frozen (L0) files of library %s: %s", t.lib.Name, listPaths(t.lib, changed))
	if t.kind == workerRef || t.kind == queueRef {
		return msg + "; a proposal may never change frozen files", nil
	}
	return msg + fmt.Sprintf("; frozen files change only in the history of %s, by a person (git descent sync brings them into dev)", g.Where), nil
}

// meet is where c meets the trusted history (their merge base), or zero.
func (g *Guard) meet(ctx context.Context, c git.Hash) (git.Hash, error) {
	if g.Trusted.IsZero() {
		return "", nil
	}
	h, err := g.Repo.MergeBase(ctx, c, g.Trusted)
	if h.IsZero() {
		h = ""
	}
	return h, err
}

// frozenChanges lists the frozen files of lib, relative to its directory,
// that differ between base (zero: nothing) and c.
func frozenChanges(ctx context.Context, repo *git.Repo, lib *library.Library, base, c git.Hash) ([]string, error) {
	a, err := libTree(ctx, repo, base, lib.Path)
	if err != nil {
		return nil, err
	}
	b, err := libTree(ctx, repo, c, lib.Path)
	if err != nil {
		return nil, err
	}
	var paths []string
	switch {
	case a == b:
	case a == git.EmptyTree || b == git.EmptyTree:
		other := a
		if a == git.EmptyTree {
			other = b
		}
		entries, err := repo.ReadTree(ctx, other)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			paths = append(paths, e.Path)
		}
	default:
		if paths, err = repo.ChangedPaths(ctx, a, b); err != nil {
			return nil, err
		}
	}
	var frozen []string
	for _, p := range paths {
		if lib.LayerOf(p) == library.L0 {
			frozen = append(frozen, p)
		}
	}
	return frozen, nil
}

// libTree is the tree of dir in commit c; the empty tree when c is zero
// or has no dir.
func libTree(ctx context.Context, repo *git.Repo, c git.Hash, dir string) (git.Hash, error) {
	if c.IsZero() {
		return git.EmptyTree, nil
	}
	h, err := repo.TreeOf(ctx, c, dir)
	if errors.Is(err, git.ErrPathNotFound) {
		return git.EmptyTree, nil
	}
	return h, err
}

// notTrusted keeps the files of changed (relative to lib's directory)
// whose version in c is not the one in trusted.
func notTrusted(ctx context.Context, repo *git.Repo, lib *library.Library, changed []string, c, trusted git.Hash) ([]string, error) {
	var out []string
	for _, p := range changed {
		x, err := objectAt(ctx, repo, c, lib.RepoPath(p))
		if err != nil {
			return nil, err
		}
		y, err := objectAt(ctx, repo, trusted, lib.RepoPath(p))
		if err != nil {
			return nil, err
		}
		if x != y {
			out = append(out, p)
		}
	}
	return out, nil
}

// objectAt is the object at path p in commit c, "" when there is none.
func objectAt(ctx context.Context, repo *git.Repo, c git.Hash, p string) (git.Hash, error) {
	h, err := repo.TreeOf(ctx, c, p)
	if errors.Is(err, git.ErrPathNotFound) {
		return "", nil
	}
	return h, err
}

// listPaths names up to three files as repository paths, and how many
// more there are.
func listPaths(lib *library.Library, rel []string) string {
	const show = 3
	var names []string
	for i, p := range rel {
		if i == show {
			names = append(names, fmt.Sprintf("and %d more", len(rel)-show))
			break
		}
		names = append(names, lib.RepoPath(p))
	}
	return strings.Join(names, ", ")
}
