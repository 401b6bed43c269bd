package evolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
)

// pipeline is the barrier-free runtime: every worker loops on its own,
// taking the newest dev it knows of for each step, and hands what it made
// to the aggregator through a bounded queue; the aggregator decides
// whatever has arrived, in small rounds, while the workers go on.
//
// Ownership: each worker goroutine owns its worker; the aggregator
// goroutine (the caller of asyncRounds) owns the Aggregator and the
// summary; the fields under mu, the claims, the queue, Aggregator.Hold and
// Aggregator.Arrived (both safe during a round) are all they share.
//
//   - Backpressure: the queue holds one item per worker; a worker whose
//     next item does not fit waits.
//   - Hold: a worker's branch holds one proposal, so before writing its
//     next a worker has the journal hold its last (Aggregator.Hold) if no
//     round has taken it yet; a round holds what it takes before deciding
//     it. Either way the proposal stays queued and reachable until
//     decided, whatever the worker writes next or wherever the process
//     dies, and no worker waits for a round.
//   - Claims: a step leaves the failures another proposal in flight (or
//     one committed since its snapshot) was measured to fix to that
//     proposal, and drops its own proposal when it fixes only tasks
//     claimed first (claims). A step that finds nothing to do (every
//     failure claimed, or none) waits for the next round's decisions
//     before the next step (settling), so that the run's steps are not
//     spent in moments while what it waits on is decided.
//   - Rebase: a proposal made on an older dev is merged onto the newest
//     and measured there before it is written (runner.rebase), so it
//     reaches the aggregator fresh rather than stale.
//   - Batches: the aggregator takes what has arrived, waiting briefly for
//     more when it has fewer proposals than half the workers (collect).
//   - Lag: a step whose dev has had more than AsyncRatio commits made on
//     top of it before its proposer runs is abandoned, and the worker
//     starts again from the new dev (on the next minibatch: every step
//     has its own number).
//   - Stall: when 2 × workers proposals in a row are decided without a
//     commit, every step in progress from an older dev is abandoned too.
//
// The staleness policy and the gate then apply to every proposal exactly
// as in rounds; each item carries the dev it was made from
// (ledger.Proposal.Base).
type pipeline struct {
	r     *runner
	steps int // steps the run may take in all: --rounds × workers
	seq0  int // the first step's number: where earlier runs left the minibatch window
	queue chan stepResult

	mu        sync.Mutex
	upcoming  []*aggregate.Submission // proposals queued or being queued, not yet taken by a round
	dev       git.Hash                // dev as the aggregator last left it
	version   int                     // dev commits made by this run so far
	epoch     int                     // bumped at each stall
	taken     int                     // steps started (an abandoned one is given back)
	issued    int                     // step numbers handed out: every step, abandoned or not, its own
	settled   chan struct{}           // closed and replaced each time a round's decisions are in
	quietRun  int                     // proposals decided in a row without a commit
	abandoned int                     // steps abandoned for lag or a stall
	stalls    int
	claims    *claims
	unheld    map[string]*aggregate.Submission // by worker id: its last proposal, while the journal does not hold it
	ready     chan struct{}                    // closed once the baseline is in: no proposal is written before
	skipped   int                              // steps that left what they found to others' proposals (claims)
	step      time.Duration                    // moving average of a step's duration
	// busyAt and busySpent are when busy was last asked and the rollout
	// time spent by then; the aggregator's goroutine alone uses them.
	busyAt    time.Time
	busySpent time.Duration
	// active is how many workers may take steps (the first active by
	// index); the others are parked on wake (see adapt), which is
	// broadcast when active grows, when the last step is taken and when
	// the workers are stopped.
	active, fewest, most, moves int
	wake                        *sync.Cond
}

// snapshot is what a worker's step starts from.
type snapshot struct {
	dev     git.Hash
	version int
	epoch   int
	settled <-chan struct{} // closed once a round's decisions are in after the step was taken
}

// asyncRounds runs the pipeline until --rounds × workers steps are done and
// decided, --target is reached, or the context ends. The workers start
// before baseline, which measures dev meanwhile (no barrier between the
// two): what they make is written only once it has succeeded, and the
// aggregator starts then, unless dev already meets --target.
func (r *runner) asyncRounds(ctx context.Context, dev git.Hash, baseline func(context.Context) error) error {
	n := len(r.workers)
	p := &pipeline{r: r, steps: r.opts.Rounds * n, seq0: r.roundNo * n, queue: make(chan stepResult, n), dev: dev, active: n, fewest: n, most: n, claims: newClaims(),
		unheld: map[string]*aggregate.Submission{}, ready: make(chan struct{}), settled: make(chan struct{})}
	p.wake = sync.NewCond(&p.mu)
	r.agg.OnCommit = p.committed
	r.agg.Upcoming = p.next
	defer func() {
		r.agg.StopSpeculating()
		r.agg.OnCommit, r.agg.Upcoming = nil, nil
	}()
	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	// Parked workers wait on p.wake: wake them when the workers are stopped.
	defer context.AfterFunc(wctx, func() {
		p.mu.Lock()
		p.wake.Broadcast()
		p.mu.Unlock()
	})()
	// A worker's error ends the baseline too: the run is over.
	bctx, stopBaseline := context.WithCancel(ctx)
	defer stopBaseline()
	errs := make(chan error, len(r.workers))
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.work(wctx, w); err != nil {
				errs <- err
				stopWorkers()
				stopBaseline()
			}
		}()
	}
	go func() {
		wg.Wait()
		close(p.queue)
	}()
	err := baseline(bctx)
	if err == nil && (r.opts.Target <= 0 || r.summary.Final < r.opts.Target) {
		fmt.Fprintf(r.opts.Out, "runtime: asynchronous (%d steps at most; a snapshot may lag dev by %s)\n",
			p.steps, words.Count(r.opts.AsyncRatio, "commit"))
		close(p.ready)
		err = p.aggregate(ctx, stopWorkers)
	}
	stopWorkers()
	// Wait for every worker to end (the queue closes after the last), so
	// that errs holds all their errors; what is left queued stays on the
	// worker branches for the next run to decide.
	for range p.queue {
	}
	close(errs)
	if err != nil && (!errors.Is(err, context.Canceled) || ctx.Err() != nil) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for e := range errs {
		if !errors.Is(e, context.Canceled) {
			return e
		}
	}
	if err != nil {
		return err // the baseline, cancelled by no worker's error
	}
	if p.abandoned > 0 {
		fmt.Fprintf(r.opts.Out, "async: %s abandoned as dev moved on (%s)\n", words.Count(p.abandoned, "step"), words.Count(p.stalls, "stall"))
	}
	if p.skipped > 0 {
		fmt.Fprintf(r.opts.Out, "async: %s left their failures to proposals in flight\n", words.Count(p.skipped, "step"))
	}
	if p.moves > 0 {
		fmt.Fprintf(r.opts.Out, "async: %d to %d workers active (adjusted %s to the aggregator's pace)\n", p.fewest, p.most, words.Count(p.moves, "time"))
	}
	return nil
}

// work is one worker's loop: take a step number and the newest dev, make
// what it can, queue it.
func (p *pipeline) work(ctx context.Context, w *worker) error {
	for {
		seq, snap, ok := p.take(ctx, w)
		if !ok {
			return nil
		}
		id := fmt.Sprintf("s%d-w%s", seq, w.id) // the step's own: it keys its claims
		j := job{dev: snap.dev, seq: seq, id: id, stale: func() bool { return p.stale(snap) }, newest: p.newest,
			claimed: func(task string) bool { return p.claims.claimed("", snap.version, task) },
			stake:   func(tasks []string) bool { return p.claims.stake(id, snap.version, tasks) },
			hold:    func(ctx context.Context) error { return p.hold(ctx, w) }}
		began := time.Now()
		res, err := w.step(ctx, j)
		p.stepped(time.Since(began))
		if res.sub == nil {
			p.claims.drop(id)
		}
		if err != nil {
			if ctx.Err() != nil {
				return context.Canceled
			}
			return err
		}
		if res.abandoned {
			p.mu.Lock()
			p.abandoned++
			p.taken-- // not a step of the budget: the worker starts again, from the new dev
			p.mu.Unlock()
			continue
		}
		if res.claimed {
			p.mu.Lock()
			p.skipped++
			p.mu.Unlock()
			p.settling(ctx, snap)
			continue
		}
		if res.sub != nil {
			p.claims.written(id, res.sub.Proposal.Commit, res.fixed)
			p.mu.Lock()
			p.unheld[w.id] = res.sub
			p.mu.Unlock()
		}
		p.arriving(res.sub)
		select {
		case p.queue <- res:
		case <-ctx.Done():
			return context.Canceled
		}
		if res.passed {
			p.settling(ctx, snap)
		}
	}
}

// settling waits, after a step that found nothing to do (every failure
// claimed, or none), until a round has decided what was in flight when
// the step was taken, or a while at most: until then the next step would
// most likely find the same, in moments, and spend the run's steps for
// nothing.
func (p *pipeline) settling(ctx context.Context, snap snapshot) {
	wait := time.NewTimer(max(2*p.stepTime(), time.Second))
	defer wait.Stop()
	select {
	case <-snap.settled:
	case <-wait.C:
	case <-ctx.Done():
	}
}

// arriving notes a proposal on its way into the queue, for the aggregator
// to warm its evidence while the round before it runs (Aggregator.Upcoming
// and Aggregator.Arrived).
func (p *pipeline) arriving(s *aggregate.Submission) {
	if s == nil {
		return
	}
	p.mu.Lock()
	p.upcoming = append(p.upcoming, s)
	p.mu.Unlock()
	p.r.agg.Arrived(s)
}

// collected removes a round's proposals from the upcoming ones.
func (p *pipeline) collected(batch []stepResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range batch {
		p.upcoming = slices.DeleteFunc(p.upcoming, func(s *aggregate.Submission) bool { return s == it.sub })
	}
}

// next is the proposals that have arrived for the next round.
func (p *pipeline) next() []*aggregate.Submission {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.upcoming)
}

// take hands out the next step, numbered from where the journal's rounds
// left the minibatch window, with the dev to make it from.
func (p *pipeline) take(ctx context.Context, w *worker) (int, snapshot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w.index >= p.active && p.taken < p.steps && ctx.Err() == nil {
		p.wake.Wait() // parked: the aggregator is behind
	}
	if p.taken >= p.steps || ctx.Err() != nil {
		return 0, snapshot{}, false
	}
	seq := p.seq0 + p.issued
	p.issued++
	if p.taken++; p.taken == p.steps {
		p.wake.Broadcast() // parked workers: there is nothing left to take
	}
	return seq, snapshot{dev: p.dev, version: p.version, epoch: p.epoch, settled: p.settled}, true
}

// activeWorkers is how many workers may take steps now.
func (p *pipeline) activeWorkers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active
}

// settle applies a round's decisions to the claims (a proposal it was
// handed and did not decide, one an earlier run decided, gives up its
// claims too) and wakes the workers waiting for them.
func (p *pipeline) settle(batch []stepResult, res *aggregate.RoundResult) {
	decided := map[git.Hash]bool{}
	for _, d := range res.Decisions {
		decided[d.Proposal] = true
	}
	var undecided []git.Hash
	for _, s := range submissions(batch) {
		if !decided[s.Proposal.Commit] {
			undecided = append(undecided, s.Proposal.Commit)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims.settle(res.Decisions, p.version)
	p.claims.forget(undecided)
	close(p.settled)
	p.settled = make(chan struct{})
}

// newest is dev as the aggregator last left it.
func (p *pipeline) newest() git.Hash {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dev
}

// stale says whether dev moved too far under a step: more than AsyncRatio
// commits, or any commit and a stall since it began.
func (p *pipeline) stale(s snapshot) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	lag := p.version - s.version
	return lag > p.r.opts.AsyncRatio || (lag > 0 && p.epoch != s.epoch)
}

// aggregate is the aggregator's loop: it waits for at least one item,
// takes whatever else has arrived, and decides them in one round. It ends
// when the workers are done and the queue is empty, or at --target (then
// the workers are stopped and what they had queued is still decided).
func (p *pipeline) aggregate(ctx context.Context, stopWorkers context.CancelFunc) error {
	r := p.r
	for {
		batch, waited, ok := p.collect(ctx)
		if !ok {
			return ctx.Err()
		}
		p.adapt(len(batch), waited, p.busy())
		p.collected(batch)
		began := time.Now()
		if err := r.agg.Hold(ctx, submissions(batch)); err != nil {
			return err
		}
		p.held(submissions(batch))
		res, err := r.aggregate(ctx, batch)
		if err != nil {
			return err
		}
		r.opts.Log.Debug("async round", "round", res.Round, "items", len(batch), "waited", waited, "active", p.activeWorkers(),
			"decisions", len(res.Decisions), "merges", res.Merges(), "score", res.DevScore, "seconds", time.Since(began).Seconds())
		r.account(res)
		p.settle(batch, res)
		p.advance(res)
		if r.opts.Target > 0 && r.summary.Final >= r.opts.Target {
			stopWorkers()
		}
	}
}

// collect blocks for one item and takes the others already queued; false
// when there are none and no worker will queue more. With fewer proposals
// than half the workers it waits a little for more, up to half a step's
// mean duration: proposals decided together are fused into one candidate
// and one gate, where one at a time each needs its own. waited says the
// aggregator had to wait for work.
func (p *pipeline) collect(ctx context.Context) ([]stepResult, bool, bool) {
	var batch []stepResult
	waited := false
	select {
	case it, ok := <-p.queue:
		if !ok {
			return nil, false, false
		}
		batch = append(batch, it)
	default:
		waited = true
		select {
		case it, ok := <-p.queue:
			if !ok {
				return nil, false, false
			}
			batch = append(batch, it)
		case <-ctx.Done():
			return nil, false, false
		}
	}
	want := (len(p.r.workers) + 1) / 2
	gather := time.NewTimer(p.stepTime() / 2)
	defer gather.Stop()
	for {
		select {
		case it, ok := <-p.queue:
			if !ok {
				return batch, waited, true
			}
			batch = append(batch, it)
			continue
		default:
		}
		if len(submissions(batch)) >= want {
			return batch, waited, true
		}
		select {
		case it, ok := <-p.queue:
			if !ok {
				return batch, waited, true
			}
			batch = append(batch, it)
		case <-gather.C:
			return batch, true, true
		case <-ctx.Done():
			return batch, waited, true
		}
	}
}

// adapt moves workers between making proposals and idling, so that they
// make them at the pace the aggregator decides them (FlashEvolve's
// adaptive control, with the aggregator as the other stage): a batch that
// filled the queue while the aggregator was busy and the rollout slots
// were nearly all taken parks one worker (its rollout slots go to the gate
// meanwhile); an aggregator that had to wait for work, or slots left idle,
// wake one. A full queue alone parks nobody: a round takes all it holds
// at once, and its time hangs on the slowest rollout of each stage, not on
// how many proposals it decides, so while slots are free more proposals a
// round is more decided a second. At least half the workers stay active.
// busy is the share of the rollout slots taken since the last batch.
func (p *pipeline) adapt(items int, waited bool, busy float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.r.workers)
	switch {
	case !waited && items >= n && busy >= saturated && p.active > (n+1)/2:
		p.active--
	case (waited || busy < saturated-0.15) && p.active < n:
		p.active++
		p.wake.Broadcast()
	default:
		return
	}
	p.moves++
	p.fewest, p.most = min(p.fewest, p.active), max(p.most, p.active)
}

// saturated is the share of the rollout slots taken above which the
// workers' rollouts are taken to slow the gate's.
const saturated = 0.9

// busy is the share of the --jobs rollout slots taken since it was last
// asked (Evaluator.Stats' rollout time over slots × wall time).
func (p *pipeline) busy() float64 {
	now, spent := time.Now(), p.r.eval.Stats().Time
	defer func() { p.busyAt, p.busySpent = now, spent }()
	wall := now.Sub(p.busyAt)
	if p.busyAt.IsZero() || wall <= 0 {
		return 0
	}
	return (spent - p.busySpent).Seconds() / (float64(p.r.opts.Jobs) * wall.Seconds())
}

// stepTime is the moving average of the workers' step durations.
func (p *pipeline) stepTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.step
}

// stepped adds a step's duration to the moving average (weight 1/8).
func (p *pipeline) stepped(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step == 0 {
		p.step = d
		return
	}
	p.step += (d - p.step) / 8
}

// hold, before w writes a proposal, waits for the baseline, then has the
// journal hold w's last proposal when no round has taken it yet
// (Aggregator.Hold, which may run during a round), so that w may write its
// next over it on its branch.
func (p *pipeline) hold(ctx context.Context, w *worker) error {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	last := p.unheld[w.id]
	p.mu.Unlock()
	if last == nil {
		return nil
	}
	if err := p.r.agg.Hold(ctx, []*aggregate.Submission{last}); err != nil {
		return err
	}
	p.held([]*aggregate.Submission{last})
	return nil
}

// held notes proposals the journal now holds.
func (p *pipeline) held(subs []*aggregate.Submission) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range subs {
		if p.unheld[s.Proposal.Worker] == s {
			delete(p.unheld, s.Proposal.Worker)
		}
	}
}

// committed publishes each new dev the moment the aggregator has merged
// it, for the steps that start next.
func (p *pipeline) committed(dev git.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dev = dev
	p.version++
}

// advance detects stalls after a round.
func (p *pipeline) advance(res *aggregate.RoundResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if res.Merges() > 0 {
		p.quietRun = 0
		return
	}
	for _, d := range res.Decisions {
		if !d.Proposal.IsZero() {
			p.quietRun++
		}
	}
	if p.quietRun >= 2*len(p.r.workers) {
		p.epoch++
		p.stalls++
		p.quietRun = 0
	}
}
