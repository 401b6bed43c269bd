package accept

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// tape is a Source replaying recorded outcomes: each version's rewards
// on each task, in the order further rollouts return them, the first
// knownDev of dev's already known (earlier gates).
type tape struct {
	cand, dev [][]float64
	knownDev  []int

	mu   sync.Mutex
	next [2][]int
	runs int
}

func newTape(cand, dev [][]float64, knownDev []int) *tape {
	t := &tape{cand: cand, dev: dev, knownDev: knownDev}
	t.next[0] = append([]int(nil), knownDev...)
	t.next[1] = make([]int, len(cand))
	return t
}

func (t *tape) Known(cand bool, i int) []float64 {
	if cand {
		return nil
	}
	return append([]float64(nil), t.dev[i][:t.knownDev[i]]...)
}

func (t *tape) Roll(ctx context.Context, cand bool, i int) (float64, bool, Spent, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, seq := 0, t.dev[i]
	if cand {
		v, seq = 1, t.cand[i]
	}
	k := t.next[v][i]
	t.next[v][i]++
	t.runs++
	if k >= len(seq) {
		return 0, false, Spent{}, nil // ran out of tape: counts as errored
	}
	return seq[k], true, Spent{Tokens: 1}, nil
}

// recorded makes a random comparison: n tasks, each with a true outcome
// per version (the candidate changing a few), rollouts flipping with rate
// f, graded ones noisy around a true mean.
func recorded(rng *rand.Rand, n int, f float64, graded bool) (cand, dev [][]float64, known []int) {
	draw := func(truth float64) []float64 {
		seq := make([]float64, 8)
		for k := range seq {
			switch {
			case graded:
				seq[k] = min(1, max(0, float64(int((truth+rng.NormFloat64()*f)*4+0.5))/4))
			case rng.Float64() < f:
				seq[k] = 1 - truth
			default:
				seq[k] = truth
			}
		}
		return seq
	}
	for i := 0; i < n; i++ {
		tv := float64(rng.IntN(2))
		if graded {
			tv = float64(rng.IntN(5)) / 4
		}
		tc := tv
		if rng.Float64() < 0.15 {
			tc = float64(rng.IntN(2))
			if graded {
				tc = float64(rng.IntN(5)) / 4
			}
		}
		cand, dev = append(cand, draw(tc)), append(dev, draw(tv))
		known = append(known, rng.IntN(3))
	}
	return cand, dev, known
}

func pool(rng *rand.Rand, n int, f float64) [][]float64 {
	var out [][]float64
	for i := 0; i < n; i++ {
		t := float64(rng.IntN(2))
		g := []float64{t, t}
		if rng.Float64() < 2*f*(1-f) {
			g[1] = 1 - t
		}
		out = append(out, g)
	}
	return out
}

// Deciding early changes no decision: every recorded comparison gets the
// same verdict (accept, promising, or neither) whether the gate stops as
// soon as no outcome could change it or evaluates every task.
func TestGateDecidesEarlyIdentically(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	saved, accepted, cases := 0, 0, 0
	for c := 0; c < 400; c++ {
		n := 3 + rng.IntN(22)
		f := []float64{0, 0, 0.05, 0.2, 0.5}[rng.IntN(5)]
		graded := c%4 == 3
		cand, dev, known := recorded(rng, n, f, graded)
		spec := Spec{Delta: 0.2, MaxRegressions: rng.IntN(2), MinRepeats: 1 + rng.IntN(2), MaxRepeats: 4,
			Pool: pool(rng, rng.IntN(20), f), Window: 1 + rng.IntN(4), Mean: c%7 == 6}
		ids := make([]string, n)
		devKnown := make([][]float64, n)
		recent := make([][]float64, n)
		for i := range ids {
			ids[i] = fmt.Sprint("t", i)
			devKnown[i] = dev[i][:known[i]]
			recent[i] = append(append([]float64(nil), devKnown[i]...), cand[i][0])
		}
		var est []time.Duration // some gates know how long each task takes
		if c%3 != 0 {
			for range n {
				est = append(est, time.Duration(rng.IntN(4))*time.Second)
			}
		}
		spec.Estimates = est
		order := Order(devKnown, recent, est)
		early, err := Run(context.Background(), spec, ids, order, newTape(cand, dev, known))
		if err != nil {
			t.Fatal(err)
		}
		spec.Full = true
		full, err := Run(context.Background(), spec, ids, order, newTape(cand, dev, known))
		if err != nil {
			t.Fatal(err)
		}
		if early.Accept != full.Accept || Promising(early) != Promising(full) {
			t.Fatalf("case %d (n=%d f=%v graded=%v): early %+v, full %+v", c, n, f, graded, early, full)
		}
		saved += early.Skipped
		cases++
		if full.Accept {
			accepted++
		}
	}
	if saved == 0 || accepted == 0 || accepted == cases {
		t.Fatalf("the replay did not exercise the gate: %d rollouts saved, %d of %d accepted", saved, accepted, cases)
	}
	t.Logf("%d cases, %d accepted, %d candidate rollouts saved by deciding early", cases, accepted, saved)
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("t", i)
	}
	return out
}

func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// steady is a tape of a reproducible agent: each task's rewards are its
// first value forever.
func steady(first []float64) [][]float64 {
	out := make([][]float64, len(first))
	for i, v := range first {
		out[i] = repeat(v, 8)
	}
	return out
}

// A reproducible agent: a candidate that fixes one task and breaks none is
// accepted once the gate has re-rolled that task (both versions) and seen
// the fix hold, at the default δ and at the floor alike.
func TestGateAcceptsOneConfirmedTask(t *testing.T) {
	devFirst := []float64{0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0}
	candFirst := append([]float64{1}, devFirst[1:]...)
	run := func(delta float64) *tapeResult {
		tp := newTape(steady(candFirst), steady(devFirst), allKnown(18))
		spec := Spec{Delta: delta, MinRepeats: 1, MaxRepeats: 4, Pool: agreeing(12), Window: 2}
		g, err := Run(context.Background(), spec, ids(18), inOrder(18), tp)
		if err != nil {
			t.Fatal(err)
		}
		return &tapeResult{g.Accept, g.Rerolls, g.P, tp.runs}
	}
	for _, delta := range []float64{0.2, 0.05} {
		r := run(delta)
		if !r.accept || r.rerolls == 0 || r.rerolls > 4 {
			t.Errorf("δ %.2f: %+v, want accepted after re-rolling the won task", delta, r)
		}
		if r.runs > 18+4 {
			t.Errorf("δ %.2f: %d rollouts, want the candidate's 18 and a few re-rolls", delta, r.runs)
		}
	}
}

type tapeResult struct {
	accept  bool
	rerolls int
	p       float64
	runs    int
}

// allKnown says dev's first result on each of n tasks is known already.
func allKnown(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// No frozen luck: dev passed a task by luck once (cached), the candidate
// fails it as dev truly does, and fixes another. Without re-rolling, the
// lucky pass is a regression that blocks the candidate (and every later
// one); re-rolled, dev's luck shows and the real gain is accepted.
func TestGateRerollsLuckyDev(t *testing.T) {
	dev := [][]float64{{0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}}
	cand := [][]float64{{1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}}
	mixed := append(agreeing(10), []float64{1, 0}, []float64{0, 1}) // the agent does flip now and then
	spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Pool: mixed, Window: 2}
	g, err := Run(context.Background(), spec, ids(6), inOrder(6), newTape(cand, dev, []int{1, 1, 1, 1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Accept || g.Rerolls == 0 || g.Regressions != 0 {
		t.Fatalf("gate = %+v, want accepted after re-rolling the lucky task", g)
	}
	spec.MaxRepeats = 1 // no re-rolls: the luck stays frozen
	g, err = Run(context.Background(), spec, ids(6), inOrder(6), newTape(cand, dev, []int{1, 1, 1, 1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if g.Accept {
		t.Fatalf("without re-rolls the lucky dev should block: %+v", g)
	}
}

// A coin-flip agent practically never gets a commit, however lucky a
// candidate looks on its first samples.
func TestGateRefusesCoinFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	accepted, pooled := 0, 0
	const gates = 300
	for c := 0; c < gates; c++ {
		cand, dev := make([][]float64, 18), make([][]float64, 18)
		for i := range cand {
			cand[i], dev[i] = make([]float64, 8), make([]float64, 8)
			for k := 0; k < 8; k++ {
				cand[i][k], dev[i][k] = float64(rng.IntN(2)), float64(rng.IntN(2))
			}
		}
		spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Pool: pool(rng, 12, 0.5), Window: 4}
		g, err := Run(context.Background(), spec, ids(18), inOrder(18), newTape(cand, dev, allKnown(18)))
		if err != nil {
			t.Fatal(err)
		}
		if g.Accept {
			accepted++
		}
		if Promising(g) {
			pooled++
		}
	}
	if accepted > gates/50 {
		t.Fatalf("%d of %d coin-flip candidates accepted", accepted, gates)
	}
	t.Logf("coin flips: %d of %d accepted, %d promising", accepted, gates, pooled)
}

// The baseline gate accepts any rise of the mean, and a one-sample fluke
// with it.
func TestMeanGate(t *testing.T) {
	spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Mean: true, Window: 1}
	g, err := Run(context.Background(), spec, ids(3), inOrder(3), newTape(steady([]float64{1, 0, 1}), steady([]float64{0, 0, 1}), []int{0, 0, 0}))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Accept || g.Method != "mean" || g.Rerolls != 0 {
		t.Fatalf("gate = %+v", g)
	}
	g, err = Run(context.Background(), spec, ids(3), inOrder(3), newTape(steady([]float64{1, 0, 0}), steady([]float64{0, 0, 1}), []int{0, 0, 0}))
	if err != nil {
		t.Fatal(err)
	}
	if g.Accept {
		t.Fatalf("a tie accepted: %+v", g)
	}
}

// Tasks dev fails come first (only they can show a gain), and within each
// group the ones recent versions disagree on.
func TestGateOrder(t *testing.T) {
	dev := [][]float64{{1}, {0}, {1}, {0}, nil}
	recent := [][]float64{{1, 1}, {0, 0}, {1, 0}, {0, 1}, nil}
	got := fmt.Sprint(Order(dev, recent, nil))
	if want := "[3 1 4 2 0]"; got != want {
		t.Fatalf("order = %s, want %s", got, want)
	}
	// Among equals the longest go first; the groups stay as they were.
	dev = [][]float64{{0}, {0}, {0}, {1}, {1}}
	recent = [][]float64{{0}, {0}, {0}, {1}, {1}}
	est := []time.Duration{time.Second, 3 * time.Second, 0, time.Second, 9 * time.Second}
	if got, want := fmt.Sprint(Order(dev, recent, est)), "[1 0 2 4 3]"; got != want {
		t.Fatalf("order with estimates = %s, want %s", got, want)
	}
}

// A candidate that can fix nothing dev fails is rejected after those
// tasks alone: the ones dev passes are never rolled out.
func TestGateStopsWhenNoGainIsLeft(t *testing.T) {
	devFirst := []float64{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}
	tp := newTape(steady(devFirst), steady(devFirst), allKnown(10))
	spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Pool: agreeing(12), Window: 1}
	g, err := Run(context.Background(), spec, ids(10), Order(steady(devFirst), steady(devFirst), nil), tp)
	if err != nil {
		t.Fatal(err)
	}
	if g.Accept || g.Skipped != 8 || tp.runs != 2 {
		t.Fatalf("gate = %+v after %d rollouts, want rejected after the 2 tasks dev fails", g, tp.runs)
	}
}

// A candidate under which the agent cannot run on a task dev ran (it hangs,
// or crashes) is not accepted, whatever it gains elsewhere: the task it
// would have lost must not drop out of the comparison.
func TestGateRefusesWhenTheCandidateErrors(t *testing.T) {
	dev := steady([]float64{0, 1, 1, 1, 0, 1})
	cand := steady([]float64{1, 1, 1, 1, 0, 1})
	cand[2] = nil // its rollouts of task 2 error
	spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Pool: agreeing(12), Window: 2}
	g, err := Run(context.Background(), spec, ids(6), inOrder(6), newTape(cand, dev, allKnown(6)))
	if err != nil {
		t.Fatal(err)
	}
	if g.Accept || g.Errored != 1 || !strings.Contains(RejectReason(g), "could not run with it on 1 validation task") {
		t.Fatalf("gate = %+v (%s)", g, RejectReason(g))
	}
	cand[2] = repeat(1, 8)
	g, _ = Run(context.Background(), spec, ids(6), inOrder(6), newTape(cand, dev, allKnown(6)))
	if !g.Accept {
		t.Fatalf("without the error it passes: %+v", g)
	}
}
