package git

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// First-parent history is read in process: commits never change, and the
// aggregator asks about the same few dev commits for every proposal (η per
// file, the hot files). A question the in-process walk cannot answer
// exactly (a name that is not a full object name, a stop that is not on
// the first-parent chain within maxWalk commits) goes to git.

// maxWalk bounds an in-process first-parent walk.
const maxWalk = 10000

// FirstParents returns the first-parent chain from commit back to (not
// including) stop, newest first. A zero stop walks to the root; max <= 0
// means no limit.
func (r *Repo) FirstParents(ctx context.Context, commit, stop Hash, max int) ([]Hash, error) {
	chain, ok := r.chain(commit, stop, max)
	if ok {
		return chain, nil
	}
	rng := string(commit)
	if !stop.IsZero() {
		rng = string(stop) + ".." + string(commit)
	}
	args := []string{"rev-list", "--first-parent"}
	if max > 0 {
		args = append(args, fmt.Sprintf("--max-count=%d", max))
	}
	out, err := r.run(ctx, cmd{}, append(args, rng)...)
	if err != nil {
		return nil, err
	}
	var hs []Hash
	for _, l := range strings.Fields(string(out)) {
		hs = append(hs, Hash(l))
	}
	return hs, nil
}

// chain walks first parents in process, as `git rev-list --first-parent
// stop..commit` would; ok is false when it cannot say exactly.
func (r *Repo) chain(commit, stop Hash, max int) ([]Hash, bool) {
	if !isObjectName(commit) || !stop.IsZero() && !isObjectName(stop) {
		return nil, false
	}
	var hs []Hash
	for c := commit; c != stop; {
		if stop.IsZero() && max > 0 && len(hs) == max {
			break
		}
		if len(hs) == maxWalk {
			return nil, false
		}
		hs = append(hs, c)
		ps, err := r.parentsOf(c)
		if err != nil {
			return nil, false
		}
		if len(ps) == 0 {
			if !stop.IsZero() {
				return nil, false // stop is not on the chain: git knows what to leave out
			}
			break
		}
		c = ps[0]
	}
	if max > 0 && len(hs) > max {
		hs = hs[:max]
	}
	return hs, true
}

// parentsOf returns a commit's parents, read in process once.
func (r *Repo) parentsOf(c Hash) ([]Hash, error) {
	if ps, ok := r.cache.parents(c); ok {
		return ps, nil
	}
	var ps []Hash
	err := r.withGoGit(func(gg *gogit.Repository) error {
		commit, err := gg.CommitObject(plumbing.NewHash(string(c)))
		if err != nil {
			return err
		}
		ps = ps[:0]
		for _, p := range commit.ParentHashes {
			ps = append(ps, Hash(p.String()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.cache.putParents(c, ps)
	return ps, nil
}

// CountCommits counts the first-parent commits in from..to that change any
// of paths (all commits when paths is empty). A commit changes a path when
// it differs there from its first parent, as git compares with
// --first-parent.
func (r *Repo) CountCommits(ctx context.Context, from, to Hash, paths []string) (int, error) {
	if chain, ok := r.chain(to, from, 0); ok {
		n, err := r.countChanging(ctx, chain, paths)
		if err == nil {
			return n, nil
		}
	}
	args := []string{"rev-list", "--count", "--first-parent", string(from) + ".." + string(to)}
	if len(paths) > 0 {
		args = append(args, "--")
		args = append(args, literal(paths)...)
	}
	out, err := r.run(ctx, cmd{}, args...)
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(strings.TrimSpace(string(out)), &n)
	return n, err
}

// countChanging counts the commits of chain that change any of paths.
func (r *Repo) countChanging(ctx context.Context, chain []Hash, paths []string) (int, error) {
	if len(paths) == 0 {
		return len(chain), nil
	}
	at := func(c Hash, p string) (Hash, error) {
		h, err := r.TreeOf(ctx, c, p)
		if errors.Is(err, ErrPathNotFound) {
			return "", nil
		}
		return h, err
	}
	n := 0
	for _, c := range chain {
		ps, err := r.parentsOf(c)
		if err != nil {
			return 0, err
		}
		for _, p := range paths {
			now, err := at(c, p)
			if err != nil {
				return 0, err
			}
			var before Hash
			if len(ps) > 0 {
				if before, err = at(ps[0], p); err != nil {
					return 0, err
				}
			}
			if now != before {
				n++
				break
			}
		}
	}
	return n, nil
}
