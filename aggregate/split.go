package aggregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// split sorts admitted submissions into the pool to fuse and the singles
// that get a gate of their own: changes to guarded (L1) files, and — so a
// fusion carries no passengers — proposals whose own train tasks do not do
// better with them applied to the current dev. A rebased proposal that no
// longer helps its own tasks is rejected here.
func (a *Aggregator) split(ctx context.Context, d *decider, dev git.Hash, ready []*Submission) (pool, solos []*Submission, err error) {
	free := 0
	for _, s := range ready {
		if !a.touchesGuarded([]*Submission{s}) {
			free++
		}
	}
	// Only a proposal with others to ride along with (or a rebased one)
	// has its own evidence re-run; all of theirs are rolled out together.
	checked := func(s *Submission) bool { return free >= 2 || s.rebased }
	var jobs []scoring
	for _, s := range ready {
		if tasks := a.ownTasks(s); len(tasks) > 0 && !a.touchesGuarded([]*Submission{s}) && checked(s) {
			if f, err := d.alone(ctx, s); err == nil {
				jobs = append(jobs, scoring{f.base, tasks}, scoring{f.tree, tasks})
			}
		}
	}
	a.warm(ctx, jobs)
	for _, s := range ready {
		if a.touchesGuarded([]*Submission{s}) {
			solos = append(solos, s)
			continue
		}
		if !checked(s) {
			pool = append(pool, s) // nothing to ride along with
			continue
		}
		before, after, known, err := a.ownEvidence(ctx, d, s)
		var conflict *MemberConflictError
		switch {
		case errors.As(err, &conflict):
			d.add(d.decision(s, ledger.ConflictDev, fmt.Sprintf("does not merge onto dev %s: conflict in %v", dev.Short(), conflict.Paths)))
		case err != nil:
			return nil, nil, err
		case s.rebased && known && after <= before:
			d.add(d.decision(s, ledger.Rejected, fmt.Sprintf("rebased onto dev %s it no longer helps its own tasks (%.2f → %.2f)", dev.Short(), before, after)))
		case known && after > before:
			pool = append(pool, s)
		default:
			solos = append(solos, s)
		}
	}
	return pool, solos, nil
}

// ownEvidence re-runs a proposal's own train tasks on dev and on dev with
// the proposal merged in. known is false when none of its tasks is known.
func (a *Aggregator) ownEvidence(ctx context.Context, d *decider, s *Submission) (before, after float64, known bool, err error) {
	tasks := a.ownTasks(s)
	f, err := d.alone(ctx, s)
	if err != nil || len(tasks) == 0 {
		return 0, 0, false, err
	}
	if before, err = a.scoreTree(ctx, f.base, tasks); err != nil {
		return 0, 0, false, err
	}
	after, err = a.scoreTree(ctx, f.tree, tasks)
	return before, after, true, err
}

// ownTasks is the train tasks a proposal's evidence names that the
// aggregator knows.
func (a *Aggregator) ownTasks(s *Submission) []eval.Task {
	var tasks []eval.Task
	for _, id := range s.Proposal.Tasks {
		if t, ok := a.Train[id]; ok {
			tasks = append(tasks, t)
		}
	}
	return tasks
}
