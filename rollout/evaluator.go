package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	Cache   *Cache
	Config  string        // hash of everything besides tree and task that decides a result
	WorkDir string        // parent of rollout workspaces; "" means the system temp dir
	Meter   *budget.Meter // counts what fresh rollouts spend; may be nil

	rollouts atomic.Int64
	hits     atomic.Int64
	nanos    atomic.Int64
}

// Stats counts what an Evaluator did.
type Stats struct {
	Rollouts int64         // rollouts actually run
	Hits     int64         // results served from the cache
	Time     time.Duration // summed rollout wall time
}

// Stats returns the counters so far.
func (e *Evaluator) Stats() Stats {
	return Stats{Rollouts: e.rollouts.Load(), Hits: e.hits.Load(), Time: time.Duration(e.nanos.Load())}
}

// ConfigHash digests the parts of a library's configuration that change
// rollout results.
func ConfigHash(l *library.Library) string {
	p := l.Provider
	parts := []string{l.Run, l.Layout, l.LayoutDir(), l.Scorer, fmt.Sprint(l.Tolerance), l.ScoreCommand,
		strings.Join(l.Hide, "\x01"), l.Evals, strings.Join(l.Env, "\x01"), l.Timeout.String(),
		p.BaseURL, p.ModelFor("run"), p.ModelFor("judge"), fmt.Sprint(p.ContextBudget, p.MaxTokens)}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])
}

// Rollout returns the record of one task on the library tree libTree (the
// tree of the library directory), running it only when no cached record
// exists. An agent that fails or times out scores 0 with the error kept in
// the record; a scorer error or a cancelled context is returned.
func (e *Evaluator) Rollout(ctx context.Context, libTree git.Hash, t eval.Task) (Record, error) {
	return e.rollout(ctx, libTree, t, 0)
}

// rollout is Rollout of one repeat: repeat n of a task is its own rollout
// with its own cache entry, for agents whose answers vary.
func (e *Evaluator) rollout(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Record, error) {
	key := Key{Tree: libTree, Task: t.Hash(), Config: e.Config, Repeat: repeat}
	rec, hit, err := e.Cache.Do(ctx, key, func() (Record, error) {
		if err := e.Limiter.Acquire(ctx); err != nil {
			return Record{}, err
		}
		defer e.Limiter.Release()
		start := time.Now()
		rec, err := e.run(ctx, libTree, t)
		e.rollouts.Add(1)
		e.nanos.Add(int64(time.Since(start)))
		e.Meter.Add(rec.Tokens, rec.Cost)
		if err != nil {
			return Record{}, err
		}
		return rec, nil
	})
	if hit {
		e.hits.Add(1)
	}
	return rec, err
}

// RolloutAll rolls out every task on libTree concurrently (bounded by the
// Limiter) and returns the records in task order.
func (e *Evaluator) RolloutAll(ctx context.Context, libTree git.Hash, tasks []eval.Task) ([]Record, error) {
	runs, err := e.RolloutRepeats(ctx, libTree, tasks, 1)
	recs := make([]Record, len(runs))
	for i := range runs {
		recs[i] = runs[i][0]
	}
	return recs, err
}

// RolloutRepeats rolls out every task n times (n < 1 means 1) on libTree,
// all concurrently under the Limiter, and returns runs[task][repeat].
func (e *Evaluator) RolloutRepeats(ctx context.Context, libTree git.Hash, tasks []eval.Task, n int) ([][]Record, error) {
	n = max(n, 1)
	runs := make([][]Record, len(tasks))
	errs := make([]error, len(tasks)*n)
	var wg sync.WaitGroup
	for i, t := range tasks {
		runs[i] = make([]Record, n)
		for r := 0; r < n; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i][r], errs[i*n+r] = e.rollout(ctx, libTree, t, r)
			}()
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return runs, err // the first, in task order: one line for the user
		}
	}
	return runs, nil
}

// run does one rollout in a fresh workspace. On an error the record it
// returns carries only what was spent, for the meter; it is never kept.
func (e *Evaluator) run(ctx context.Context, libTree git.Hash, t eval.Task) (Record, error) {
	ws, err := sandbox.NewWorkspace(e.WorkDir, "descent-rollout-")
	if err != nil {
		return Record{}, err
	}
	defer ws.Remove()
	dir, control := filepath.Join(ws.Dir, "ws"), filepath.Join(ws.Dir, "control")
	for _, d := range []string{dir, control} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Record{}, err
		}
	}
	lay, err := materialize.WriteRollout(ctx, e.Repo, e.Library, libTree, dir, t.Files)
	if err != nil {
		return Record{}, err
	}
	taskFile := filepath.Join(control, "task.json")
	if err := writeAgentTask(taskFile, t, lay.Files); err != nil {
		return Record{}, err
	}
	start := time.Now()
	resp, runErr := e.Runner.Run(ctx, agent.Request{
		Library: e.Library.Name, TaskID: t.ID, Prompt: t.Prompt, TaskFile: taskFile,
		SkillDir: lay.SkillDir, Workspace: dir, Files: lay.Files, Control: control,
	})
	rec := Record{Task: t.ID, Output: resp.Output, Seconds: time.Since(start).Seconds(), Tokens: resp.Tokens, Cost: resp.Cost}
	if ctx.Err() != nil {
		return Record{}, ctx.Err()
	}
	var infra *agent.InfraError
	if errors.As(runErr, &infra) {
		// Not the library's failure: never recorded, the run stops.
		return rec, fmt.Errorf("rollout of task %q: %w", t.ID, runErr)
	}
	if runErr != nil {
		rec.Error = runErr.Error()
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

// Mean is the mean reward of records (0 for none).
func Mean(recs []Record) float64 {
	if len(recs) == 0 {
		return 0
	}
	var s float64
	for _, r := range recs {
		s += r.Reward
	}
	return s / float64(len(recs))
}
