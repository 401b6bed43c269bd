package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/sandbox"
)

// Evaluator performs cached rollouts of library versions. It is safe for
// concurrent use; every rollout holds a slot of Limiter while it runs.
type Evaluator struct {
	Repo    *git.Repo
	Library *library.Library
	Runner  agent.Runner
	Scorer  eval.Scorer
	Limiter *sandbox.Limiter
	// CachedOnly serves cached results and runs nothing: a rollout not in
	// the cache comes back Errored "not in the rollout cache".
	CachedOnly bool
	Cache      *Cache
	Config     string        // hash of everything besides tree and task that decides a result
	WorkDir    string        // parent of rollout workspaces; "" means the system temp dir
	Meter      *budget.Meter // counts what fresh rollouts spend; may be nil

	// Backoff is the wait before the first retry of a rollout that failed
	// for infrastructure reasons (doubling after); 0 means DefaultBackoff.
	Backoff time.Duration
	// Log, when set, hears about every errored attempt.
	Log *slog.Logger
	// Hedge, when above 1, starts a rollout again on a free slot once it
	// has run Hedge times longer than its estimate (the task's last
	// duration, else the median of recent rollouts); the first attempt to
	// finish is kept and the other is stopped. 0 never hedges.
	Hedge float64

	rollouts atomic.Int64
	hits     atomic.Int64
	nanos    atomic.Int64
	hedges   atomic.Int64
	running  atomic.Int64 // attempts holding a slot now
	waiting  atomic.Int64 // rollouts waiting for a slot
	durs     durations

	dirsMu sync.Mutex
	idle   []*materialize.RolloutDir // rollout workspaces kept for the next rollouts
	closed bool

	mu         sync.Mutex
	finished   int64  // rollouts run to a result or to errored
	errored    int64  // rollouts that errored on every attempt
	firstError string // the first of them
}

// Attempts is how often a rollout that fails for infrastructure reasons is
// tried before it counts as errored.
const Attempts = 3

// DefaultBackoff is Evaluator.Backoff's default.
const DefaultBackoff = 500 * time.Millisecond

// Most rollouts erroring means the setup is broken: after at least
// minErrored errored rollouts, more than half of all the run's rollouts
// erroring stops it (TooManyErrorsError).
const minErrored = 5

// Stats counts what an Evaluator did.
type Stats struct {
	Rollouts   int64         // rollout attempts run (an errored rollout is tried several times)
	Hits       int64         // results served from the cache
	Errored    int64         // rollouts that could not run on any attempt: not scored, not cached
	FirstError string        // the first errored rollout's error
	Time       time.Duration // summed rollout wall time
	Hedges     int64         // rollouts started again because they ran far beyond their estimate
	Running    int64         // attempts running now
	Waiting    int64         // rollouts waiting for a free slot now
}

// Stats returns the counters so far.
func (e *Evaluator) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{Rollouts: e.rollouts.Load(), Hits: e.hits.Load(), Errored: e.errored, FirstError: e.firstError, Time: time.Duration(e.nanos.Load()), Hedges: e.hedges.Load(),
		Running: e.running.Load(), Waiting: e.waiting.Load()}
}

// TooManyErrorsError stops a run in which most rollouts could not run.
type TooManyErrorsError struct {
	Errored, Total int64
	First          string
}

func (e *TooManyErrorsError) Error() string {
	return fmt.Sprintf("%d of %d rollouts could not run (each tried %d times); first: %s (check the library's run command, its environment and the endpoint)", e.Errored, e.Total, Attempts, e.First)
}

// Rollout returns the record of one task on the library tree libTree (the
// tree of the library directory), running it only when no cached record
// exists. An agent that fails on its own (a failing exit, a wrong answer)
// scores 0 with the error kept in the record. One that fails for
// infrastructure reasons (agent.InfraError that is not Fatal: not found,
// killed, timed out, an endpoint overloaded past its retries) is retried
// Attempts times, then comes back with Errored set: no reward, not cached.
// A fatal infrastructure error, a scorer error, a cancelled context, and
// a *TooManyErrorsError once most rollouts have errored, are returned.
func (e *Evaluator) Rollout(ctx context.Context, libTree git.Hash, t eval.Task) (Record, error) {
	return e.RolloutRepeat(ctx, libTree, t, 0)
}

// RolloutRepeat is Rollout of one repeat: repeat n of a task is its own
// rollout with its own cache entry, for agents whose answers vary.
func (e *Evaluator) RolloutRepeat(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Record, error) {
	key := Key{Tree: libTree, Task: t.Hash(), Config: e.Config, Repeat: repeat}
	// Callers who join this rollout while it waits for a slot raise the
	// priority it waits with to theirs (a gate joining a speculation's).
	ctx, _ = sandbox.WithClaim(ctx)
	rec, hit, err := e.Cache.Do(ctx, key, func() (Record, error) {
		if e.CachedOnly {
			return Record{}, &erroredError{errNotCached}
		}
		return e.attempts(ctx, libTree, t, repeat)
	})
	if e.CachedOnly && !hit {
		return Record{Task: t.ID, Errored: errNotCached.Error()}, nil
	}
	if hit {
		e.hits.Add(1)
		if err == nil {
			e.tally(nil) // a result served counts against errored ones too
		}
	}
	var errored *erroredError
	if errors.As(err, &errored) {
		return Record{Task: t.ID, Errored: errored.err.Error()}, e.tooMany()
	}
	return rec, err
}

// errNotCached is the Errored of a rollout a CachedOnly evaluator did
// not find in the cache.
var errNotCached = errors.New("not in the rollout cache")

// erroredError carries a rollout's last infrastructure failure out of the
// cache, which keeps no errors.
type erroredError struct{ err error }

func (e *erroredError) Error() string { return e.err.Error() }

// attempts runs a rollout until it gives a result, retrying infrastructure
// failures (see Retry).
func (e *Evaluator) attempts(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Record, error) {
	var rec Record
	err := Retry(ctx, e.Backoff, func(attempt int) error {
		var err error
		rec, err = e.once(ctx, libTree, t, repeat)
		if agent.Transient(err) && e.Log != nil {
			e.Log.Debug("rollout could not run", "task", t.ID, "repeat", repeat, "attempt", attempt, "err", err)
		}
		return err
	})
	switch {
	case err == nil:
		e.tally(nil)
	case agent.Transient(err):
		e.tally(err)
		return Record{}, &erroredError{err}
	}
	return rec, err
}

// Retry calls try (with its attempt number, from 1) until it returns
// anything but a transient agent.InfraError, Attempts times at most,
// waiting wait (DefaultBackoff when 0) before the second call and twice as
// long before each next. It returns try's last error, or the context's when
// it ends during a wait. Rollouts and proposers share it.
func Retry(ctx context.Context, wait time.Duration, try func(attempt int) error) error {
	if wait <= 0 {
		wait = DefaultBackoff
	}
	for i := 1; ; i++ {
		err := try(i)
		if !agent.Transient(err) || i == Attempts {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait *= 2
	}
}

// tally counts a rollout that gave a result (errored nil) or errored.
func (e *Evaluator) tally(errored error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished++
	if errored != nil {
		e.errored++
		if e.firstError == "" {
			e.firstError = errored.Error()
		}
	}
}

// tooMany returns a *TooManyErrorsError when most rollouts have errored.
func (e *Evaluator) tooMany() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.errored >= minErrored && 2*e.errored > e.finished {
		return &TooManyErrorsError{Errored: e.errored, Total: e.finished, First: e.firstError}
	}
	return nil
}

// once runs one attempt of a rollout under a slot of the Limiter, hedged
// (see Evaluator.Hedge) when it runs far beyond its estimate and a slot is
// free: the first of the two to finish is kept, the other stopped. What a
// stopped attempt spent before it was stopped is counted when its agent
// reports it.
func (e *Evaluator) once(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Record, error) {
	e.waiting.Add(1)
	err := e.Limiter.Acquire(ctx)
	e.waiting.Add(-1)
	if err != nil {
		return Record{}, err
	}
	type result struct {
		rec  Record
		err  error
		took time.Duration
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	results := make(chan result, 2) // both attempts can always deliver, and end
	attempt := func() {
		defer e.Limiter.Release()
		e.running.Add(1)
		defer e.running.Add(-1)
		start := time.Now()
		rec, err := e.run(ctx, libTree, t, repeat)
		took := time.Since(start)
		e.rollouts.Add(1)
		e.nanos.Add(int64(took))
		e.Meter.Add(rec.Tokens, rec.Cost, rec.Unpriced)
		results <- result{rec, err, took}
	}
	go attempt()
	running := 1
	var hedge <-chan time.Time
	if wait, ok := e.hedgeAfter(t.ID); ok {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		hedge = timer.C
	}
	for {
		select {
		case res := <-results:
			running--
			if res.err != nil && running > 0 && ctx.Err() == nil {
				continue // the other attempt may still give a result
			}
			if res.err != nil {
				return Record{}, res.err
			}
			e.durs.add(t.ID, res.took)
			return res.rec, nil
		case <-hedge:
			hedge = nil
			if e.Limiter.TryAcquire() {
				e.hedges.Add(1)
				running++
				go attempt()
			}
		}
	}
}

// Estimate is how long a rollout of task is expected to take: how long its
// last fresh rollout took, 0 before it has run (aggregate.Estimator).
func (e *Evaluator) Estimate(task string) time.Duration {
	e.durs.mu.Lock()
	defer e.durs.mu.Unlock()
	return e.durs.last[task]
}

// hedgeAfter is how long a rollout of task may run before it is hedged,
// and whether it may be at all.
func (e *Evaluator) hedgeAfter(task string) (time.Duration, bool) {
	if e.Hedge <= 1 {
		return 0, false
	}
	est, ok := e.durs.estimate(task)
	if !ok {
		return 0, false
	}
	return time.Duration(e.Hedge * float64(max(est, 10*time.Millisecond))), true
}

// durations keeps how long rollouts took: each task's last, and the most
// recent ones of any task. Safe for concurrent use.
type durations struct {
	mu     sync.Mutex
	last   map[string]time.Duration
	recent []time.Duration // a ring of the latest
	next   int
}

// durationSamples is how many recent durations the median is over, and
// the fewest it needs.
const (
	durationSamples = 64
	durationMinimum = 8
)

func (d *durations) add(task string, took time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string]time.Duration{}
	}
	d.last[task] = took
	if len(d.recent) < durationSamples {
		d.recent = append(d.recent, took)
		return
	}
	d.recent[d.next] = took
	d.next = (d.next + 1) % durationSamples
}

// estimate is a rollout of task's expected duration: its last, else the
// median of recent rollouts once there are enough of them.
func (d *durations) estimate(task string) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if took, ok := d.last[task]; ok {
		return took, true
	}
	if len(d.recent) < durationMinimum {
		return 0, false
	}
	sorted := slices.Clone(d.recent)
	slices.Sort(sorted)
	return sorted[len(sorted)/2], true
}

// RolloutAll rolls out repeat 0 of every task on libTree concurrently
// (bounded by the Limiter) and returns the records in task order.
func (e *Evaluator) RolloutAll(ctx context.Context, libTree git.Hash, tasks []eval.Task) ([]Record, error) {
	recs := make([]Record, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i], errs[i] = e.Rollout(ctx, libTree, t)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return recs, err // the first, in task order: one line for the user
		}
	}
	return recs, nil
}

// run does one rollout in a workspace holding exactly its layout (a kept
// one, laid out again: see takeDir). On an error the record it returns
// carries only what was spent, for the meter; it is never kept.
func (e *Evaluator) run(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Record, error) {
	d, err := e.takeDir(libTree)
	if err != nil {
		return Record{}, err
	}
	lay, err := d.Lay(ctx, libTree, t.Files)
	if err != nil {
		_ = d.Remove()
		return Record{}, err
	}
	// Kept only after an agent that ended by itself without an error: a
	// killed one (a timeout, a hedge that lost, a cancelled run) may have
	// processes still dying in it, so it is removed instead, from file
	// descriptors that no link can redirect (os.RemoveAll).
	clean := false
	defer func() {
		if clean {
			e.putDir(d)
		} else {
			_ = d.Remove()
		}
	}()
	dir, control := d.Dir, d.Control
	taskFile := filepath.Join(control, "task.json")
	if err := writeAgentTask(taskFile, t, lay.Files); err != nil {
		return Record{}, err
	}
	start := time.Now()
	resp, runErr := e.Runner.Run(ctx, agent.Request{
		Library: e.Library.Name, TaskID: t.ID, Repeat: repeat, Prompt: t.Prompt, TaskFile: taskFile,
		SkillDir: lay.SkillDir, Workspace: dir, Files: lay.Files, Control: control,
	})
	rec := Record{Task: t.ID, Output: resp.Output, Seconds: time.Since(start).Seconds(), Tokens: resp.Tokens, Cost: resp.Cost,
		Unpriced: resp.Unpriced, Model: resp.Model}
	clean = runErr == nil && ctx.Err() == nil
	if ctx.Err() != nil {
		return Record{}, ctx.Err()
	}
	var infra *agent.InfraError
	if errors.As(runErr, &infra) {
		// Not the library's failure: never recorded.
		return rec, fmt.Errorf("rollout of task %q: %w", t.ID, runErr)
	}
	if runErr != nil {
		rec.Error = runErr.Error()
		if e.Log != nil {
			e.Log.Debug("the agent failed; the rollout scores 0", "task", t.ID, "repeat", repeat, "err", runErr)
		}
		return rec, nil
	}
	// Scorer errors name the task themselves.
	g, err := eval.GradeWith(ctx, e.Scorer, t, resp.Output)
	rec.Tokens += g.Tokens
	rec.Cost += g.Cost
	if err != nil {
		return rec, err
	}
	rec.Reward, rec.Grading = g.Reward, g.Expectations
	return rec, nil
}

// takeDir hands out a kept rollout workspace, one that last held libTree
// if there is one (Lay then rewrites least), or a new one. Workspaces are
// kept per rollout in flight, so there are at most as many as the Limiter
// has slots, hedges included.
func (e *Evaluator) takeDir(libTree git.Hash) (*materialize.RolloutDir, error) {
	e.dirsMu.Lock()
	if n := len(e.idle); n > 0 {
		i := n - 1
		for j, d := range e.idle {
			if d.Tree() == libTree {
				i = j
			}
		}
		d := e.idle[i]
		e.idle = slices.Delete(e.idle, i, i+1)
		e.dirsMu.Unlock()
		return d, nil
	}
	e.dirsMu.Unlock()
	return materialize.NewRolloutDir(e.Repo, e.Library, e.WorkDir)
}

// putDir keeps a workspace for the next rollout, or removes it once the
// Evaluator is closed.
func (e *Evaluator) putDir(d *materialize.RolloutDir) {
	e.dirsMu.Lock()
	defer e.dirsMu.Unlock()
	if e.closed {
		_ = d.Remove()
		return
	}
	e.idle = append(e.idle, d)
}

// Close removes the kept rollout workspaces; a rollout still running
// removes its own when it ends. Rollouts may still run after it, each in a
// workspace of its own.
func (e *Evaluator) Close() error {
	e.dirsMu.Lock()
	defer e.dirsMu.Unlock()
	e.closed = true
	var errs []error
	for _, d := range e.idle {
		errs = append(errs, d.Remove())
	}
	e.idle = nil
	return errors.Join(errs...)
}

// writeAgentTask writes the task as the agent may see it: no expected
// output, no expectations.
func writeAgentTask(path string, t eval.Task, files []string) error {
	data, err := json.MarshalIndent(struct {
		ID     string   `json:"id"`
		Prompt string   `json:"prompt"`
		Files  []string `json:"files"`
	}{t.ID, t.Prompt, files}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Mean is the mean reward of records that did not error (0 for none).
func Mean(recs []Record) float64 {
	var s float64
	n := 0
	for _, r := range recs {
		if r.Errored == "" {
			s += r.Reward
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
