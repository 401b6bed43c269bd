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
	"strings"
	"sync"
	"time"

	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
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
	// Refresh makes workers take a new dev snapshot only every Refresh
	// rounds (staggered); above 1 their proposals go stale the way an
	// asynchronous worker's do, for the staleness policy to handle.
	Refresh int
	// NoCache neither reads nor writes the on-disk rollout cache: every
	// rollout is run afresh (once per run).
	NoCache bool
	// Backoff is the wait before retrying a rollout that failed for
	// infrastructure reasons; 0 means rollout.DefaultBackoff.
	Backoff time.Duration
	Out     io.Writer // human-readable progress
	Log     *slog.Logger
}

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
	Errored    int64                  `json:"errored"`               // rollouts that could not run (not scored, not cached)
	FirstError string                 `json:"first_error,omitempty"` // the first of them
	// Validation is how candidates were judged: "split" or "cross"
	// (cross-fitted over the train and validation splits).
	Validation string        `json:"validation"`
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
		return nil, err
	}
	r.start = start
	defer r.close()
	sum, err := r.run(ctx)
	if sum != nil {
		sum.Seconds = time.Since(start).Seconds()
		st := r.eval.Stats()
		sum.Rollouts, sum.CacheHits = st.Rollouts, st.Hits
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
		return sum, fmt.Errorf("interrupted; proposals not yet decided are decided by the next run: %w", err)
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
// --target.
func (r *runner) rounds(ctx context.Context) error {
	sum := r.summary
	if err := r.baseline(ctx); err != nil {
		return err
	}
	if err := r.queuePending(ctx); err != nil {
		return err
	}
	for round := 1; round <= r.opts.Rounds; round++ {
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
	dev, err := r.repo.ResolveRef(ctx, r.refs.Dev())
	if err != nil {
		return nil, err
	}
	type result struct {
		sub *aggregate.Submission
		dec *ledger.Decision
		err error
	}
	// Each worker goroutine owns its worker and its slot of results; a
	// failing worker cancels the others.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]result, len(r.workers))
	var wg sync.WaitGroup
	for i, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub, dec, err := w.step(wctx, dev, r.roundNo+1)
			if err != nil {
				cancel()
			}
			results[i] = result{sub, dec, err}
		}()
	}
	wg.Wait()
	if err := firstError(ctx, results, func(x result) error { return x.err }); err != nil {
		return nil, err
	}
	var subs []*aggregate.Submission
	var others []ledger.Decision
	for _, res := range results {
		if res.sub != nil {
			subs = append(subs, res.sub)
		}
		if res.dec != nil {
			others = append(others, *res.dec)
		}
	}
	out, err := r.agg.Round(ctx, subs, others)
	if err != nil {
		return nil, err
	}
	r.roundNo = out.Round
	r.report(out, quietLines(r.workers))
	return out, nil
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

// quietLines reports the workers that made no proposal: one line each for
// those whose proposer came back empty-handed, one line for all whose
// minibatch passed.
func quietLines(ws []*worker) []string {
	var lines, passed []string
	for _, w := range ws {
		switch {
		case w.passed:
			passed = append(passed, "w"+w.id)
		case w.last != "":
			lines = append(lines, w.last)
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
	s.History = append(s.History, Point{Seconds: time.Since(r.start).Seconds(), Round: res.Round, Dev: res.Dev, Score: res.DevScore})
}
