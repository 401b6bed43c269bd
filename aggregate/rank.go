package aggregate

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/sandbox"
)

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
	best, bestScore, err := d.bestAlone(ctx, cand.members, tasks, scoring{cand.tree, tasks})
	if err != nil {
		return nil, err
	}
	fused, err := a.scoreTree(ctx, cand.tree, tasks)
	if err != nil {
		return nil, err
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

// gateAhead rolls a fusion of two or more proposals out on its gate's
// tasks while rank checks it against its members alone, in the same wave:
// rank mostly keeps the fusion, whose gate then finds those rollouts done
// or running rather than starting a wave of its own. stop, called once
// rank has replaced the fusion or its gate has decided (a rejection may
// need only a few tasks), cancels what is still running and waits for it
// to end; it may be called again. No decision rests on these rollouts.
func (a *Aggregator) gateAhead(ctx context.Context, c *fusion) (stop func()) {
	if len(c.members) < 2 {
		return func() {}
	}
	// Speculative: rank's own rollouts come first; those rank or the gate
	// join are raised to theirs (sandbox.Claim).
	ctx, cancel := context.WithCancel(sandbox.WithPriority(ctx, sandbox.Speculative))
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = a.scoreTree(ctx, c.tree, a.heldOut(c.members))
	}()
	return func() {
		cancel()
		<-ended
	}
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
