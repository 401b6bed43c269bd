package aggregate

import (
	"context"
	"fmt"
	"math"
	"slices"

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
// alone onto dev, on a shared subset of validation (the whole split with
// the tournament), tasks whose fusion rollout errored left out. Members
// are rolled out together, first on the tasks where the fusion fell short
// of full marks (all of them with the tournament): credited full marks on
// the others, a member whose score still does not beat the fusion's
// cannot, and is done; the members that might are rolled out on the rest
// too and scored exactly. It runs while f's gate does (evaluate) and
// decides nothing: apply does, the best single going on alone and the
// others re-filed when the fusion lost.
func (a *Aggregator) rank(ctx context.Context, dev git.Hash, f *fusion) (*ranking, error) {
	tasks := a.heldOut(f.members)
	if !a.Library.Tournament && len(tasks) > semanticSubset {
		tasks = tasks[:semanticSubset]
	}
	all, err := a.perTask(ctx, f.tree, tasks)
	if err != nil {
		return nil, err
	}
	var short, full []eval.Task   // where the fusion fell short of full marks, and the rest
	var onShort, onFull []float64 // the fusion's scores on them
	for i, t := range tasks {
		switch {
		case math.IsNaN(all[i]):
		case a.Library.Tournament || all[i] < 1:
			short, onShort = append(short, t), append(onShort, all[i])
		default:
			full, onFull = append(full, t), append(onFull, all[i])
		}
	}
	fused := append(onShort, onFull...)
	r := &ranking{bestScore: -1, fused: meanOf(fused), tasks: len(tasks)}
	alone := make([]*fusion, len(f.members))
	var jobs []scoring
	for i, m := range f.members {
		if alone[i], err = a.build(ctx, dev, []*Submission{m}); err != nil {
			return nil, err
		}
		jobs = append(jobs, scoring{alone[i].tree, short})
	}
	a.warm(ctx, jobs)
	scores := make([][]float64, len(alone)) // each member's on short, then on full: the fusion's full marks until rolled out
	var exact []scoring
	for i, m := range alone {
		s, err := a.perTask(ctx, m.tree, short)
		if err != nil {
			return nil, err
		}
		scores[i] = orFused(append(s, onFull...), fused)
		if meanOf(scores[i]) > r.fused {
			exact = append(exact, scoring{m.tree, full})
		}
	}
	a.warm(ctx, exact)
	for i, m := range alone {
		if slices.ContainsFunc(exact, func(s scoring) bool { return s.tree == m.tree }) {
			rest, err := a.perTask(ctx, m.tree, full)
			if err != nil {
				return nil, err
			}
			scores[i] = orFused(append(scores[i][:len(short)], rest...), fused)
		}
		if sc := meanOf(scores[i]); sc > r.bestScore {
			r.best, r.bestScore = m, sc
		}
	}
	return r, nil
}

// orFused is a member's scores with the fusion's in place of those whose
// rollout errored.
func orFused(member, fused []float64) []float64 {
	for i, x := range member {
		if math.IsNaN(x) {
			member[i] = fused[i]
		}
	}
	return member
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
