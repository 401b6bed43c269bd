package aggregate

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
)

// Scorer rolls out library versions for the aggregator: the gate, conflict
// settling, promotion. Implementations cache by version, task and repeat
// (repeat n of a task is its own rollout) and are safe for concurrent use.
type Scorer interface {
	Rollout(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Outcome, error)
}

// Estimator is a Scorer that knows how long a task's rollouts take, from
// the ones it ran: the gate starts the longest first.
type Estimator interface {
	Estimate(task string) time.Duration // 0 when it does not know
}

// Outcome is one rollout as the aggregator sees it.
type Outcome struct {
	Reward float64
	// Errored says why the rollout could not run (an infrastructure
	// failure, already retried): it has no reward and the task is left out
	// of comparisons that need it.
	Errored  string
	Tokens   int64   // spent now; a cached rollout spent nothing
	Cost     float64 // USD
	Unpriced int64   // tokens of Tokens with no price
}

// recentDepth is how many recent results per task order the gate's tasks.
const recentDepth = 8

// observations is every rollout result the aggregator has seen in a run, by
// library tree, task and repeat, over its Scorer. It is what the gate knows
// before rolling anything out (dev's repeats from earlier gates), the pool
// of repeats the noise estimate comes from, and each task's recent results
// across versions, which order the gate's tasks. Safe for concurrent use.
type observations struct {
	scorer Scorer

	mu     sync.Mutex
	runs   map[obsKey]*runs
	recent map[string][]float64 // task id → latest results of any version, oldest first
}

type obsKey struct {
	tree git.Hash
	task string
}

// runs are one version's rollouts of one task: rewards by repeat (NaN where
// none is known yet).
type runs struct {
	reward []float64
}

// values returns the rewards known, in repeat order.
func (r *runs) values() []float64 {
	var out []float64
	for _, x := range r.reward {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

func newObservations(s Scorer) *observations {
	return &observations{scorer: s, runs: map[obsKey]*runs{}, recent: map[string][]float64{}}
}

func (o *observations) entry(tree git.Hash, task string) *runs {
	k := obsKey{tree, task}
	r := o.runs[k]
	if r == nil {
		r = &runs{}
		o.runs[k] = r
	}
	return r
}

// known returns the rewards of tree on task seen so far, in repeat order.
func (o *observations) known(tree git.Hash, task string) []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.runs[obsKey{tree, task}]; r != nil {
		return r.values()
	}
	return nil
}

// get returns repeat `repeat` of t on tree, rolling it out unless it is
// known. ok is false when the rollout errored.
func (o *observations) get(ctx context.Context, tree git.Hash, t eval.Task, repeat int) (reward float64, ok bool, spent Outcome, err error) {
	o.mu.Lock()
	r := o.entry(tree, t.ID)
	if repeat < len(r.reward) && !math.IsNaN(r.reward[repeat]) {
		x := r.reward[repeat]
		o.mu.Unlock()
		return x, true, Outcome{}, nil
	}
	o.mu.Unlock()
	out, err := o.scorer.Rollout(ctx, tree, t, repeat)
	if err != nil || out.Errored != "" {
		return 0, false, out, err
	}
	o.record(tree, t.ID, repeat, out.Reward)
	return out.Reward, true, out, nil
}

// rewards returns tree's rewards on task by repeat, NaN where none is
// known (yet).
func (o *observations) rewards(tree git.Hash, task string) []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.runs[obsKey{tree, task}]; r != nil {
		return slices.Clone(r.reward)
	}
	return nil
}

func (o *observations) record(tree git.Hash, task string, repeat int, reward float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.entry(tree, task)
	for len(r.reward) <= repeat {
		r.reward = append(r.reward, math.NaN())
	}
	r.reward[repeat] = reward
	rec := append(o.recent[task], reward)
	if len(rec) > recentDepth {
		rec = rec[len(rec)-recentDepth:]
	}
	o.recent[task] = rec
}

// pool returns every group of repeated rewards (one version, one task, at
// least two results) among tasks, but those of the trees in except (a gate
// counts its own versions' repeats in its own data).
func (o *observations) pool(tasks []eval.Task, except ...git.Hash) [][]float64 {
	out, _ := o.poolTasks(tasks, except...)
	return out
}

// poolTasks is pool, with how many distinct tasks the groups cover.
func (o *observations) poolTasks(tasks []eval.Task, except ...git.Hash) ([][]float64, int) {
	ids := map[string]bool{}
	for _, t := range tasks {
		ids[t.ID] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := make([]obsKey, 0, len(o.runs))
	for k := range o.runs {
		if ids[k.task] && !slices.Contains(except, k.tree) {
			keys = append(keys, k)
		}
	}
	// A fixed order, so the same observations give the same sums.
	slices.SortFunc(keys, func(a, b obsKey) int {
		return cmp.Or(strings.Compare(string(a.tree), string(b.tree)), strings.Compare(a.task, b.task))
	})
	var out [][]float64
	covered := map[string]bool{}
	for _, k := range keys {
		if g := o.runs[k].values(); len(g) >= 2 {
			out = append(out, g)
			covered[k.task] = true
		}
	}
	return out, len(covered)
}

// estimate is how long a rollout of task is expected to take, 0 when the
// scorer does not say.
func (o *observations) estimate(task string) time.Duration {
	if e, ok := o.scorer.(Estimator); ok {
		return e.Estimate(task)
	}
	return 0
}

// recentOf returns the latest results of any version on a task.
func (o *observations) recentOf(task string) []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]float64(nil), o.recent[task]...)
}

// ensure rolls out repeat 0 of every task on tree that has no result yet,
// concurrently, and returns each task's known rewards (nil where the
// rollout errored).
func (o *observations) ensure(ctx context.Context, tree git.Hash, tasks []eval.Task) ([][]float64, error) {
	out := make([][]float64, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		if k := o.known(tree, t.ID); len(k) > 0 {
			out[i] = k
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, _, err := o.get(ctx, tree, t, 0); err != nil {
				errs[i] = err
				return
			}
			out[i] = o.known(tree, t.ID)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// perTask is tree's mean reward on each of tasks over every repeat seen so
// far (at least one is rolled out), NaN where the rollout errored.
func (o *observations) perTask(ctx context.Context, tree git.Hash, tasks []eval.Task) ([]float64, error) {
	rs, err := o.ensure(ctx, tree, tasks)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = math.NaN()
		if len(r) > 0 {
			out[i] = accept.Mean(r)
		}
	}
	return out, nil
}

// meanOf is the mean of xs but NaNs, 0 when there are none.
func meanOf(xs []float64) float64 {
	var sum float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// scoreTree is the mean reward of a whole-repository tree's library (or a
// commit's) on tasks, each task's rewards averaged over every repeat seen
// so far; tasks whose rollout errored are left out.
func (a *Aggregator) scoreTree(ctx context.Context, tree git.Hash, tasks []eval.Task) (float64, error) {
	scores, err := a.perTask(ctx, tree, tasks)
	if err != nil {
		return 0, err
	}
	return meanOf(scores), nil
}

// perTask is observations.perTask of a whole-repository tree's library
// (or a commit's).
func (a *Aggregator) perTask(ctx context.Context, tree git.Hash, tasks []eval.Task) ([]float64, error) {
	lib, err := a.Repo.TreeOf(ctx, tree, a.Library.Path)
	if err != nil {
		return nil, err
	}
	return a.obs.perTask(ctx, lib, tasks)
}
