package aggregate

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// pool pools promising proposals: those of this round (d.promising) and
// those waiting from earlier rounds. A waiting one expires after
// Library.PromisingRounds rounds, and is dropped when dev moved under it in
// a way that conflicts or already makes its change, or when it no longer
// does better alone on the current dev on a task it won (so a pooled
// candidate carries no passengers). The rest are fused, likeliest first,
// and when two or more merge together the fusion is gated on its own: if
// accepted it is committed and all its members with it; if not, they keep
// waiting. It returns the proposals still waiting.
func (a *Aggregator) pool(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, waiting []ledger.Pending) ([]ledger.Pending, error) {
	var live []ledger.Pending
	var subs []*Submission
	all := append(append([]ledger.Pending(nil), waiting...), d.promising...)
	for i, p := range all {
		s, err := a.submission(ctx, p.Proposal)
		if err == nil {
			var keep bool
			keep, err = a.stillPromising(ctx, d, state, res.Dev, s, p)
			if err == nil && keep {
				live = append(live, p)
				subs = append(subs, s)
			}
		}
		if err != nil {
			return append(live, all[i:]...), err // those not yet checked wait on
		}
	}
	if len(subs) < 2 {
		return live, nil
	}
	order := make([]int, len(subs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return live[order[x]].P > live[order[y]].P })
	cur, err := a.build(ctx, res.Dev, nil)
	if err != nil {
		return live, err
	}
	for _, i := range order {
		if len(cur.members) > 0 && !a.roomFor(cur.members, subs[i]) {
			continue
		}
		next, err := a.extend(ctx, cur, subs[i])
		var conflict *MemberConflictError
		switch {
		case errors.As(err, &conflict):
			continue // it may pool with others later
		case err != nil:
			return live, err
		}
		cur = next
	}
	if len(cur.members) < 2 || d.gated[cur.tree] {
		return live, nil // nothing to pool, or gated as a fusion this round already
	}
	g, err := a.gate(ctx, res.Dev, cur, state.Commits)
	if err != nil {
		return live, err
	}
	res.Verdicts = append(res.Verdicts, Verdict{Members: cur.members, Gate: g, Pooled: true})
	if !g.Accept {
		return live, nil
	}
	var rest []ledger.Pending
	for _, p := range live {
		if !containsCommit(cur.members, p.Proposal) {
			rest = append(rest, p)
		}
	}
	// Recorded with the commit: the pooled ones wait no more.
	saved := d.save()
	d.waiting, d.promising = rest, nil
	merge, err := a.commit(context.WithoutCancel(ctx), d, state, res.Dev, cur, g, "")
	if err != nil {
		d.restore(saved)
		return live, err
	}
	res.Verdicts[len(res.Verdicts)-1].Merge = merge
	res.Dev = merge
	return rest, nil
}

// stillPromising checks a promising proposal against the current dev and
// records a decision when it is dropped.
func (a *Aggregator) stillPromising(ctx context.Context, d *decider, state *ledger.State, dev git.Hash, s *Submission, p ledger.Pending) (bool, error) {
	if age := state.Round - p.Since; age >= a.Library.PromisingRounds {
		d.add(d.decision(s, ledger.Expired, fmt.Sprintf("promising for %d rounds without enough evidence to commit (promising-rounds = %d)", age, a.Library.PromisingRounds)))
		return false, nil
	}
	f, err := a.build(ctx, dev, []*Submission{s})
	var conflict *MemberConflictError
	switch {
	case errors.As(err, &conflict):
		d.add(d.decision(s, ledger.Expired, fmt.Sprintf("promising, but dev %s changed under it: conflict in %v", dev.Short(), conflict.Paths)))
		return false, nil
	case err != nil:
		return false, err
	case f.tree == f.base:
		d.add(d.decision(s, ledger.Duplicate, "promising, and dev now makes this change"))
		return false, nil
	}
	won := map[string]bool{}
	for _, id := range p.Won {
		won[id] = true
	}
	var tasks []eval.Task
	for _, t := range a.Validation {
		if won[t.ID] {
			tasks = append(tasks, t)
		}
	}
	devLib, err := a.Repo.TreeOf(ctx, f.base, a.Library.Path)
	if err != nil {
		return false, err
	}
	candLib, err := a.Repo.TreeOf(ctx, f.tree, a.Library.Path)
	if err != nil {
		return false, err
	}
	devRuns, err := a.obs.ensure(ctx, devLib, tasks)
	if err != nil {
		return false, err
	}
	candRuns, err := a.obs.ensure(ctx, candLib, tasks)
	if err != nil {
		return false, err
	}
	for i := range tasks {
		if len(devRuns[i]) > 0 && len(candRuns[i]) > 0 && accept.Mean(candRuns[i]) > accept.Mean(devRuns[i])+1e-9 {
			return true, nil
		}
	}
	d.add(d.decision(s, ledger.Expired, fmt.Sprintf("promising, but merged onto dev %s it no longer does better on the tasks it won", dev.Short())))
	return false, nil
}

// submission loads a proposal for the aggregator, with the library files it
// changes.
func (a *Aggregator) submission(ctx context.Context, commit git.Hash) (*Submission, error) {
	p, err := ledger.ReadProposal(ctx, a.Repo, commit)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", commit.Short(), err)
	}
	paths, err := a.Repo.ChangedPaths(ctx, p.Base, p.Commit)
	if err != nil {
		return nil, err
	}
	s := &Submission{Proposal: p}
	for _, path := range paths {
		if rel, ok := a.Library.Rel(path); ok {
			s.Paths = append(s.Paths, rel)
		}
	}
	return s, nil
}

func containsCommit(ss []*Submission, c git.Hash) bool {
	for _, s := range ss {
		if s.Proposal.Commit == c {
			return true
		}
	}
	return false
}

// Load reads the proposal commit holds as a submission, for a round: a
// proposal that arrived from elsewhere (a remote worker's queue).
func (a *Aggregator) Load(ctx context.Context, commit git.Hash) (*Submission, error) {
	return a.submission(ctx, commit)
}

// Forget drops what the aggregator remembers of the journal's decisions:
// call it when the journal was replaced under it (another aggregator's,
// adopted from a remote), so that the next round reads them afresh and
// decides what the replaced journal had and the new one has not.
func (a *Aggregator) Forget() {
	a.jmu.Lock()
	defer a.jmu.Unlock()
	a.decided = nil
}
