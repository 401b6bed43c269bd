package ledger

import (
	"context"

	"github.com/git-descent/git-descent/internal/git"
)

// Start creates a library's dev at head and its stable at dev, each only
// when it does not exist yet, in one transaction. It returns dev and the
// refs it created (none on later runs, which resume from the refs as they
// are).
func Start(ctx context.Context, repo *git.Repo, library string, head git.Hash) (git.Hash, []string, error) {
	refs := Refs{library}
	dev, err := resolveOrZero(ctx, repo, refs.Dev())
	if err != nil {
		return "", nil, err
	}
	stable, err := resolveOrZero(ctx, repo, refs.Stable())
	if err != nil {
		return "", nil, err
	}
	var ups []git.RefUpdate
	if dev.IsZero() {
		dev = head
		ups = append(ups, git.RefUpdate{Ref: refs.Dev(), Hash: dev})
	}
	if stable.IsZero() {
		ups = append(ups, git.RefUpdate{Ref: refs.Stable(), Hash: dev})
	}
	if err := repo.UpdateRefs(ctx, git.UpdateRefsRequest{Updates: ups, Reason: "git-descent: start " + library}); err != nil {
		return "", nil, err
	}
	var created []string
	for _, u := range ups {
		created = append(created, u.Ref)
	}
	return dev, created, nil
}
