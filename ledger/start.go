package ledger

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
)

// Start creates a library's dev at head and its stable at dev, each only
// when it does not exist yet, and, when there is no journal yet, the
// journal's first record, saying where it left them — all in one
// transaction. It returns dev and the refs it created (none on later runs,
// which resume from the refs as they are). A dev or stable that something
// other than git-descent moved since the journal's last record is a
// *MovedError: a run never builds on a version no gate passed.
func Start(ctx context.Context, repo *git.Repo, library string, head git.Hash) (git.Hash, []string, error) {
	refs := Refs{library}
	j := OpenJournal(repo, library)
	jh, err := j.Head(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := CheckHeads(ctx, repo, library, jh); err != nil {
		return "", nil, err
	}
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
		stable = dev
		ups = append(ups, git.RefUpdate{Ref: refs.Stable(), Hash: stable})
	}
	var created []string
	for _, u := range ups {
		created = append(created, u.Ref)
	}
	if jh.Commit.IsZero() {
		msg := fmt.Sprintf("descent(%s): start with dev %s and stable %s\n", library, dev.Short(), stable.Short())
		c, err := j.commit(ctx, jh, Entry{State: State{Heads: Heads{Dev: dev, Stable: stable}}, Message: msg})
		if err != nil {
			return "", nil, fmt.Errorf("start the journal: %w", err)
		}
		ups = append(ups, git.RefUpdate{Ref: j.ref, Hash: c})
	}
	if err := repo.UpdateRefs(ctx, git.UpdateRefsRequest{Updates: ups, Reason: "git-descent: start " + library}); err != nil {
		return "", nil, err
	}
	return dev, created, nil
}

// Started is what a Start that created a library's refs left: dev (and
// stable) at Dev, the journal at its first record.
type Started struct {
	Library string
	Dev     git.Hash
	Journal git.Hash
}

// Unstart takes back a Start whose run failed before it decided anything,
// so that a failed first run leaves no refs: it deletes dev, stable and the
// journal in one transaction, and only while all three are still where
// Start left them (a compare-and-swap: a run that got further, or anything
// else that moved them, keeps them).
func Unstart(ctx context.Context, repo *git.Repo, s Started) error {
	refs := Refs{s.Library}
	return repo.UpdateRefs(ctx, git.UpdateRefsRequest{Reason: "git-descent: undo the start of " + s.Library, Updates: []git.RefUpdate{
		{Ref: refs.Dev(), Hash: git.ZeroHash, OldHash: s.Dev},
		{Ref: refs.Stable(), Hash: git.ZeroHash, OldHash: s.Dev},
		{Ref: OpenJournal(repo, s.Library).ref, Hash: git.ZeroHash, OldHash: s.Journal},
	}})
}
