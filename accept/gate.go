package accept

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/ledger"
)

// certain is the posterior mass above which a task's outcome needs no more
// samples.
const certain = 0.99

// Spec is how one gate decides (see Run).
type Spec struct {
	Delta          float64
	MaxRegressions int
	MinRepeats     int         // rollouts of each version per task before deciding
	MaxRepeats     int         // the most any task is rolled out per version
	Mean           bool        // the strict mean-difference baseline instead of the calibrated gate
	Pool           [][]float64 // repeated rewards seen so far, for the noise estimate
	Window         int         // rollouts in flight at once
	// Estimates, when set, is each task's expected rollout duration (0
	// when unknown, from the task's earlier rollouts): the re-rolls to
	// start together start longest first, so that the gate does not end
	// waiting on a long one started last (Order does the same for the
	// first pass).
	Estimates []time.Duration
	// Full evaluates every task before deciding; the decision is the same
	// either way (tests check), only dearer.
	Full bool
}

// Source gives a gate its rollouts: dev's or the candidate's results on
// task i seen so far, and one more rollout (ok is false when it errored).
type Source interface {
	Known(cand bool, i int) []float64
	Roll(ctx context.Context, cand bool, i int) (reward float64, ok bool, spent Spent, err error)
}

// gateState is a gate's evidence so far, task by task.
type gateState struct {
	spec    Spec
	ids     []string
	cand    [][]float64
	dev     [][]float64
	errored []bool // a first rollout errored: the task is left out
	capped  []bool // a re-roll errored: no more re-rolls
	// candErrored counts tasks left out because the candidate's rollout
	// errored where dev's ran: a candidate that makes the agent hang or
	// crash must not hide its regressions that way.
	candErrored int
	spent       Spent
	rerolls     int
}

// Run decides whether the candidate beats dev on n tasks, visiting them
// in order:
//
//  1. every task gets MinRepeats rollouts of each version (dev's results
//     from earlier gates count); as soon as no task can still show the
//     candidate doing better, the gate rejects without the rest, since
//     step 3 (and a re-roll) needs such a task;
//  2. the calibrated gate, when the candidate did better somewhere and is
//     not yet accepted, re-rolls both versions on the tasks whose outcome
//     differs and is still uncertain (posterior mass of its likeliest
//     change below 0.99), up to MaxRepeats, until it accepts, nothing is
//     uncertain, or even every re-roll going the candidate's way could not
//     lift P above 1−δ;
//  3. it accepts as accepts says: a task done better, P(better) > 1−δ, no
//     expected loss, at most MaxRegressions tasks dev passed every time
//     probably failed now, and no task lost to the candidate's errors.
//
// Step 1's early stop makes the decision identical to evaluating every task
// (TestGateDecidesEarlyIdentically replays recorded outcomes both ways).
func Run(ctx context.Context, spec Spec, ids []string, order []int, src Source) (*ledger.Gate, error) {
	n := len(ids)
	s := &gateState{spec: spec, ids: ids, cand: make([][]float64, n), dev: make([][]float64, n), errored: make([]bool, n), capped: make([]bool, n)}
	for i := 0; i < n; i++ {
		s.cand[i], s.dev[i] = src.Known(true, i), src.Known(false, i)
	}
	stopped, err := s.firstPass(ctx, order, src)
	if err != nil {
		return nil, err
	}
	if !stopped && !spec.Mean {
		if err := s.reroll(ctx, src); err != nil {
			return nil, err
		}
	}
	g := s.verdict()
	g.Total, g.Start, g.Errored = n, spec.MinRepeats, s.candErrored
	g.Skipped = s.skipped()
	g.Rerolls = s.rerolls
	g.Tokens, g.Cost, g.Unpriced = s.spent.Tokens, s.spent.Cost, s.spent.Unpriced
	return g, nil
}

// Spent is what the rollouts of a gate cost: tokens, USD, and the tokens
// of those with no price.
type Spent struct {
	Tokens   int64
	Cost     float64
	Unpriced int64
}

// job is one rollout a gate asks for.
type job struct {
	cand bool
	task int
}

// result is what a job came back with.
type result struct {
	job
	reward float64
	ok     bool
	spent  Spent
	err    error
}

// firstPass is step 1. stopped reports an early rejection.
func (s *gateState) firstPass(ctx context.Context, order []int, src Source) (stopped bool, err error) {
	var jobs []job
	for _, i := range order {
		for k := len(s.dev[i]); k < s.spec.MinRepeats; k++ {
			jobs = append(jobs, job{false, i})
		}
		for k := len(s.cand[i]); k < s.spec.MinRepeats; k++ {
			jobs = append(jobs, job{true, i})
		}
	}
	stop := func() bool { return !s.spec.Full && !s.anyWinPossible() }
	if stop() {
		return true, nil
	}
	return s.run(ctx, jobs, src, stop, false)
}

// reroll is step 2.
func (s *gateState) reroll(ctx context.Context, src Source) error {
	if !s.anyWin() {
		return nil
	}
	for {
		pairs, idx := s.pairs()
		j := s.model(pairs).judge(pairs)
		if s.accepts(pairs, j) {
			return nil
		}
		var uncertain []int
		for k, i := range idx {
			p := pairs[k]
			differs := math.Abs(Mean(p.cand)-Mean(p.dev)) > 1e-9
			if differs && j.Certain[k] < certain && !s.capped[i] && (len(p.cand) < s.spec.MaxRepeats || len(p.dev) < s.spec.MaxRepeats) {
				uncertain = append(uncertain, i)
			}
		}
		if len(uncertain) == 0 || !s.couldAccept(uncertain) {
			return nil
		}
		var jobs []job
		for _, i := range uncertain {
			c, d := len(s.cand[i]), len(s.dev[i])
			if c <= d && c < s.spec.MaxRepeats {
				jobs = append(jobs, job{true, i})
			}
			if d <= c && d < s.spec.MaxRepeats {
				jobs = append(jobs, job{false, i})
			}
		}
		if len(jobs) == 0 {
			return nil
		}
		sort.SliceStable(jobs, func(a, b int) bool { return s.estimate(jobs[a].task) > s.estimate(jobs[b].task) })
		if _, err := s.run(ctx, jobs, src, nil, true); err != nil {
			return err
		}
	}
}

// estimate is task i's expected rollout duration, 0 when unknown.
func (s *gateState) estimate(i int) time.Duration { return estimateAt(s.spec.Estimates, i) }

// estimateAt is est[i], 0 when est does not say.
func estimateAt(est []time.Duration, i int) time.Duration {
	if i < len(est) {
		return est[i]
	}
	return 0
}

// couldAccept reports whether the gate could still accept if every
// uncertain task's remaining re-rolls went the candidate's way.
func (s *gateState) couldAccept(uncertain []int) bool {
	best := &gateState{spec: s.spec, ids: s.ids, cand: append([][]float64(nil), s.cand...), dev: append([][]float64(nil), s.dev...), errored: s.errored, capped: s.capped}
	for _, i := range uncertain {
		c := append([]float64(nil), s.cand[i]...)
		for len(c) < s.spec.MaxRepeats {
			c = append(c, 1)
		}
		d := append([]float64(nil), s.dev[i]...)
		for len(d) < s.spec.MaxRepeats {
			d = append(d, 0)
		}
		best.cand[i], best.dev[i] = c, d
	}
	pairs, _ := best.pairs()
	return best.model(pairs).judge(pairs).P > 1-s.spec.Delta
}

// run executes jobs in order with at most Window in flight, applying each
// result as it comes; stop, checked after every result, cancels the rest.
// Re-rolls (step 2) are counted, and one that errors ends that task's
// re-rolls; in step 1 an errored rollout leaves the task out. It reports
// whether stop ended it.
func (s *gateState) run(ctx context.Context, jobs []job, src Source, stop func() bool, reroll bool) (bool, error) {
	failed := s.errored
	if reroll {
		failed = s.capped
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result)
	var wg sync.WaitGroup
	next, inflight, stopped := 0, 0, false
	var firstErr error
	launch := func() {
		for inflight < max(s.spec.Window, 1) && next < len(jobs) && !stopped && firstErr == nil {
			jb := jobs[next]
			next++
			inflight++
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, ok, spent, err := src.Roll(ctx, jb.cand, jb.task)
				results <- result{jb, r, ok, spent, err}
			}()
		}
	}
	launch()
	for inflight > 0 {
		res := <-results
		inflight--
		s.spent.Tokens += res.spent.Tokens
		s.spent.Cost += res.spent.Cost
		s.spent.Unpriced += res.spent.Unpriced
		switch {
		case stopped && errors.Is(res.err, context.Canceled):
		case res.err != nil:
			if firstErr == nil {
				firstErr = res.err
				cancel()
			}
		case !res.ok:
			if !failed[res.task] && !reroll && res.cand && len(s.dev[res.task]) > 0 {
				s.candErrored++
			}
			failed[res.task] = true
		default:
			if res.cand {
				s.cand[res.task] = append(s.cand[res.task], res.reward)
			} else {
				s.dev[res.task] = append(s.dev[res.task], res.reward)
			}
			if reroll {
				s.rerolls++
			}
		}
		if firstErr == nil && !stopped && stop != nil && stop() {
			stopped = true
			cancel()
		}
		launch()
	}
	wg.Wait()
	if firstErr != nil {
		return false, firstErr
	}
	return stopped, nil
}

// anyWinPossible reports whether some task could still, after step 1, show
// the candidate doing better than dev.
func (s *gateState) anyWinPossible() bool {
	for i := range s.ids {
		if s.errored[i] {
			continue
		}
		c, d := s.cand[i], s.dev[i]
		needC, needD := max(0, s.spec.MinRepeats-len(c)), max(0, s.spec.MinRepeats-len(d))
		bestC := (passes(c) + float64(needC)) / float64(len(c)+needC)
		worstD := 0.0
		if len(d)+needD > 0 {
			worstD = passes(d) / float64(len(d)+needD)
		}
		if bestC > worstD+1e-9 {
			return true
		}
	}
	return false
}

// anyWin reports whether the candidate did better on some task.
func (s *gateState) anyWin() bool {
	pairs, _ := s.pairs()
	return won(pairs)
}

// won reports whether the candidate did better on one of the pairs.
func won(pairs []pair) bool {
	for _, p := range pairs {
		if Mean(p.cand) > Mean(p.dev)+1e-9 {
			return true
		}
	}
	return false
}

// pairs returns the tasks both versions have results for, with their
// indexes.
func (s *gateState) pairs() ([]pair, []int) {
	var ps []pair
	var idx []int
	for i := range s.ids {
		if !s.errored[i] && len(s.cand[i]) > 0 && len(s.dev[i]) > 0 {
			ps = append(ps, pair{cand: s.cand[i], dev: s.dev[i]})
			idx = append(idx, i)
		}
	}
	return ps, idx
}

// model is the noise model for these pairs: graded unless every reward
// seen is 0 or 1.
func (s *gateState) model(pairs []pair) noiseModel {
	graded := anyGraded(s.spec.Pool)
	for _, p := range pairs {
		graded = graded || !isBinary(p.cand) || !isBinary(p.dev)
	}
	return newNoiseModel(s.spec.Pool, graded)
}

// accepts applies step 3 to a judgement: P above 1−δ, the candidate did
// better on some task, its expected total is not below dev's, nothing dev
// always passes probably broke, and no task was lost to the candidate's
// rollouts erroring.
func (s *gateState) accepts(pairs []pair, j judgement) bool {
	return won(pairs) && j.P > 1-s.spec.Delta && j.Mean >= 0 && regressions(pairs, j) <= s.spec.MaxRegressions && s.candErrored == 0
}

// regressions counts the tasks dev passed in every rollout that the
// candidate probably does worse on now.
func regressions(pairs []pair, j judgement) int {
	n := 0
	for k, p := range pairs {
		if allPass(p.dev) && j.Worse[k] > 0.5 {
			n++
		}
	}
	return n
}

// skipped counts the candidate rollouts step 1 would have needed and never
// got, because the gate had decided (tasks left out for errors aside).
func (s *gateState) skipped() int {
	need := 0
	for i := range s.ids {
		if !s.errored[i] {
			need += max(0, s.spec.MinRepeats-len(s.cand[i]))
		}
	}
	return need
}

// verdict turns the evidence into the gate's record.
func (s *gateState) verdict() *ledger.Gate {
	pairs, idx := s.pairs()
	before, after := means(pairs)
	g := &ledger.Gate{Tasks: len(pairs), Before: before, After: after, Delta: s.spec.Delta, MaxRegressions: s.spec.MaxRegressions}
	for k, p := range pairs {
		g.Repeats = max(g.Repeats, len(p.cand), len(p.dev))
		switch d := Mean(p.cand) - Mean(p.dev); {
		case d > 1e-9:
			g.Wins += d
			g.Won = append(g.Won, s.ids[idx[k]])
		case d < -1e-9:
			g.Losses -= d
			g.Lost = append(g.Lost, s.ids[idx[k]])
		}
	}
	if s.spec.Mean {
		g.Method = "mean"
		if after > before+1e-9 {
			g.P, g.Accept = 1, true
		}
		return g
	}
	m := s.model(pairs)
	j := m.judge(pairs)
	g.Method, g.P, g.Noise, g.Expected = "flip", j.P, j.Noise, j.Mean
	if m.graded {
		g.Method = "jump"
	}
	g.Regressions = regressions(pairs, j)
	g.Accept = s.accepts(pairs, j)
	return g
}

// promising reports whether a rejected gate's evidence is positive but not
// yet sufficient: P(better) above ½, more gained than lost, no
// regressions beyond the allowance.
func Promising(g *ledger.Gate) bool {
	return !g.Accept && g.Method != "mean" && g.P > 0.5 && g.Wins > g.Losses && g.Regressions <= g.MaxRegressions
}

func means(pairs []pair) (before, after float64) {
	if len(pairs) == 0 {
		return 0, 0
	}
	for _, p := range pairs {
		before += Mean(p.dev)
		after += Mean(p.cand)
	}
	return before / float64(len(pairs)), after / float64(len(pairs))
}

func allPass(runs []float64) bool {
	for _, r := range runs {
		if r < eval.Solved {
			return false
		}
	}
	return len(runs) > 0
}

// Order is the order a gate visits tasks in, so that it decides
// soonest: tasks dev fails (only those can show a gain) before tasks dev
// passes every time, and within each, tasks on which recent versions
// disagree before those on which they all agree; among equals, the
// longest first by est (each task's expected rollout duration, 0 when
// unknown; nil for none), so that the rollouts in flight together do not
// end waiting on a long one started last.
func Order(devRuns [][]float64, recent [][]float64, est []time.Duration) []int {
	rank := func(i int) int {
		r := 0
		if allPass(devRuns[i]) {
			r += 2
		}
		lo, hi := 1.0, 0.0
		for _, x := range recent[i] {
			lo, hi = min(lo, x), max(hi, x)
		}
		if !(hi > lo) {
			r++
		}
		return r
	}
	order := make([]int, len(devRuns))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		return rank(x) < rank(y) || rank(x) == rank(y) && estimateAt(est, x) > estimateAt(est, y)
	})
	return order
}

// SmallestGain is the fewest validation tasks a candidate must fix, each
// confirmed in every one of maxRepeats rollouts and breaking nothing else,
// for the gate to accept at δ among n tasks with the noise pool shows; 0
// when no gain could pass.
func SmallestGain(n int, pool [][]float64, delta float64, maxRepeats int) int {
	m := newNoiseModel(pool, anyGraded(pool))
	for k := 1; k <= n; k++ {
		ps := make([]pair, n)
		for i := range ps {
			ps[i] = pair{cand: []float64{1}, dev: []float64{1}}
			if i < k {
				ps[i] = pair{cand: repeat(1, maxRepeats), dev: repeat(0, maxRepeats)}
			}
		}
		if m.judge(ps).P > 1-delta {
			return k
		}
	}
	return 0
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, max(n, 1))
	for i := range out {
		out[i] = v
	}
	return out
}
