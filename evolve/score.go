package evolve

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/rollout"
)

// TaskSplit is one task and the split it falls in.
type TaskSplit struct {
	eval.Task
	Split eval.Split
}

// Tasks loads a library's tasks with their splits, in split then file
// order, and whether candidates are judged cross-fitted.
func Tasks(repo *git.Repo, lib *library.Library) (tasks []TaskSplit, crossFit bool, err error) {
	splits, err := loadSplits(repo, lib)
	if err != nil {
		return nil, false, err
	}
	for _, s := range eval.Splits {
		for _, t := range splits[s] {
			tasks = append(tasks, TaskSplit{Task: t, Split: s})
		}
	}
	return tasks, lib.CrossFits(len(splits[eval.Validation])), nil
}

// ScoreRequest is what git descent eval scores: the library as it is in
// Commit, on the tasks of Splits, and with BaselineNone the agent without
// the library on the same tasks.
type ScoreRequest struct {
	Commit       git.Hash
	Splits       []eval.Split
	BaselineNone bool
	// Limit, above 0, scores only the first Limit tasks of each split.
	Limit int
}

// TaskScore is one task's outcome.
type TaskScore struct {
	Task    string   `json:"task"`
	Split   string   `json:"split"`
	Reward  float64  `json:"reward"`
	Errored string   `json:"errored,omitempty"` // could not run: not scored
	Cached  bool     `json:"cached"`
	Output  string   `json:"output,omitempty"`
	None    *float64 `json:"without_library,omitempty"` // with BaselineNone
	Seconds float64  `json:"seconds"`
	Tokens  int64    `json:"tokens"`
	// Grading is the judge's verdict on each of the task's expectations.
	Grading []eval.Verdict `json:"grading,omitempty"`
	// NoneRun is the rollout without the library, with BaselineNone.
	NoneRun *TaskScore `json:"-"`
}

// SplitScore is a version's score on one split, with a 95% interval, and
// with BaselineNone the lift over no library.
type SplitScore struct {
	Split    string    `json:"split"`
	Tasks    int       `json:"tasks"`
	Scored   int       `json:"scored"` // tasks whose rollout ran
	Mean     float64   `json:"mean"`
	Lo       float64   `json:"lo"`
	Hi       float64   `json:"hi"`
	None     *float64  `json:"without_library,omitempty"`
	LiftNone *Interval `json:"lift_over_none,omitempty"`
}

// Scores is what Score measured.
type Scores struct {
	Library   string       `json:"library"`
	Commit    git.Hash     `json:"commit"`
	Tree      git.Hash     `json:"tree"` // the library's tree in it
	Isolation string       `json:"isolation"`
	Splits    []SplitScore `json:"splits"`
	Tasks     []TaskScore  `json:"tasks"`
	Rollouts  int64        `json:"rollouts"`   // run now
	CacheHits int64        `json:"cache_hits"` // served from the cache
	Tokens    int64        `json:"tokens"`
	Cost      float64      `json:"cost"`
}

// Score rolls out the library as it is in req.Commit on the tasks of
// req.Splits, each once (repeat 0, the one every gate and report uses, so
// that what evolve cached is reused and what this caches serves evolve),
// under the library's isolation, holding its lock.
func Score(ctx context.Context, repo *git.Repo, lib *library.Library, req ScoreRequest, opts Options) (*Scores, error) {
	r, err := adminRunner(ctx, repo, lib, opts, false)
	if err != nil {
		return nil, err
	}
	defer r.close()
	tree, err := repo.TreeOf(ctx, req.Commit, lib.Path)
	if err != nil {
		return nil, fmt.Errorf("%s has no %s: %w", req.Commit.Short(), lib.Path, err)
	}
	out := &Scores{Library: lib.Name, Commit: req.Commit, Tree: tree, Isolation: r.level}
	for _, s := range req.Splits {
		tasks := r.splits[s]
		if req.Limit > 0 && len(tasks) > req.Limit {
			tasks = tasks[:req.Limit]
		}
		recs, err := r.eval.RolloutAll(ctx, tree, tasks)
		if err != nil {
			return nil, err
		}
		var none []rollout.Record
		if req.BaselineNone {
			if none, err = r.eval.RolloutAll(ctx, git.EmptyTree, tasks); err != nil {
				return nil, err
			}
		}
		score := SplitScore{Split: s.String(), Tasks: len(tasks)}
		var rewards []float64
		for i, rec := range recs {
			ts := taskScore(tasks[i].ID, s, rec)
			if none != nil {
				n := taskScore(tasks[i].ID, s, none[i])
				ts.NoneRun = &n
				if none[i].Errored == "" {
					ts.None = ptr(none[i].Reward)
				}
			}
			out.Tasks = append(out.Tasks, ts)
			if rec.Errored == "" {
				rewards = append(rewards, rec.Reward)
			}
		}
		score.Scored = len(rewards)
		if len(rewards) > 0 {
			score.Mean = accept.Mean(rewards)
			score.Lo, score.Hi = accept.ScoreInterval(rewards, 0.95)
		}
		if none != nil {
			score.None = ptr(rollout.Mean(none))
			score.LiftNone = lift(recs, none)
		}
		out.Splits = append(out.Splits, score)
	}
	st := r.eval.Stats()
	out.Rollouts, out.CacheHits = st.Rollouts, st.Hits
	out.Tokens, out.Cost = r.meter.Total()
	return out, nil
}

func taskScore(id string, s eval.Split, rec rollout.Record) TaskScore {
	return TaskScore{Task: id, Split: s.String(), Reward: rec.Reward, Errored: rec.Errored, Cached: rec.Cached, Output: clip(rec.Output, 200),
		Seconds: rec.Seconds, Tokens: rec.Tokens, Grading: rec.Grading}
}

// CachedTest returns the sealed test split's cached rollouts of each
// commit's library, in task order, for the report: it runs nothing and
// takes no lock (a report may be made while a run goes on). A commit whose
// every test task is not cached maps to nil.
func CachedTest(ctx context.Context, repo *git.Repo, lib *library.Library, commits ...git.Hash) (map[git.Hash][]rollout.Record, []eval.Task, error) {
	opts := withDefaults(Options{})
	r := &runner{repo: repo, lib: lib, opts: opts, meter: budget.NewMeter(0, 0, nil), models: newModels(lib)}
	r.summary = &Summary{Library: lib.Name, Outcomes: map[ledger.Outcome]int{}, Tasks: map[string]int{}}
	defer r.close()
	var err error
	if r.splits, err = loadSplits(repo, lib); err != nil {
		return nil, nil, err
	}
	if r.eval, err = r.newEvaluator(ctx); err != nil {
		return nil, nil, err
	}
	r.eval.CachedOnly = true
	test := r.splits[eval.Test]
	out := map[git.Hash][]rollout.Record{}
	for _, c := range commits {
		tree, err := repo.TreeOf(ctx, c, lib.Path)
		if err != nil {
			continue
		}
		recs, err := r.eval.RolloutAll(ctx, tree, test)
		if err != nil {
			return nil, nil, err
		}
		complete := len(recs) > 0
		for _, rec := range recs {
			complete = complete && rec.Errored == ""
		}
		if complete {
			out[c] = recs
		}
	}
	return out, test, nil
}

// Lift is the mean paired difference of two versions' rewards on the same
// tasks with its 95% interval, nil with fewer than two pairs.
func Lift(a, b []rollout.Record) *Interval { return lift(a, b) }
