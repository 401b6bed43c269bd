package aggregate

import (
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// seedNoise records repeated results of some other version on the
// validation tasks, as if the run had measured an agent that flips now and
// then.
func (f *fixture) seedNoise(groups [][]float64) {
	for i, g := range groups {
		t := f.agg.Validation[i%len(f.agg.Validation)]
		tree := git.Hash(strings.Repeat("e", 39) + string(rune('a'+i/len(f.agg.Validation))))
		for r, x := range g {
			f.agg.obs.record(tree, t.ID, r, x)
		}
	}
}

// agreeing returns n groups of two equal rewards: a reproducible agent.
func agreeing(n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{float64(i % 2), float64(i % 2)}
	}
	return out
}

// rarelyFlipping is 16 groups of repeats, one of which disagreed: an agent
// whose outcome flips now and then (on six tasks, one won task alone gives
// P ≈ 0.66, two give P ≈ 0.87).
func rarelyFlipping() [][]float64 {
	g := agreeing(16)
	g[0] = []float64{1, 0}
	return g
}

// Two proposals that each fix one validation task, with a noisy agent and
// no re-rolls allowed: alone, neither has enough evidence (each is
// promising); pooled in the next round, they pass together, and both are
// committed in one merge.
func TestPromisingProposalsArePooled(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "B", "x", "y", "z", "w")
	f.lib.MaxRepeats = 1
	f.seedNoise(rarelyFlipping())
	a := f.propose("1", "rules:\nA\n", 0, 0) // no own train gain: gated alone
	res := f.round(a)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Promising || got.Gate == nil || got.Gate.P <= 0.5 {
		t.Fatalf("alone: %+v", got)
	}
	head, err := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if err != nil || len(head.State.Promising) != 1 {
		t.Fatalf("promising queue = %+v, %v", head.State.Promising, err)
	}
	b := f.propose("2", "rules:\nB\n", 0, 0)
	res = f.round(b)
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.Committed || len(got.FusedWith) != 1 {
		t.Fatalf("second: %+v", res.Decisions)
	}
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Committed || got.Round != 2 {
		t.Fatalf("first, pooled: %+v", res.Decisions)
	}
	if got := f.skill("refs/heads/descent/s/dev"); !strings.Contains(got, "A") || !strings.Contains(got, "B") {
		t.Fatalf("dev SKILL.md = %q", got)
	}
	head, _ = ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if len(head.State.Promising) != 0 {
		t.Fatalf("promising queue after the merge = %+v", head.State.Promising)
	}
}

// A promising proposal expires after promising-rounds rounds, and is
// dropped (expired) when dev moves under it in a way that conflicts.
func TestPromisingExpires(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "B", "x", "y", "z", "w")
	f.lib.MaxRepeats = 1
	f.lib.PromisingRounds = 2
	f.seedNoise(rarelyFlipping())
	a := f.propose("1", "rules:\nA\n", 0, 0)
	if got := decisionOf(t, f.round(a), "1"); got.Outcome != ledger.Promising {
		t.Fatalf("alone: %+v", got)
	}
	f.round()
	res := f.round()
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Expired || !strings.Contains(got.Reason, "promising for 2 rounds") {
		t.Fatalf("after two rounds: %+v", res.Decisions)
	}

	g := newFixture(t, "mode: none\n", "mode: a", "B", "x", "y", "z", "w")
	g.lib.MaxRepeats = 1
	g.seedNoise(rarelyFlipping())
	p := g.propose("1", "mode: a\n", 0, 0)
	if got := decisionOf(t, g.round(p), "1"); got.Outcome != ledger.Promising {
		t.Fatalf("alone: %+v", got)
	}
	// dev moves: the same line changes another way.
	dev, _ := g.repo.ResolveRef(g.ctx, "refs/heads/descent/s/dev")
	moved := g.commit(dev, "mode: other\n")
	g.moveDev(dev, moved)
	res = g.round()
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Expired || !strings.Contains(got.Reason, "conflict") {
		t.Fatalf("after a conflicting dev: %+v", res.Decisions)
	}
}
