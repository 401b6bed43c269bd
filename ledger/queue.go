package ledger

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
)

// WorkerHead is a worker branch, the proposal at its head and the newest
// decision on it (nil when it has none yet).
type WorkerHead struct {
	Ref      git.Ref
	Decision *Decision
}

// WorkerHeads returns the library's worker branches in name order, each with
// the newest decision on the proposal it points at.
func (j *Journal) WorkerHeads(ctx context.Context) ([]WorkerHead, error) {
	refs, err := j.repo.ListRefs(ctx, j.refs.WorkerPrefix())
	if err != nil {
		return nil, err
	}
	ds, err := j.Decisions(ctx)
	if err != nil {
		return nil, err
	}
	latest := map[git.Hash]*Decision{}
	for i := range ds {
		latest[ds[i].Proposal] = &ds[i]
	}
	out := make([]WorkerHead, len(refs))
	for i, r := range refs {
		out[i] = WorkerHead{Ref: r, Decision: latest[r.Hash]}
	}
	return out, nil
}

// Undecided returns the proposals of the library at the heads of its worker
// branches that no decision covers and the journal does not queue yet: those
// a run stopped before deciding.
func (j *Journal) Undecided(ctx context.Context, head JournalHead) ([]*Proposal, error) {
	heads, err := j.WorkerHeads(ctx)
	if err != nil {
		return nil, err
	}
	queued := map[git.Hash]bool{}
	for _, r := range head.State.Refile {
		queued[r.Proposal] = true
	}
	var out []*Proposal
	for _, h := range heads {
		if h.Decision != nil || queued[h.Ref.Hash] {
			continue
		}
		p, err := ReadProposal(ctx, j.repo, h.Ref.Hash)
		if err != nil || p.Library != j.refs.Library {
			continue // not a proposal of this library: nothing to decide
		}
		out = append(out, p)
	}
	return out, nil
}

// Queue records proposals in the journal's re-file queue, first in line,
// the journal commit keeping them reachable: a worker's next proposal then
// can never make one unreachable before its decision. The next round
// decides them.
func (j *Journal) Queue(ctx context.Context, head JournalHead, ps []*Proposal) (JournalHead, error) {
	if len(ps) == 0 {
		return head, nil
	}
	state := head.State
	var queue []Refile
	var keep []git.Hash
	for _, p := range ps {
		queue = append(queue, Refile{Proposal: p.Commit})
		keep = append(keep, p.Commit)
	}
	state.Refile = append(queue, state.Refile...)
	msg := fmt.Sprintf("descent(%s): queue %d undecided proposals\n", j.refs.Library, len(ps))
	return j.Record(ctx, head, Entry{State: state, Message: msg, Keep: keep})
}

// Known returns the proposals the journal holds: decided, re-filed for a
// later round, or pooled as promising. A queued proposal it holds is taken
// care of and leaves the remote's queue.
func (j *Journal) Known(ctx context.Context) (map[git.Hash]bool, error) {
	c, err := resolveOrZero(ctx, j.repo, j.ref)
	if err != nil || c.IsZero() {
		return map[git.Hash]bool{}, err
	}
	return KnownAt(ctx, j.repo, c)
}

// KnownAt is Known of the journal at commit.
func KnownAt(ctx context.Context, repo *git.Repo, commit git.Hash) (map[git.Hash]bool, error) {
	state, err := StateAt(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	ds, err := decisionsAt(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	known := map[git.Hash]bool{}
	for _, d := range ds {
		if !d.Proposal.IsZero() {
			known[d.Proposal] = true
		}
	}
	for _, r := range state.Refile {
		known[r.Proposal] = true
	}
	for _, p := range state.Promising {
		known[p.Proposal] = true
	}
	return known, nil
}
