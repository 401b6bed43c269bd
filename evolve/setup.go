package evolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/rollout"
	"github.com/git-descent/git-descent/sandbox"
)

// runner is one evolve run: it owns the worker worktrees (removed by close)
// and the library's refs for the duration.
type runner struct {
	repo    *git.Repo
	lib     *library.Library
	opts    Options
	refs    ledger.Refs
	splits  map[eval.Split][]eval.Task
	eval    *rollout.Evaluator
	agg     *merge.Aggregator
	workers []*worker
	summary *Summary
	roundNo int // the last aggregator round recorded in the journal
	lock    *lock
	meter   *budget.Meter // the run's spending
	models  *models       // chat-model clients, when a role uses one
	agent   string        // the runner and proposer, for evidence
}

// setup checks the preconditions of a run and prepares everything it needs:
// tasks and splits, dev and stable refs, the evaluator, the workers.
func setup(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options, meter *budget.Meter) (*runner, error) {
	if _, err := git.CheckVersion(ctx); err != nil {
		return nil, err
	}
	if err := validate(lib); err != nil {
		return nil, err
	}
	head, err := checkClean(ctx, repo, lib)
	if err != nil {
		return nil, err
	}
	if err := hooks.CheckMergeDriver(ctx, repo, lib.Path); err != nil {
		return nil, err
	}
	r := &runner{repo: repo, lib: lib, opts: opts, refs: ledger.Refs{Library: lib.Name}, meter: meter, models: newModels(lib)}
	if r.lock, err = lockLibrary(repo.DescentDir(), lib.Name); err != nil {
		return nil, err
	}
	if err := r.prepare(ctx, head); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// prepare loads the tasks, sets up the refs, the evaluator, the aggregator
// and the workers, with the library locked.
func (r *runner) prepare(ctx context.Context, head git.Hash) error {
	var err error
	if r.splits, err = loadSplits(r.repo, r.lib); err != nil {
		return err
	}
	dev, err := r.ensureRefs(ctx, head)
	if err != nil {
		return err
	}
	jh, err := ledger.OpenJournal(r.repo, r.lib.Name).Head(ctx)
	if err != nil {
		return err
	}
	r.roundNo = jh.State.Round
	r.summary = &Summary{Library: r.lib.Name, Start: dev, Outcomes: map[ledger.Outcome]int{}, Tasks: map[string]int{}}
	for s, ts := range r.splits {
		r.summary.Tasks[s.String()] = len(ts)
	}
	if err := r.newAggregator(ctx); err != nil {
		return err
	}
	return r.startWorkers(ctx, dev)
}

// newAggregator builds the evaluator and the aggregator that uses it, with
// the splits, the meter and the oracle.
func (r *runner) newAggregator(ctx context.Context) error {
	var err error
	if r.eval, err = r.newEvaluator(ctx); err != nil {
		return err
	}
	r.agg = merge.NewAggregator(r.repo, r.lib, r.splits[eval.Validation], scorer{r.eval, r.lib.Repeats}, r.opts.Log)
	r.agg.Meter = r.meter
	r.agg.Test = r.splits[eval.Test]
	r.agg.Train = map[string]eval.Task{}
	for _, t := range r.splits[eval.Train] {
		r.agg.Train[t.ID] = t
	}
	if r.lib.Oracle != "" {
		r.agg.Oracle = &oracle{repo: r.repo, lib: r.lib, exe: git.ExecutablePath()}
	}
	return nil
}

// validate checks the parts of a library's config a run needs.
func validate(l *library.Library) error {
	if _, err := eval.ParseSpec(l.Scorer); err != nil {
		return fmt.Errorf("library %q: %w", l.Name, err)
	}
	fix := func(key, what string) error {
		return fmt.Errorf("library %q has no %s: set it with `git config -f %s library.%s.%s '...'` (see `git descent init --help`)", l.Name, what, library.FileName, l.Name, key)
	}
	switch {
	case strings.TrimSpace(l.Run) == "":
		return fix("run", "run command (the agent that does a rollout)")
	case strings.TrimSpace(l.Proposer) == "":
		return fix("proposer", "proposer command (what edits the library after failures)")
	case l.Minibatch < 1:
		return fmt.Errorf("library %q: minibatch must be at least 1, not %d", l.Name, l.Minibatch)
	case l.Delta <= 0 || l.Delta >= 1:
		return fmt.Errorf("library %q: delta must be between 0 and 1, not %g", l.Name, l.Delta)
	}
	return nil
}

// checkClean refuses to run when the library is missing from HEAD or has
// uncommitted changes: proposals are made from committed versions only.
func checkClean(ctx context.Context, repo *git.Repo, lib *library.Library) (git.Hash, error) {
	if repo.Top() == "" {
		return "", errors.New("git descent evolve needs a working tree (this repository is bare)")
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return "", err
	}
	if _, err := repo.TreeOf(ctx, head, lib.Path); errors.Is(err, git.ErrPathNotFound) {
		return "", fmt.Errorf("%s is not in HEAD: commit it first (git add %s && git commit)", lib.Path, lib.Path)
	} else if err != nil {
		return "", err
	}
	dirty, err := repo.DirtyPaths(ctx, lib.Path)
	if err != nil {
		return "", err
	}
	if len(dirty) > 0 {
		ex := dirty[0]
		if len(dirty) > 1 {
			ex += fmt.Sprintf(" and %d more", len(dirty)-1)
		}
		return "", fmt.Errorf("%s has uncommitted changes (%s): commit them (git add %s && git commit) or stash them (git stash -u) first", lib.Path, ex, lib.Path)
	}
	return head, nil
}

// loadSplits reads the library's tasks from the working tree (clean, so the
// same as HEAD) and assigns them to splits.
func loadSplits(repo *git.Repo, lib *library.Library) (map[eval.Split][]eval.Task, error) {
	tasks, err := eval.Load(filepath.Join(repo.Top(), filepath.FromSlash(lib.RepoPath(lib.Evals))))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("library %q: no eval file at %s: add one, or point library.%s.evals at it", lib.Name, lib.RepoPath(lib.Evals), lib.Name)
		}
		return nil, err
	}
	fr, err := eval.ParseFractions(lib.Split)
	if err != nil {
		return nil, fmt.Errorf("library %q: split: %w", lib.Name, err)
	}
	splits := eval.Partition(tasks, lib.Seed, fr)
	if len(splits[eval.Train]) == 0 || len(splits[eval.Validation]) == 0 {
		return nil, fmt.Errorf("library %q: %d tasks give %d train and %d validation tasks; both need at least one (add tasks, or change library.%s.split or library.%s.seed)",
			lib.Name, len(tasks), len(splits[eval.Train]), len(splits[eval.Validation]), lib.Name, lib.Name)
	}
	return splits, nil
}

// ensureRefs creates dev and stable at HEAD on the first run and returns
// dev. Later runs resume from the refs as they are.
func (r *runner) ensureRefs(ctx context.Context, head git.Hash) (git.Hash, error) {
	dev, err := r.repo.ResolveRef(ctx, r.refs.Dev())
	if errors.Is(err, git.ErrRefNotFound) {
		if err := r.repo.SetRef(ctx, git.SetRefRequest{Ref: r.refs.Dev(), Hash: head, Reason: "git-descent: start dev"}); err != nil {
			return "", err
		}
		fmt.Fprintf(r.opts.Out, "created %s at HEAD (%s)\n", ledger.Short(r.refs.Dev()), head.Short())
		dev = head
	} else if err != nil {
		return "", err
	}
	if _, err := r.repo.ResolveRef(ctx, r.refs.Stable()); errors.Is(err, git.ErrRefNotFound) {
		if err := r.repo.SetRef(ctx, git.SetRefRequest{Ref: r.refs.Stable(), Hash: dev, Reason: "git-descent: start stable"}); err != nil {
			return "", err
		}
		fmt.Fprintf(r.opts.Out, "created %s at %s\n", ledger.Short(r.refs.Stable()), dev.Short())
	} else if err != nil {
		return "", err
	}
	if _, err := r.repo.TreeOf(ctx, dev, r.lib.Path); err != nil {
		return "", fmt.Errorf("%s has no %s: %w (delete the ref to start over from HEAD)", ledger.Short(r.refs.Dev()), r.lib.Path, err)
	}
	return dev, nil
}

// newEvaluator builds the cached rollout evaluator of the library: its
// runner, its scorer (with the judge's model when it has one), the shared
// rollout limit and the cache.
func (r *runner) newEvaluator(ctx context.Context) (*rollout.Evaluator, error) {
	lib, exe := r.lib, git.ExecutablePath()
	run := func(ctx context.Context, command, dir string, env []string, stdin []byte) ([]byte, error) {
		res, err := sandbox.Run(ctx, sandbox.Spec{Command: command, Dir: dir, Env: env, Stdin: stdin, Timeout: lib.Timeout})
		return res.Stdout, err
	}
	cfg := eval.ScorerConfig{Kind: lib.Scorer, Tolerance: lib.Tolerance, Command: lib.ScoreCommand, Dir: r.repo.Top(), Env: sandbox.Environ(lib.Env, nil, exe)}
	if parts, _ := eval.ParseSpec(lib.Scorer); usesJudge(parts) {
		c, err := r.models.client("judge")
		if err != nil {
			return nil, err
		}
		cfg.Judge = c
	}
	sc, err := eval.NewScorer(cfg, run)
	if err != nil {
		return nil, fmt.Errorf("library %q: %w", lib.Name, err)
	}
	runner, name, err := newRunner(ctx, lib, r.models, exe, r.opts.Log)
	if err != nil {
		return nil, err
	}
	r.agent = "run: " + name
	return &rollout.Evaluator{
		Repo: r.repo, Library: lib, Scorer: sc, Runner: runner,
		Limiter: sandbox.NewLimiter(r.opts.Jobs),
		Cache:   rollout.OpenCache(filepath.Join(r.repo.DescentDir(), "cache", lib.Name, "rollouts")),
		Config:  rollout.ConfigHash(lib),
		Meter:   r.meter,
	}, nil
}

func usesJudge(parts []eval.Part) bool {
	for _, p := range parts {
		if p.Kind == "judge" {
			return true
		}
	}
	return false
}

// scorer adapts the rollout evaluator to the aggregator's needs: repeats
// rollouts of each task, their mean, and what fresh ones spent.
type scorer struct {
	e       *rollout.Evaluator
	repeats int
}

func (s scorer) Score(ctx context.Context, libTree git.Hash, tasks []eval.Task) (merge.Scores, error) {
	runs, err := s.e.RolloutRepeats(ctx, libTree, tasks, s.repeats)
	if err != nil {
		return merge.Scores{}, err
	}
	out := merge.Scores{Rewards: make([]float64, len(runs)), Runs: make([][]float64, len(runs))}
	for i, recs := range runs {
		out.Runs[i] = rewards(recs)
		out.Rewards[i] = rollout.Mean(recs)
		spend := spent(recs)
		out.Tokens += spend.tokens
		out.Cost += spend.cost
	}
	return out, nil
}

// startWorkers gives each worker a fresh worktree at dev, after removing
// any a crashed run left behind.
func (r *runner) startWorkers(ctx context.Context, dev git.Hash) error {
	if err := materialize.RemoveWorkers(ctx, r.repo, r.lib); err != nil {
		return err
	}
	proposer, name, err := newProposer(ctx, r.lib, r.models, git.ExecutablePath())
	if err != nil {
		return err
	}
	r.agent += "; propose: " + name
	order := shuffled(r.splits[eval.Train], r.lib.Seed)
	for i := 1; i <= r.opts.Workers; i++ {
		id := ledger.WorkerID(i)
		wt, err := r.repo.AddWorktree(ctx, materialize.WorkerDir(r.repo, r.lib, id), dev, []string{r.lib.Path})
		if err != nil {
			return err
		}
		r.workers = append(r.workers, &worker{id: id, index: i - 1, r: r, wt: wt, proposer: proposer, train: order})
	}
	if r.lib.Staleness == library.StalenessReflective {
		wt, err := r.repo.AddWorktree(ctx, materialize.WorkerDir(r.repo, r.lib, "repair"), dev, []string{r.lib.Path})
		if err != nil {
			return err
		}
		r.agg.Repairer = &repairer{r: r, wt: wt, w: &worker{id: "repair", r: r, wt: wt, proposer: proposer, train: order}}
	}
	return nil
}

// close removes the worker worktrees and releases the library.
func (r *runner) close() {
	if err := materialize.RemoveWorkers(context.Background(), r.repo, r.lib); err != nil {
		r.opts.Log.Warn("remove worker worktrees", "err", err)
	}
	r.lock.release()
}
