package evolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/rollout"
	"github.com/git-descent/git-descent/sandbox"
)

// runner is one evolve run: it owns the proposers' seats (removed by close)
// and the library's refs for the duration.
type runner struct {
	repo    *git.Repo
	lib     *library.Library
	opts    Options
	refs    ledger.Refs
	splits  map[eval.Split][]eval.Task
	eval    *rollout.Evaluator
	agg     *aggregate.Aggregator
	workers []*worker
	seats   []*materialize.Seat // the workers' and the repairer's, removed by close
	summary *Summary
	roundNo int // the last aggregator round recorded in the journal
	lock    *lock
	meter   *budget.Meter // the run's spending
	models  *models       // chat-model clients, when a role uses one
	agent   string        // the runner and proposer, for evidence
	start   time.Time     // when the run began

	level     string // the isolation level processes run under (sandbox.LevelNone or LevelBwrap)
	isolation string // the line that reports it

	resumed    bool         // dev and stable existed: the run goes on from them
	prog       progress     // what the run is doing, for Status
	roundsDone atomic.Int64 // aggregator rounds decided by this run

	// started is set when this run created dev, stable and the journal:
	// a run that fails before deciding anything takes them back (unstart).
	started *ledger.Started

	// role is what the run is: an evolve run (""), one remote worker
	// (git descent work: no aggregator rounds) or an aggregator of remote
	// workers (git descent aggregate: no workers of its own).
	role string
}

// The roles of a runner other than evolve's.
const (
	roleWork      = "work"
	roleAggregate = "aggregate"
)

// setup checks the preconditions of a run and prepares everything it needs:
// tasks and splits, dev and stable refs, the evaluator, the workers.
func setup(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options, meter *budget.Meter) (*runner, error) {
	return setupAs(ctx, repo, lib, opts, meter, "", nil)
}

// setupAs is setup for a runner of the given role, with the library
// already locked when lk is set (the runner then owns the lock).
func setupAs(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options, meter *budget.Meter, role string, lk *lock) (*runner, error) {
	fail := func(err error) (*runner, error) {
		lk.release() // nil when not given
		return nil, err
	}
	if _, err := git.CheckVersion(ctx, opts.Log); err != nil {
		return fail(err)
	}
	if err := validate(lib); err != nil {
		return fail(err)
	}
	head, err := checkClean(ctx, repo, lib)
	if err != nil {
		return fail(err)
	}
	if err := hooks.CheckMergeDriver(ctx, repo, lib.Path); err != nil {
		return fail(err)
	}
	r := &runner{repo: repo, lib: lib, opts: opts, refs: ledger.Refs{Library: lib.Name}, meter: meter, models: newModels(lib), role: role}
	if r.lock = lk; r.lock == nil {
		if r.lock, err = lockLibrary(repo.DescentDir(), lib.Name); err != nil {
			return nil, err
		}
	}
	if err := r.prepare(ctx, head); err != nil {
		if !errors.Is(err, context.Canceled) {
			r.unstart()
		}
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
	if err := eval.CheckTasks(r.lib.Scorer, slices.Concat(r.splits[eval.Train], r.splits[eval.Validation], r.splits[eval.Test])); err != nil {
		return fmt.Errorf("library %q: %w", r.lib.Name, err)
	}
	dev, err := r.ensureRefs(ctx, head)
	if err != nil {
		return err
	}
	if err := r.noticeBranch(ctx, head, dev); err != nil {
		return err
	}
	jh, err := ledger.OpenJournal(r.repo, r.lib.Name).Head(ctx)
	if err != nil {
		return err
	}
	r.roundNo = jh.State.Round
	if r.resumed && r.role == "" {
		fmt.Fprintf(r.opts.Out, "resuming from %s at %s, after round %d\n", ledger.Short(r.refs.Dev()), dev.Short(), r.roundNo)
	}
	r.summary = &Summary{Library: r.lib.Name, Start: dev, Outcomes: map[ledger.Outcome]int{}, Tasks: map[string]int{}, Validation: library.ValidationSplit, History: []Point{}, Resumed: r.resumed}
	if r.crossFit() {
		r.summary.Validation = library.ValidationCross
	}
	for s, ts := range r.splits {
		r.summary.Tasks[s.String()] = len(ts)
	}
	if err := r.isolate(); err != nil {
		return err
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
	r.agg = aggregate.NewAggregator(r.repo, r.lib, r.validation(), scorer{r.eval}, r.opts.Log)
	r.agg.Meter = r.meter
	r.agg.Test = r.splits[eval.Test]
	r.agg.Jobs = r.opts.Jobs
	r.agg.Gates = r.opts.Workers
	r.agg.CrossFit = r.crossFit()
	r.agg.Train = map[string]eval.Task{}
	for _, t := range r.train() {
		r.agg.Train[t.ID] = t
	}
	if r.lib.Oracle != "" {
		r.agg.Oracle = &oracle{repo: r.repo, lib: r.lib, exe: git.ExecutablePath(), jail: r.jail(false, r.lib.OracleTimeout)}
	}
	return nil
}

// crossFit reports whether candidates are judged cross-fitted (see
// library.Library.Validation): asked for, or automatic for a validation
// split too small to tell a one-task gain from a fluke.
func (r *runner) crossFit() bool {
	return r.lib.CrossFits(len(r.splits[eval.Validation]))
}

// train is the tasks workers learn from: the train split, or cross-fitted
// the train and validation splits together.
func (r *runner) train() []eval.Task {
	if r.crossFit() {
		return append(append([]eval.Task(nil), r.splits[eval.Train]...), r.splits[eval.Validation]...)
	}
	return r.splits[eval.Train]
}

// minibatch is how many train tasks a worker takes per round: the
// library's minibatch, but cross-fitted never so many that fewer than 3 of
// the pooled tasks (or, with fewer than 4, one) are left to judge its
// proposal on.
func (r *runner) minibatch() int {
	m := r.lib.Minibatch
	if r.crossFit() {
		pool := len(r.splits[eval.Train]) + len(r.splits[eval.Validation])
		m = min(m, max(1, pool-3))
	}
	return m
}

// validation is the tasks the gate and the reports judge versions on: the
// validation split, or cross-fitted the same pool as train() (each
// candidate is then judged on the part its proposers never saw).
func (r *runner) validation() []eval.Task {
	if r.crossFit() {
		return r.train()
	}
	return r.splits[eval.Validation]
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
	nTrain, nVal := len(splits[eval.Train]), len(splits[eval.Validation])
	cross := lib.CrossFits(nVal)
	if cross && nTrain+nVal < 2 || !cross && (nTrain == 0 || nVal == 0) {
		return nil, fmt.Errorf("library %q: %d tasks give %d train, %d validation and %d test tasks: too few to learn from and judge (add tasks, or change library.%s.split or library.%s.seed)",
			lib.Name, len(tasks), nTrain, nVal, len(splits[eval.Test]), lib.Name, lib.Name)
	}
	return splits, nil
}

// unstart deletes the refs this run created when it decided nothing: a
// failed first run leaves the repository as it found it. It says so.
func (r *runner) unstart() {
	if r.started == nil {
		return
	}
	if err := ledger.Unstart(context.Background(), r.repo, *r.started); err != nil {
		r.opts.Log.Warn("remove the refs this failed run created", "err", err)
		return
	}
	fmt.Fprintf(r.opts.Out, "removed %s and %s: the run failed before deciding anything\n", ledger.Short(r.refs.Dev()), ledger.Short(r.refs.Stable()))
	r.started = nil
}

// noticeBranch says when the library on the user's branch (head) has
// changed since the last commit it shares with dev: dev evolves without
// those changes until git descent sync brings them in.
func (r *runner) noticeBranch(ctx context.Context, head, dev git.Hash) error {
	base, err := r.repo.MergeBase(ctx, head, dev)
	if err != nil || base.IsZero() || base == head {
		return err
	}
	was, err := r.repo.TreeOf(ctx, base, r.lib.Path)
	if err != nil {
		return nil // the library is new on the branch since; dev has its own
	}
	now, err := r.repo.TreeOf(ctx, head, r.lib.Path)
	if err != nil || now == was {
		return err
	}
	fmt.Fprintf(r.opts.Out, "note: %s changed on your branch since dev last shared it (%s); dev evolves without those changes until: git descent sync %s\n",
		r.lib.Path, base.Short(), r.lib.Name)
	return nil
}

// ensureRefs creates dev and stable at HEAD on the first run and returns
// dev. Later runs resume from the refs as they are.
func (r *runner) ensureRefs(ctx context.Context, head git.Hash) (git.Hash, error) {
	dev, created, err := ledger.Start(ctx, r.repo, r.lib.Name, head)
	if err != nil {
		return "", err
	}
	if slices.Contains(created, r.refs.Dev()) && slices.Contains(created, r.refs.Stable()) {
		jh, err := ledger.OpenJournal(r.repo, r.lib.Name).Head(ctx)
		if err != nil {
			return "", err
		}
		if jh.State.Round == 0 && jh.Commit != "" {
			r.started = &ledger.Started{Library: r.lib.Name, Dev: dev, Journal: jh.Commit}
		}
	}
	r.resumed = len(created) == 0
	for _, ref := range created {
		if ref == r.refs.Dev() {
			fmt.Fprintf(r.opts.Out, "created %s at HEAD (%s)\n", ledger.Short(ref), head.Short())
		} else {
			fmt.Fprintf(r.opts.Out, "created %s at %s\n", ledger.Short(ref), dev.Short())
		}
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
	cfg := eval.ScorerConfig{Kind: lib.Scorer, Tolerance: lib.Tolerance, Command: library.ExpandRepo(lib.ScoreCommand, r.repo.Top()), Dir: r.repo.Top(), Env: sandbox.Environ(lib.Env, nil, exe)}
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
	runner, name, err := r.opts.Runner, "in-process "+r.opts.AgentName, error(nil)
	if runner == nil {
		runner, name, err = newRunner(ctx, lib, r.repo.Top(), r.models, exe, r.jail, r.opts.Log)
	}
	if err != nil {
		return nil, err
	}
	r.agent = "run: " + name
	var agentConfig []string
	if r.opts.Runner != nil {
		agentConfig = append(agentConfig, name)
	}
	if ex, ok := runner.(*agent.Exec); ok && ex.CLI != nil {
		agentConfig = append(agentConfig, ex.CLI.Fingerprint())
		if note := ex.CLI.PriceNote(lib.Run); note != "" {
			fmt.Fprintln(r.opts.Out, note)
		}
	}
	config, err := rollout.ConfigHash(lib, r.repo.Top(), agentConfig...)
	if err != nil {
		return nil, err
	}
	cacheDir := CacheDir(r.repo, lib)
	if r.opts.NoCache {
		cacheDir = ""
	}
	return &rollout.Evaluator{
		Repo: r.repo, Library: lib, Scorer: sc, Runner: runner,
		Limiter: sandbox.NewLimiter(r.opts.Jobs),
		WorkDir: sandbox.WorkspaceRoot(),
		Cache:   rollout.OpenCache(cacheDir),
		Config:  config,
		Meter:   r.meter,
		Backoff: r.opts.Backoff,
		Hedge:   r.opts.Hedge,
		Log:     r.opts.Log,
	}, nil
}

// CacheDir is where a library's rollouts are cached.
func CacheDir(repo *git.Repo, lib *library.Library) string {
	return filepath.Join(repo.DescentDir(), "cache", lib.Name, "rollouts")
}

func usesJudge(parts []eval.Part) bool {
	for _, p := range parts {
		if p.Kind == "judge" {
			return true
		}
	}
	return false
}

// scorer adapts the rollout evaluator to the aggregator: one rollout of a
// version on a task, and what it spent if it was fresh.
type scorer struct{ e *rollout.Evaluator }

// Estimate implements aggregate.Estimator.
func (s scorer) Estimate(task string) time.Duration { return s.e.Estimate(task) }

func (s scorer) Rollout(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (aggregate.Outcome, error) {
	rec, err := s.e.RolloutRepeat(ctx, libTree, t, repeat)
	out := aggregate.Outcome{Reward: rec.Reward, Errored: rec.Errored}
	if !rec.Cached {
		out.Tokens, out.Cost, out.Unpriced = rec.Tokens, rec.Cost, rec.Unpriced
	}
	return out, err
}

// startWorkers gives each worker a seat at dev, after removing the worker
// worktrees that runs of earlier versions left behind.
func (r *runner) startWorkers(ctx context.Context, dev git.Hash) error {
	if err := r.removeOldWorktrees(ctx); err != nil {
		return err
	}
	// A killed run's proposer control directories: in the workspace root
	// (sandbox.WorkspaceRoot cleans it), or, made by older versions, under
	// .git/descent/tmp.
	sandbox.CleanDead(filepath.Join(r.repo.DescentDir(), "tmp"))
	proposer, name, err := r.opts.Proposer, "in-process "+r.opts.AgentName, error(nil)
	if proposer == nil {
		proposer, name, err = newProposer(ctx, r.lib, r.repo.Top(), r.models, git.ExecutablePath(), r.jail)
	}
	if err != nil {
		return err
	}
	r.agent += "; propose: " + name
	order := shuffled(r.train(), r.lib.Seed)
	for i := 1; i <= r.opts.Workers && r.role != roleAggregate; i++ {
		id := ledger.WorkerID(i)
		dir, err := r.newSeat("w" + id)
		if err != nil {
			return err
		}
		r.workers = append(r.workers, &worker{seat: seat{id: id, dir: dir, proposer: proposer}, index: i - 1, r: r, train: order})
	}
	if r.lib.Staleness == library.StalenessReflective {
		dir, err := r.newSeat("repair")
		if err != nil {
			return err
		}
		r.agg.Repairer = &repairer{r: r, seat: seat{id: "repair", dir: dir, proposer: proposer}}
	}
	return nil
}

// controlRoot is where proposers' control directories (the failures, the
// brief, the rationale, the proposer's home and temporary directory) go:
// beside the seats and the rollout workspaces, outside the repository, so
// that no git command a proposer runs from them finds it.
func (r *runner) controlRoot() string { return sandbox.WorkspaceRoot() }

// newSeat makes a proposer's directory beside the rollout workspaces, and
// remembers it so that close removes it.
func (r *runner) newSeat(name string) (*materialize.Seat, error) {
	s, err := materialize.NewSeat(r.repo, r.lib, sandbox.WorkspaceRoot(), name)
	if err != nil {
		return nil, err
	}
	r.seats = append(r.seats, s)
	return s, nil
}

// removeOldWorktrees removes the worker worktrees under
// .git/descent/worktrees/<lib> that git-descent made before decision 58,
// with git's record of them.
func (r *runner) removeOldWorktrees(ctx context.Context) error {
	root := filepath.Join(r.repo.DescentDir(), "worktrees", r.lib.Name)
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := r.repo.RemoveWorktree(ctx, filepath.Join(root, e.Name())); err != nil {
			return err
		}
	}
	return r.repo.RemoveWorktree(ctx, root)
}

// close removes the proposers' seats and the rollout workspaces, closes
// the rollout cache and releases the library.
func (r *runner) close() {
	if r.eval != nil {
		if err := r.eval.Cache.Close(); err != nil {
			r.opts.Log.Warn("close the rollout cache", "err", err)
		}
		if err := r.eval.Close(); err != nil {
			r.opts.Log.Warn("remove the rollout workspaces", "err", err)
		}
	}
	for _, s := range r.seats {
		if err := s.Remove(); err != nil {
			r.opts.Log.Warn("remove a proposer's directory", "dir", s.Dir, "err", err)
		}
	}
	r.lock.release()
}
