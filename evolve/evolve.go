// Package evolve runs `git descent evolve`: workers propose edits to a
// library from dev snapshots, and the aggregator decides which enter dev.
//
// The run is built as stages connected by a queue whose items carry the dev
// commit they were made from (ledger.Proposal.Base): workers produce
// submissions, the aggregator consumes them. This runtime schedules the
// stages in synchronous rounds (all workers, then one aggregation), the
// special case of the barrier-free design in DESIGN.md.
package evolve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Options configure a run. Zero values take the defaults documented on the
// command line.
type Options struct {
	Workers int           // parallel workers
	Rounds  int           // aggregator rounds to run
	Target  float64       // stop once dev's validation reward reaches this; 0 means no target
	MaxTime time.Duration // stop after this long; 0 means no limit
	Jobs    int           // rollouts running at once, workers' and gate's together
	// MaxTokens and MaxCost (USD) stop the run once it has spent that much;
	// zero means no limit.
	MaxTokens int64
	MaxCost   float64
	// BaselineNone also scores the test split with the library removed, to
	// report the lift over no skill at all.
	BaselineNone bool
	// Async runs workers and the aggregator as stages that never wait for
	// each other (see pipeline) instead of synchronous rounds (every worker
	// on the same dev snapshot, then one aggregation). Rounds stay the
	// default until the pipeline is at least as good on every bench domain
	// (DESIGN.md, decision 51).
	Async bool
	// AsyncRatio bounds, with Async, how many dev commits a worker's
	// snapshot may fall behind before its step is abandoned and made again
	// from the new dev.
	AsyncRatio int
	// Refresh, in rounds, makes workers take a new dev snapshot only every
	// Refresh rounds (staggered); above 1 their proposals go stale the way
	// an asynchronous worker's do, for the staleness policy to handle.
	Refresh int
	// Hedge, above 1, starts a rollout again on a free slot once it has run
	// Hedge times longer than its estimate, keeping the first answer (see
	// rollout.Evaluator.Hedge); 0 never does. Off by default: a hedge is a
	// second agent run, paid for.
	Hedge float64
	// NoCache neither reads nor writes the on-disk rollout cache: every
	// rollout is run afresh (once per run).
	NoCache bool
	// Backoff is the wait before retrying a rollout that failed for
	// infrastructure reasons; 0 means rollout.DefaultBackoff.
	Backoff time.Duration
	// Runner and Proposer, when set, replace the library's run and
	// proposer commands with agents in this process (the bench's simulated
	// ones); AgentName names them, for the evidence and the cache key.
	Runner    agent.Runner
	Proposer  agent.Proposer
	AgentName string
	Out       io.Writer // human-readable progress
	Log       *slog.Logger
	// OnStatus, when set, receives a snapshot of the run (Status) every
	// StatusEvery (default one second) while it runs, from one goroutine.
	OnStatus    func(Status)
	StatusEvery time.Duration
	// OnWatch, when set, receives once, as the run starts, a function that
	// takes a Status snapshot whenever it is called (from any goroutine),
	// for a display that redraws when it is written to.
	OnWatch func(status func() Status)
	// OnEvent, when set, receives the run's events (Event) as they happen,
	// from the run's goroutine: its start, the baseline, every decided
	// round, the stop.
	OnEvent func(Event)
}

// DefaultAsyncRatio is how many dev commits a worker's snapshot may fall
// behind, by default, before its step is made again from the new dev.
const DefaultAsyncRatio = 2

// Summary is the outcome of a run, for the closing report and --json.
type Summary struct {
	Library    string                 `json:"library"`
	Start      git.Hash               `json:"start"` // dev when the run began
	Dev        git.Hash               `json:"dev"`
	Stable     git.Hash               `json:"stable"`
	Tasks      map[string]int         `json:"tasks"` // per split
	Baseline   float64                `json:"baseline"`
	Final      float64                `json:"final"`
	StableVal  float64                `json:"stable_validation"`
	TestScored bool                   `json:"test_scored"`          // false when the run stopped early (time or budget)
	TestStart  float64                `json:"test_start"`           // the version the run started from
	TestFinal  float64                `json:"test_final"`           // dev at the end
	TestStable float64                `json:"test_stable"`          // stable at the end
	TestNone   *float64               `json:"test_none,omitempty"`  // the agent without the library (--baseline none)
	LiftStart  *Interval              `json:"lift_start,omitempty"` // dev over the start, paired on test tasks
	LiftNone   *Interval              `json:"lift_none,omitempty"`  // dev over no library
	Rounds     int                    `json:"rounds"`
	Proposals  int                    `json:"proposals"`
	Merges     int                    `json:"merges"` // dev commits made
	Outcomes   map[ledger.Outcome]int `json:"outcomes"`
	Promotions int                    `json:"promotions"`
	Rollouts   int64                  `json:"rollouts"`
	CacheHits  int64                  `json:"cache_hits"`
	Hedges     int64                  `json:"hedges"`                // rollouts started again on a free slot because they ran far beyond their estimate
	Busy       float64                `json:"busy"`                  // the share of the --jobs rollout slots running a rollout, over the run (1: never one idle)
	Errored    int64                  `json:"errored"`               // rollouts that could not run (not scored, not cached)
	FirstError string                 `json:"first_error,omitempty"` // the first of them
	// Validation is how candidates were judged: "split" or "cross"
	// (cross-fitted over the train and validation splits).
	Validation string        `json:"validation"`
	Isolation  string        `json:"isolation"`
	Resumed    bool          `json:"resumed"`         // dev existed: Start is where this run found it, not where the library began       // the level agents, proposers and the oracle ran under: bwrap or none
	Noise      *ledger.Noise `json:"noise,omitempty"` // how reproducible the agent was
	// History is dev's validation score after each round, with the time.
	History  []Point `json:"history"`
	Tokens   int64   `json:"tokens"`                    // spent by this run: agents, proposers, judges
	Cost     float64 `json:"cost"`                      // USD spent by this run
	Unpriced int64   `json:"unpriced_tokens,omitempty"` // tokens of Tokens whose cost is unknown
	Requests int64   `json:"requests"`                  // HTTP requests to model endpoints, retries included
	Retries  int64   `json:"retries"`
	Seconds  float64 `json:"seconds"`
	Stop     string  `json:"stop"` // why the run ended
}

// Point is dev's validation score at a moment of the run.
type Point struct {
	Seconds float64  `json:"seconds"` // since the run started
	Round   int      `json:"round"`   // 0 is the baseline
	Dev     git.Hash `json:"dev"`
	Score   float64  `json:"score"`
}

// Evolve runs the evolution of lib in repo until a stop condition holds.
// The user's working tree, index, HEAD and branches are never touched:
// everything happens in git-descent's refs and under .git/descent.
func Evolve(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*Summary, error) {
	start := time.Now()
	opts = withDefaults(opts)
	if opts.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.MaxTime)
		defer cancel()
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	meter := budget.NewMeter(opts.MaxTokens, opts.MaxCost, stop)
	r, err := setup(ctx, repo, lib, opts, meter)
	if err != nil {
		if opts.MaxTime > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("--max-time %s ran out while setting up, before the first rollout (%w): allow more time", opts.MaxTime, err)
		}
		return nil, err
	}
	r.start = start
	defer r.close()
	if r.opts.OnWatch != nil {
		r.opts.OnWatch(r.status)
	}
	stopWatch := r.watch(ctx)
	sum, err := r.run(ctx)
	stopWatch()
	if sum != nil {
		r.event(Event{Kind: "stop", Reason: stopReason(sum, err)})
	}
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil && r.roundNo == 0 && (sum == nil || sum.Rounds == 0) {
		r.unstart() // a failure, not an interrupt: that one resumes
	}
	if sum != nil {
		sum.History = r.prog.points()
		sum.Seconds = time.Since(start).Seconds()
		st := r.eval.Stats()
		sum.Rollouts, sum.CacheHits, sum.Hedges = st.Rollouts, st.Hits, st.Hedges
		if sum.Seconds > 0 {
			sum.Busy = st.Time.Seconds() / (float64(r.opts.Jobs) * sum.Seconds)
		}
		sum.Errored, sum.FirstError = st.Errored, st.FirstError
		sum.Tokens, sum.Cost = meter.Total()
		sum.Unpriced = meter.Unpriced()
		u := r.models.Usage()
		sum.Requests, sum.Retries = u.Requests, u.Retries
	}
	return sum, err
}

func withDefaults(o Options) Options {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Rounds <= 0 {
		o.Rounds = 6
	}
	if o.AsyncRatio <= 0 {
		o.AsyncRatio = DefaultAsyncRatio
	}
	if o.Jobs <= 0 {
		o.Jobs = 2 * o.Workers
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// run runs the rounds and the closing measurement. A --max-time or budget
// stop is a normal end (the sealed test split is then not scored: that
// would run past the limit), also while the test split is being scored; an
// interrupt is an error. Either way every ref is whole and undecided
// proposals are decided by the next run.
func (r *runner) run(ctx context.Context) (*Summary, error) {
	sum := r.summary
	sum.Stop = "rounds"
	err := r.rounds(ctx)
	if err == nil {
		err = r.finish(ctx, true)
	}
	if stop := r.stopped(ctx, err); stop != "" {
		sum.Stop = stop
		sum.TestScored = false
		return sum, r.finish(context.WithoutCancel(ctx), false)
	}
	if errors.Is(err, context.Canceled) {
		return sum, fmt.Errorf("interrupted (%w); nothing is lost: git descent evolve %s goes on from dev, and decides first what this run proposed and did not decide", err, r.lib.Name)
	}
	return sum, err
}

// stopped says why a run that ended with err was stopped by a limit
// (max-time, max-tokens, max-cost), having said so, or "" when it was not.
func (r *runner) stopped(ctx context.Context, err error) string {
	var over *budget.ExceededError
	switch {
	case err != nil && errors.As(context.Cause(ctx), &over):
		fmt.Fprintf(r.opts.Out, "stopped: %s; proposals not yet decided are decided by the next run\n", over)
		return "max-" + over.What
	case r.opts.MaxTime > 0 && errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(r.opts.Out, "stopped: --max-time %s reached; proposals not yet decided are decided by the next run\n", r.opts.MaxTime)
		return "max-time"
	}
	return ""
}

// rounds measures the baseline, then runs rounds until --rounds or
// --target. The asynchronous runtime measures it with its workers already
// at work (asyncRounds).
func (r *runner) rounds(ctx context.Context) error {
	sum := r.summary
	if r.opts.Async {
		// Proposals an earlier run left undecided are queued before any
		// worker can write over its branch.
		pending, err := r.queuePending(ctx)
		if err != nil {
			return err
		}
		dev, err := r.repo.ResolveRef(ctx, r.refs.Dev())
		if err != nil {
			return err
		}
		if err := r.asyncRounds(ctx, dev, func(ctx context.Context) error {
			if err := r.baseline(ctx); err != nil {
				return err
			}
			r.resuming(pending)
			return nil
		}); err != nil {
			return err
		}
	} else {
		if err := r.baseline(ctx); err != nil {
			return err
		}
		pending, err := r.queuePending(ctx)
		if err != nil {
			return err
		}
		r.resuming(pending)
	}
	for round := 1; !r.opts.Async && round <= r.opts.Rounds; round++ {
		if r.opts.Target > 0 && sum.Final >= r.opts.Target {
			break
		}
		res, err := r.round(ctx)
		if err != nil {
			return err
		}
		r.account(res)
	}
	if r.opts.Target > 0 && sum.Final >= r.opts.Target {
		sum.Stop = "target"
	}
	return nil
}

// round runs every worker on the same dev snapshot, then one aggregation.
func (r *runner) round(ctx context.Context) (*aggregate.RoundResult, error) {
	r.prog.set("workers proposing")
	dev, err := r.repo.ResolveRef(ctx, r.refs.Dev())
	if err != nil {
		return nil, err
	}
	round := r.roundNo + 1
	type result struct {
		stepResult
		err error
	}
	// Each worker goroutine owns its worker and its slot of results; a
	// failing worker cancels the others.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]result, len(r.workers))
	var wg sync.WaitGroup
	for i, w := range r.workers {
		j := job{dev: w.refresh(dev, round), seq: (round-1)*len(r.workers) + w.index, round: round, id: fmt.Sprintf("r%d-w%s", round, w.id)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := w.step(wctx, j)
			if err != nil {
				cancel()
			}
			results[i] = result{res, err}
		}()
	}
	wg.Wait()
	if err := firstError(ctx, results, func(x result) error { return x.err }); err != nil {
		return nil, err
	}
	steps := make([]stepResult, len(results))
	for i, res := range results {
		steps[i] = res.stepResult
	}
	return r.aggregate(ctx, steps)
}

// aggregate decides the submissions and decisions of steps in one
// aggregator round and reports it.
func (r *runner) aggregate(ctx context.Context, steps []stepResult) (*aggregate.RoundResult, error) {
	subs := submissions(steps)
	var others []ledger.Decision
	for _, s := range steps {
		if s.dec != nil {
			others = append(others, *s.dec)
		}
	}
	r.prog.set(fmt.Sprintf("deciding round %d: %s", r.roundNo+1, words.Count(len(subs), "proposal")))
	out, err := r.agg.Round(ctx, subs, others)
	if err != nil {
		return nil, err
	}
	r.roundNo = out.Round
	r.roundsDone.Add(1)
	r.prog.set("workers proposing")
	r.report(out, quietLines(steps))
	r.event(roundEvent(out))
	if r.role == "" {
		r.lifecycle(ctx, out)
	}
	return out, nil
}

// submissions is the proposals among steps' results.
func submissions(steps []stepResult) []*aggregate.Submission {
	var out []*aggregate.Submission
	for _, s := range steps {
		if s.sub != nil {
			out = append(out, s.sub)
		}
	}
	return out
}

// firstError returns the error that stopped a fan-out: the run's own
// context error if it ended, else the first error that is not the
// cancellation it caused in the others.
func firstError[T any](ctx context.Context, xs []T, errOf func(T) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var cancelled error
	for _, x := range xs {
		switch err := errOf(x); {
		case err == nil:
		case errors.Is(err, context.Canceled):
			cancelled = err
		default:
			return err
		}
	}
	return cancelled
}

// quietLines reports the steps that made no proposal: one line each for
// those whose proposer came back empty-handed, one line for all whose
// minibatch passed.
func quietLines(steps []stepResult) []string {
	var lines, passed []string
	for _, s := range steps {
		switch {
		case s.passed && !slices.Contains(passed, s.worker):
			passed = append(passed, s.worker)
		case s.quiet != "":
			lines = append(lines, s.quiet)
		}
	}
	if len(passed) > 0 {
		lines = append(lines, strings.Join(passed, ", ")+": every train task in the minibatch passes; nothing to propose")
	}
	return lines
}

// account adds a round's outcome to the summary.
func (r *runner) account(res *aggregate.RoundResult) {
	s := r.summary
	s.Rounds++
	for _, d := range res.Decisions {
		s.Outcomes[d.Outcome]++
		if !d.Proposal.IsZero() {
			s.Proposals++
		}
	}
	s.Merges += res.Merges()
	if res.Promotion != nil {
		s.Promotions++
	}
	s.Final, s.StableVal = res.DevScore, res.Stable
	s.Noise = r.agg.Noise()
	r.prog.point(Point{Seconds: time.Since(r.start).Seconds(), Round: res.Round, Dev: res.Dev, Score: res.DevScore})
}

// stopReason names why a run ended, for the stop event: the summary's
// stop, or "interrupted" or "failed".
func stopReason(s *Summary, err error) string {
	switch {
	case err == nil:
		return s.Stop
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return "failed"
}
