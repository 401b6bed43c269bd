package aggregate

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/sandbox"
)

// trackVersions makes f's scorer hold each rollout a moment and count the
// library versions rolled out at once; peak returns the most seen since
// the last reset.
func trackVersions(f *fixture) (peak func() int, reset func()) {
	var mu sync.Mutex
	active, most := map[git.Hash]int{}, 0
	f.agg.Scorer = scorerFunc(func(ctx context.Context, tree git.Hash, task eval.Task, repeat int) (Outcome, error) {
		mu.Lock()
		active[tree]++
		most = max(most, len(active))
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		defer func() {
			mu.Lock()
			if active[tree]--; active[tree] == 0 {
				delete(active, tree)
			}
			mu.Unlock()
		}()
		return f.scorer.Rollout(ctx, tree, task, repeat)
	})
	f.agg.obs = newObservations(f.agg.Scorer)
	peak = func() int {
		mu.Lock()
		defer mu.Unlock()
		return most
	}
	reset = func() {
		mu.Lock()
		defer mu.Unlock()
		most = 0
	}
	return peak, reset
}

// The semantic-conflict check rolls its members out alone together, in
// one wave, and only on the tasks where the fusion fell short: on the
// others no member can do better.
func TestRankRollsOutInOneWave(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C")
	peak, reset := trackVersions(f)
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 1)
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 1)
	dev, err := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	if err != nil {
		t.Fatal(err)
	}
	subs := []*Submission{a, b}
	d, err := newDecider(f.ctx, f.agg, 1, dev, subs, nil)
	if err != nil {
		t.Fatal(err)
	}
	cand, alone, err := f.agg.fuse(f.ctx, d, dev, subs)
	if err != nil || len(cand.members) != 2 || len(alone) != 0 {
		t.Fatalf("fuse = %+v, %v, %v; want both fused", cand, alone, err)
	}
	reset()
	r, err := f.agg.rank(f.ctx, dev, cand)
	if err != nil || r.split() || r.fused != 2.0/3 || r.bestScore != 2.0/3 {
		t.Fatalf("rank = %+v, %v; want the fusion kept, both scoring 2/3 (a member counted as the fusion's equal where it has full marks)", r, err)
	}
	if got := peak(); got != 2 {
		t.Errorf("rank rolled out at most %d versions at once after the fusion, want both members (2) together", got)
	}
	for _, s := range subs {
		tree, err := f.repo.TreeOf(f.ctx, s.Proposal.Commit, "skills/s")
		if err != nil {
			t.Fatal(err)
		}
		if got := f.scorer.rolled[tree]; !slices.Equal(got, []string{"c"}) {
			t.Errorf("w%s alone was rolled out on %v, want only c, the task the fusion failed", s.Proposal.Worker, got)
		}
	}
}

// While a cross-fitted gate runs, the candidate is rolled out on the tasks
// the gate leaves out (its members' own), which dev's score needs once it
// is committed.
func TestGateWarmsTheRest(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C")
	f.seedNoise(agreeing(12))
	f.agg.CrossFit = true
	a := f.propose("1", "top\nrules:\nA\nB\nend\n", 0, 1, "A")
	own := a.Proposal.Tasks[0]
	f.agg.Validation = append(f.agg.Validation, f.agg.Train[own])
	cand, err := f.repo.TreeOf(f.ctx, a.Proposal.Commit, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	// The gate's rollouts of the candidate wait until its own task's has
	// started (or, should it never, a while).
	started := make(chan struct{})
	var once sync.Once
	var overlapped atomic.Bool
	f.agg.Scorer = scorerFunc(func(ctx context.Context, tree git.Hash, task eval.Task, repeat int) (Outcome, error) {
		if tree == cand && task.ID == own {
			once.Do(func() { close(started) })
		} else if tree == cand {
			select {
			case <-started:
				overlapped.Store(true)
			case <-time.After(10 * time.Second):
			}
		}
		return f.scorer.Rollout(ctx, tree, task, repeat)
	})
	f.agg.obs = newObservations(f.agg.Scorer)
	res := f.round(a)
	if got := outcomes(res); got["1"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want w1 committed", got)
	}
	if !overlapped.Load() {
		t.Error("the candidate's own task was not rolled out while its gate ran")
	}
	if got := res.DevScore; abs(got-0.75) > 1e-9 {
		t.Errorf("dev's validation score = %v, want 0.75 (C failing)", got)
	}
}

// While a candidate's gate runs, a proposal that has arrived for the next
// round is merged onto it and rolled out on its own tasks, so that the
// next round, which checks it on the dev the candidate became, reads that
// evidence from the cache instead of rolling it out again.
func TestGateSpeculatesTheNextSplit(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C")
	f.seedNoise(agreeing(12))
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 1, "B")
	f.agg.Upcoming = func() []*Submission { return []*Submission{b} }
	defer f.agg.StopSpeculating()
	var mu sync.Mutex
	priority := map[git.Hash]map[string]sandbox.Priority{} // of each version's rollouts, by task
	f.agg.Scorer = scorerFunc(func(ctx context.Context, tree git.Hash, task eval.Task, repeat int) (Outcome, error) {
		mu.Lock()
		if priority[tree] == nil {
			priority[tree] = map[string]sandbox.Priority{}
		}
		priority[tree][task.ID] = sandbox.PriorityOf(ctx)
		mu.Unlock()
		return f.scorer.Rollout(ctx, tree, task, repeat)
	})
	f.agg.obs = newObservations(f.agg.Scorer)
	res := f.round(a)
	if got := outcomes(res); got["1"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want w1 committed", got)
	}
	f.agg.spec.wg.Wait() // the speculation runs on past its round; let it end
	next := f.ontoDev(b)
	own := b.Proposal.Tasks[0]
	rolled := func() int {
		f.scorer.mu.Lock()
		defer f.scorer.mu.Unlock()
		return len(slices.DeleteFunc(slices.Clone(f.scorer.rolled[next]), func(id string) bool { return id != own }))
	}
	if got := rolled(); got != 1 {
		t.Fatalf("w2's merge onto the committed candidate was rolled out on its own task %d times during w1's round, want once", got)
	}
	// The speculation waits for slots behind everything else; the gate
	// ahead of everything.
	cand, err := f.repo.TreeOf(f.ctx, a.Proposal.Commit, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	if p := priority[next][own]; p != sandbox.Speculative {
		t.Errorf("the speculative rollout ran at priority %d, want Speculative (%d)", p, sandbox.Speculative)
	}
	if p := priority[cand]["a"]; p != sandbox.Critical {
		t.Errorf("the gate's rollout ran at priority %d, want Critical (%d)", p, sandbox.Critical)
	}
	f.agg.Upcoming = nil
	res = f.round(b)
	if got := outcomes(res); got["2"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want w2 committed", got)
	}
	if got := rolled(); got != 1 {
		t.Errorf("the next round rolled w2's merge out on its own task again (%d times in all), want the speculated rollout read from the cache", got)
	}
}

// While rank checks a fusion against its members alone, its gate runs:
// the fusion is rolled out on the tasks only its gate uses in the same
// wave.
func TestFusionGatedWhileRanked(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J")
	f.seedNoise(agreeing(12))
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 1, "B")
	alone := map[git.Hash]bool{}
	for _, s := range []*Submission{a, b} {
		tree, err := f.repo.TreeOf(f.ctx, s.Proposal.Commit, "skills/s")
		if err != nil {
			t.Fatal(err)
		}
		alone[tree] = true
	}
	dev, err := f.repo.TreeOf(f.ctx, f.start, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	gateOnly := map[string]bool{"i": true, "j": true} // validation beyond rank's subset of 8
	// The members' rollouts wait until a gate-only rollout of the fusion
	// has started (or, should none before rank ends, a while).
	started := make(chan struct{})
	var once sync.Once
	var overlapped atomic.Bool
	var mu sync.Mutex
	fused := map[string]int{} // the fusion's gate-only rollouts, by task/repeat
	f.agg.Scorer = scorerFunc(func(ctx context.Context, tree git.Hash, task eval.Task, repeat int) (Outcome, error) {
		switch {
		case alone[tree] && f.agg.Train[task.ID].ID == "": // rank's, not split's
			select {
			case <-started:
				overlapped.Store(true)
			case <-time.After(3 * time.Second):
			}
		case tree != dev && gateOnly[task.ID]:
			once.Do(func() { close(started) })
			mu.Lock()
			fused[task.ID+"/"+strconv.Itoa(repeat)]++
			mu.Unlock()
			// Still running when the gate starts: the gate must join it.
			time.Sleep(200 * time.Millisecond)
		}
		return f.scorer.Rollout(ctx, tree, task, repeat)
	})
	f.agg.obs = newObservations(f.agg.Scorer)
	res := f.round(a, b)
	if got := outcomes(res); got["1"] != ledger.Committed || got["2"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want both committed", got)
	}
	if !overlapped.Load() {
		t.Error("the fusion's gate-only tasks were not rolled out while rank rolled its members out alone")
	}
	mu.Lock()
	defer mu.Unlock()
	// The gate asks for the repeats rolled out ahead of it (the rollout
	// cache, not this scorer, shares one in flight), not fresh ones.
	for k := range fused {
		if !strings.HasSuffix(k, "/0") {
			t.Errorf("the fusion's gate-only rollouts (task/repeat: times) = %v, want repeat 0 only: its gate asks for those started ahead of it", fused)
			break
		}
	}
}

// A proposal that arrives while a candidate's gate runs (Arrived) is
// speculated onto the candidate too, as those already waiting are.
func TestArrivalDuringAGateIsSpeculated(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C")
	f.seedNoise(agreeing(12))
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 1, "B")
	f.agg.Upcoming = func() []*Submission { return nil }
	defer f.agg.StopSpeculating()
	cand, err := f.repo.TreeOf(f.ctx, a.Proposal.Commit, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	f.agg.Scorer = scorerFunc(func(ctx context.Context, tree git.Hash, task eval.Task, repeat int) (Outcome, error) {
		if tree == cand && f.agg.Train[task.ID].ID == "" { // the gate's
			once.Do(func() { f.agg.Arrived(b) })
		}
		return f.scorer.Rollout(ctx, tree, task, repeat)
	})
	f.agg.obs = newObservations(f.agg.Scorer)
	if got := outcomes(f.round(a)); got["1"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want w1 committed", got)
	}
	f.agg.spec.wg.Wait()
	next := f.ontoDev(b)
	f.scorer.mu.Lock()
	defer f.scorer.mu.Unlock()
	if got := slices.Index(f.scorer.rolled[next], b.Proposal.Tasks[0]); got < 0 {
		t.Errorf("w2, arriving during w1's gate, was not rolled out merged onto w1 on its own task (rolled: %v)", f.scorer.rolled[next])
	}
}

// ontoDev is the library's tree of s merged onto dev as it is now.
func (f *fixture) ontoDev(s *Submission) git.Hash {
	f.t.Helper()
	dev, err := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	if err != nil {
		f.t.Fatal(err)
	}
	merged, err := f.repo.MergeTree(f.ctx, merge.TreeRequest(dev, s.Proposal.Commit))
	if err != nil {
		f.t.Fatal(err)
	}
	tree, err := f.repo.TreeOf(f.ctx, merged, "skills/s")
	if err != nil {
		f.t.Fatal(err)
	}
	return tree
}
