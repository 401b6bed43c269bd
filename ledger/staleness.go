package ledger

import (
	"context"

	"github.com/git-descent/git-descent/internal/git"
)

// Staleness is η for a proposal: the largest number, over the files it
// changes, of dev commits (first-parent) that changed that file since the
// proposal's base. It is read from the ledger, not kept as a counter.
func Staleness(ctx context.Context, repo *git.Repo, base, dev git.Hash, paths []string) (int, error) {
	eta := 0
	for _, p := range paths {
		n, err := repo.CountCommits(ctx, base, dev, []string{p})
		if err != nil {
			return 0, err
		}
		eta = max(eta, n)
	}
	return eta, nil
}
