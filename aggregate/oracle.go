package aggregate

import (
	"context"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// Oracle checks a candidate that changes guarded (L1) files, such as
// scripts: typically the library's own tests, run in a fresh workspace with
// the frozen (L0) files taken from dev, so a candidate can neither rewrite
// nor shadow them. Check returns "" when the candidate passes, else what
// failed; an error means the check itself could not run.
type Oracle interface {
	Check(ctx context.Context, candTree, devTree git.Hash) (failure string, err error)
}

// oraclePassed is the recorded finding of a passing oracle.
const oraclePassed = "passed the oracle"

// touchesGuarded reports whether any member changes an L1 file.
func (a *Aggregator) touchesGuarded(members []*Submission) bool {
	for _, m := range members {
		for _, p := range m.Paths {
			if a.Library.LayerOf(p) == library.L1 {
				return true
			}
		}
	}
	return false
}

// checkOracle runs the oracle on a candidate's library against dev's and
// returns oraclePassed or the failure.
func (a *Aggregator) checkOracle(ctx context.Context, f *fusion) (string, error) {
	if a.Oracle == nil {
		return "no oracle is configured to check them (set library." + a.Library.Name + ".oracle)", nil
	}
	cand, err := a.Repo.TreeOf(ctx, f.tree, a.Library.Path)
	if err != nil {
		return "", err
	}
	dev, err := a.Repo.TreeOf(ctx, f.base, a.Library.Path)
	if err != nil {
		return "", err
	}
	failure, err := a.Oracle.Check(ctx, cand, dev)
	switch {
	case err != nil:
		return "", err
	case failure == "":
		return oraclePassed, nil
	}
	return "failed the oracle: " + failure, nil
}
