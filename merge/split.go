package merge

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
	for _, s := range ready {
		if a.touchesGuarded([]*Submission{s}) {
			solos = append(solos, s)
			continue
		}
		if free < 2 && !s.rebased {
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
	var tasks []eval.Task
	for _, id := range s.Proposal.Tasks {
		if t, ok := a.Train[id]; ok {
			tasks = append(tasks, t)
		}
	}
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

// scoreTree is the mean reward of a whole-repository tree's library (or a
// commit's) on tasks.
func (a *Aggregator) scoreTree(ctx context.Context, tree git.Hash, tasks []eval.Task) (float64, error) {
	lib, err := a.Repo.TreeOf(ctx, tree, a.Library.Path)
	if err != nil {
		return 0, err
	}
	return a.obs.meanScore(ctx, lib, tasks)
}

// semanticSubset is how many validation tasks the semantic-conflict check
// uses when the tournament is off.
const semanticSubset = 8

// rank scores a fusion of two or more proposals against each of its members
// alone. If the best single does better than the fusion, the members
// contradict each other (a semantic conflict the text merge cannot see):
// the best single goes on alone and the others are re-filed. Without the
// tournament the check uses a shared subset of validation; with it, the
// whole split, and the fusion statistics are kept.
func (a *Aggregator) rank(ctx context.Context, d *decider, state *ledger.State, cand *fusion) (*fusion, error) {
	if len(cand.members) < 2 {
		return cand, nil
	}
	tasks := a.heldOut(cand.members)
	if !a.Library.Tournament && len(tasks) > semanticSubset {
		tasks = tasks[:semanticSubset]
	}
	fused, err := a.scoreTree(ctx, cand.tree, tasks)
	if err != nil {
		return nil, err
	}
	var best *fusion
	bestScore := -1.0
	for _, m := range cand.members {
		f, err := d.alone(ctx, m)
		if err != nil {
			return nil, err
		}
		sc, err := a.scoreTree(ctx, f.tree, tasks)
		if err != nil {
			return nil, err
		}
		if sc > bestScore {
			best, bestScore = f, sc
		}
	}
	gain := fused - bestScore
	if a.Library.Tournament {
		recordTournament(&state.Fusion, gain)
	}
	if gain >= 0 {
		return cand, nil
	}
	winner := best.members[0]
	for _, m := range cand.members {
		if m != winner {
			d.add(d.decision(m, ledger.Semantic, fmt.Sprintf("merges with %s, but together they score %.2f on %d validation tasks against %.2f for %s alone",
				winner.Proposal.Commit.Short(), fused, len(tasks), bestScore, winner.Proposal.Commit.Short())))
		}
	}
	return best, nil
}

// recordTournament adds one contest to the fusion statistics.
func recordTournament(s *ledger.FusionStats, gain float64) {
	s.Contested++
	s.GainSum += gain
	switch {
	case gain > 1e-9:
		s.FusedWins++
	case gain < -1e-9:
		s.SingleWins++
		s.LossCount++
		s.LossSum += gain
		s.WorstLoss = min(s.WorstLoss, gain)
	default:
		s.Ties++
	}
}
