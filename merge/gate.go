package merge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// solved is the reward at which a task counts as passed.
const solved = 0.999

// Gate compares a candidate with dev on validation, task by task, and
// decides with δ:
//
//   - binary rewards, one run per task: a task where the candidate passes
//     and dev fails is a win, the reverse a loss; P(candidate better) is
//     P(θ > 1/2) under the Beta posterior over the discordant tasks;
//   - graded rewards or repeats: P is the posterior probability that the
//     mean per-task difference of the means is positive (paired t), with
//     wins and losses the summed positive and negative differences.
//
// The candidate is accepted when P > 1−δ, its mean is not below dev's, and
// it fails at most maxRegressions of the tasks dev passes in every repeat.
func Gate(dev, cand Scores, delta float64, maxRegressions int) *ledger.Gate {
	g := &ledger.Gate{Tasks: len(dev.Rewards), Before: mean(dev.Rewards), After: mean(cand.Rewards), Delta: delta, MaxRegressions: maxRegressions}
	devRuns, candRuns := dev.runs(), cand.runs()
	binary := true
	diffs := make([]float64, len(dev.Rewards))
	for i := range dev.Rewards {
		g.Repeats = max(g.Repeats, len(devRuns[i]))
		binary = binary && len(devRuns[i]) == 1 && len(candRuns[i]) == 1 && isBinary(devRuns[i][0]) && isBinary(candRuns[i][0])
		switch d := cand.Rewards[i] - dev.Rewards[i]; {
		case d > 1e-9:
			g.Wins += d
		case d < -1e-9:
			g.Losses -= d
		}
		diffs[i] = cand.Rewards[i] - dev.Rewards[i]
		if allPass(devRuns[i]) && !allPass(candRuns[i]) {
			g.Regressions++
		}
	}
	g.Method = "beta"
	g.P = ProbBetter(g.Wins, g.Losses)
	if !binary && len(diffs) >= 2 {
		g.Method = "paired-t"
		g.P = ProbMeanPositive(diffs)
	}
	g.Accept = g.P > 1-delta && g.After >= g.Before && g.Regressions <= maxRegressions
	return g
}

func isBinary(r float64) bool { return r == 0 || r == 1 }

func allPass(runs []float64) bool {
	for _, r := range runs {
		if r < solved {
			return false
		}
	}
	return len(runs) > 0
}

// gate scores the candidate and dev on validation in parallel and applies
// the gate with δ annealed by the number of dev commits so far.
func (a *Aggregator) gate(ctx context.Context, dev git.Hash, cand *fusion, commits int) (*ledger.Gate, error) {
	devScores, candScores, err := a.scorePair(ctx, dev, cand.tree)
	if err != nil {
		return nil, err
	}
	lib := a.Library
	g := Gate(devScores, candScores, Anneal(lib.Delta, lib.DeltaFloor, lib.HalfLife, commits), lib.MaxRegressions)
	g.Tokens, g.Cost = devScores.Tokens+candScores.Tokens, devScores.Cost+candScores.Cost
	return g, nil
}

// commit records the gate's verdict on every member of a candidate and,
// when it accepted, merges them into dev as one commit (compare-and-swap).
// It returns the merge commit, or zero when the gate rejected.
func (a *Aggregator) commit(ctx context.Context, d *decider, state *ledger.State, dev git.Hash, cand *fusion, g *ledger.Gate, oracle string) (git.Hash, error) {
	var merge git.Hash
	if g.Accept {
		parents := []git.Hash{dev}
		for _, m := range cand.members {
			parents = append(parents, m.Proposal.Commit)
		}
		var err error
		merge, err = a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: cand.tree, Parents: parents, Message: mergeMessage(a.Library.Name, state.Round, cand.members, g)})
		if err != nil {
			return "", err
		}
		if err := a.Repo.SetRef(ctx, git.SetRefRequest{Ref: a.refs.Dev(), Hash: merge, OldHash: dev, Reason: fmt.Sprintf("git-descent: round %d", state.Round)}); err != nil {
			var lost *git.RefChangedError
			if errors.As(err, &lost) {
				return "", &devMovedError{err}
			}
			return "", err
		}
		state.Commits++
		if len(cand.members) > 1 {
			state.Fusion.Fused++
		}
	}
	for _, m := range cand.members {
		dec := d.decision(m, ledger.Rejected, rejectReason(g))
		if g.Accept {
			dec = d.decision(m, ledger.Committed, fmt.Sprintf("merged into dev as %s", merge.Short()))
			dec.Merge = merge
		}
		dec.Gate, dec.Oracle = g, oracle
		for _, o := range cand.members {
			if o != m {
				dec.FusedWith = append(dec.FusedWith, o.Proposal.Commit)
			}
		}
		d.add(dec)
	}
	return merge, nil
}

func rejectReason(g *ledger.Gate) string {
	if g.Regressions > g.MaxRegressions {
		return fmt.Sprintf("fails %s dev passes every time (at most %d allowed)", plural(g.Regressions, "validation task"), g.MaxRegressions)
	}
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

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
