package merge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// Gate compares a candidate with dev on validation, task by task. A task
// where the candidate scores higher is a win, lower a loss (graded rewards
// count the size of the difference); ties carry no evidence. The candidate
// is accepted when P(candidate better) under the Beta posterior over
// discordant tasks exceeds 1-δ and its mean does not fall below dev's.
func Gate(dev, cand []float64, delta float64) *ledger.Gate {
	g := &ledger.Gate{Tasks: len(dev), Before: mean(dev), After: mean(cand), Delta: delta}
	for i := range dev {
		switch d := cand[i] - dev[i]; {
		case d > 1e-9:
			g.Wins += d
		case d < -1e-9:
			g.Losses -= d
		}
	}
	g.P = ProbBetter(g.Wins, g.Losses)
	g.Accept = g.P > 1-delta && g.After >= g.Before
	return g
}

// gate scores the candidate and dev on validation in parallel and applies
// the gate with δ annealed by the number of dev commits so far.
func (a *Aggregator) gate(ctx context.Context, dev git.Hash, cand *fusion, commits int) (*ledger.Gate, error) {
	devScores, candScores, err := a.scorePair(ctx, dev, cand.tree)
	if err != nil {
		return nil, err
	}
	lib := a.Library
	g := Gate(devScores.Rewards, candScores.Rewards, Anneal(lib.Delta, lib.DeltaFloor, lib.HalfLife, commits))
	g.Tokens, g.Cost = devScores.Tokens+candScores.Tokens, devScores.Cost+candScores.Cost
	return g, nil
}

// commit records the gate's verdict on every member of the candidate and,
// when it accepted, merges them into dev as one commit (compare-and-swap).
func (a *Aggregator) commit(ctx context.Context, d *decider, state *ledger.State, dev git.Hash, cand *fusion, res *RoundResult) error {
	g := res.Gate
	if g == nil {
		return nil
	}
	var merge git.Hash
	if g.Accept {
		parents := []git.Hash{dev}
		for _, m := range cand.members {
			parents = append(parents, m.Proposal.Commit)
		}
		var err error
		merge, err = a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: cand.tree, Parents: parents, Message: mergeMessage(a.Library.Name, state.Round, cand.members, g)})
		if err != nil {
			return err
		}
		if err := a.Repo.SetRef(ctx, git.SetRefRequest{Ref: a.refs.Dev(), Hash: merge, OldHash: dev, Reason: fmt.Sprintf("git-descent: round %d", state.Round)}); err != nil {
			var lost *git.RefChangedError
			if errors.As(err, &lost) {
				return &devMovedError{err}
			}
			return err
		}
		state.Commits++
		res.Dev, res.Merge = merge, merge
	}
	for _, m := range cand.members {
		dec := d.decision(m, ledger.Rejected, rejectReason(g))
		if g.Accept {
			dec = d.decision(m, ledger.Committed, fmt.Sprintf("merged into dev as %s", merge.Short()))
			dec.Merge = merge
		}
		dec.Gate = g
		for _, o := range cand.members {
			if o != m {
				dec.FusedWith = append(dec.FusedWith, o.Proposal.Commit)
			}
		}
		d.add(dec)
	}
	return nil
}

func rejectReason(g *ledger.Gate) string {
	if g.After < g.Before {
		return fmt.Sprintf("validation fell from %.2f to %.2f", g.Before, g.After)
	}
	if g.Wins == 0 && g.Losses == 0 {
		return "no validation task changed outcome"
	}
	return fmt.Sprintf("P(better) = %.2f is not above %.2f", g.P, 1-g.Delta)
}

// scorePair scores dev and a candidate tree on validation concurrently.
func (a *Aggregator) scorePair(ctx context.Context, dev git.Hash, candTree git.Hash) (devScores, candScores Scores, err error) {
	devLib, err := a.Repo.TreeOf(ctx, dev, a.Library.Path)
	if err != nil {
		return devScores, candScores, err
	}
	candLib, err := a.Repo.TreeOf(ctx, candTree, a.Library.Path)
	if err != nil {
		return devScores, candScores, err
	}
	var devErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		devScores, devErr = a.Scorer.Score(ctx, devLib, a.Validation)
	}()
	candScores, err = a.Scorer.Score(ctx, candLib, a.Validation)
	<-done
	if err == nil {
		err = devErr
	}
	return devScores, candScores, err
}

// mergeMessage is the dev merge commit's message: what was merged and the
// gate's numbers, as trailers.
func mergeMessage(lib string, round int, members []*Submission, g *ledger.Gate) string {
	var b strings.Builder
	noun := "proposal"
	if len(members) > 1 {
		noun = "proposals"
	}
	fmt.Fprintf(&b, "descent(%s): merge %d %s from round %d\n\n", lib, len(members), noun, round)
	for _, m := range members {
		fmt.Fprintf(&b, "- %s w%s: %s\n", m.Proposal.Commit.Short(), m.Proposal.Worker, m.Proposal.Subject)
	}
	fmt.Fprintf(&b, "\nDescent-Library: %s\n", lib)
	fmt.Fprintf(&b, "Descent-Round: %d\n", round)
	fmt.Fprintf(&b, "Descent-Validation-Before: %.4f\n", g.Before)
	fmt.Fprintf(&b, "Descent-Validation-After: %.4f\n", g.After)
	fmt.Fprintf(&b, "Descent-Validation-Tasks: %d\n", g.Tasks)
	fmt.Fprintf(&b, "Descent-P: %.4f\n", g.P)
	fmt.Fprintf(&b, "Descent-Delta: %.4f\n", g.Delta)
	return b.String()
}
