package aggregate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// semanticSubset is how many validation tasks the semantic-conflict check
// uses when the tournament is off.
const semanticSubset = 8

// ranking is a fusion of two or more proposals scored against each of its
// members alone on the same tasks (rank).
type ranking struct {
	best      *fusion // the member that scored best alone (the first of equals)
	bestScore float64
	fused     float64 // the fusion's score
	tasks     int
}

// split says whether the best member alone beat the fusion: the members
// contradict each other (a semantic conflict the text merge cannot see).
func (r *ranking) split() bool { return r.fused < r.bestScore }

// rank scores fusion f, built on dev, against each of its members merged
// alone onto dev. Without the tournament it uses a shared subset of
// validation, and rolls the members out only on the tasks where the
// fusion fell short of full marks: on the others no member can beat it,
// so a member counts as the fusion's equal there (which, if anything,
// favours the member). With the tournament it uses the whole split and
// every member on every task, for exact statistics. It runs while f's
// gate does (evaluate) and decides nothing: apply does, the best single
// going on alone and the others re-filed when the fusion lost.
func (a *Aggregator) rank(ctx context.Context, dev git.Hash, f *fusion) (*ranking, error) {
	tasks := a.heldOut(f.members)
	if !a.Library.Tournament && len(tasks) > semanticSubset {
		tasks = tasks[:semanticSubset]
	}
	fused, err := a.perTask(ctx, f.tree, tasks)
	if err != nil {
		return nil, err
	}
	var open []eval.Task // the tasks the members are rolled out on
	for i, t := range tasks {
		if a.Library.Tournament || !math.IsNaN(fused[i]) && fused[i] < 1 {
			open = append(open, t)
		}
	}
	alone := make([]*fusion, len(f.members))
	var jobs []scoring
	for i, m := range f.members {
		if alone[i], err = a.build(ctx, dev, []*Submission{m}); err != nil {
			return nil, err
		}
		jobs = append(jobs, scoring{alone[i].tree, open})
	}
	if len(open) > 0 {
		a.warm(ctx, jobs)
	}
	r := &ranking{bestScore: -1, fused: meanOf(fused), tasks: len(tasks)}
	for _, m := range alone {
		own, err := a.perTask(ctx, m.tree, open)
		if err != nil {
			return nil, err
		}
		scores := slices.Clone(fused) // equal to the fusion where it has full marks
		for i, j := 0, 0; i < len(tasks) && j < len(open); i++ {
			if tasks[i].ID == open[j].ID {
				if !math.IsNaN(own[j]) {
					scores[i] = own[j]
				}
				j++
			}
		}
		if sc := meanOf(scores); sc > r.bestScore {
			r.best, r.bestScore = m, sc
		}
	}
	return r, nil
}

// perTask is a whole-repository tree's library's mean reward on each of
// tasks over the repeats known (one is rolled out when none is), NaN where
// its rollout errored.
func (a *Aggregator) perTask(ctx context.Context, tree git.Hash, tasks []eval.Task) ([]float64, error) {
	lib, err := a.Repo.TreeOf(ctx, tree, a.Library.Path)
	if err != nil {
		return nil, err
	}
	rs, err := a.obs.ensure(ctx, lib, tasks)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = math.NaN()
		if len(r) > 0 {
			out[i] = accept.Mean(r)
		}
	}
	return out, nil
}

// meanOf is the mean of xs but NaNs, 0 when there are none.
func meanOf(xs []float64) float64 {
	var sum float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// ranked decides what rank found of a fusion: the tournament's statistics
// take the contest, and when the fusion lost, every member but the best
// is re-filed as a semantic conflict and the best is returned to go on
// alone (nil when the fusion stands).
func (a *Aggregator) ranked(d *decider, state *ledger.State, r *ranking, members []*Submission) *fusion {
	if a.Library.Tournament {
		recordTournament(&state.Fusion, r.fused-r.bestScore)
	}
	if !r.split() {
		return nil
	}
	winner := r.best.members[0]
	for _, m := range members {
		if m != winner {
			d.add(d.decision(m, ledger.Semantic, fmt.Sprintf("merges with %s, but together they score %.2f on %d validation tasks against %.2f for %s alone",
				winner.Proposal.Commit.Short(), r.fused, r.tasks, r.bestScore, winner.Proposal.Commit.Short())))
		}
	}
	return r.best
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
