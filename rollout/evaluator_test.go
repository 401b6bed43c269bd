package rollout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// spendRunner answers every task, spending 10 tokens and $0.01; tasks
// "fail", "infra" and "refused" fail as the library's fault, as
// infrastructure's (transient) and fatally (a refused key).
type spendRunner struct{}

func (spendRunner) Run(_ context.Context, req agent.Request) (agent.Response, error) {
	resp := agent.Response{Output: "out", Tokens: 10, Cost: 0.01}
	switch req.TaskID {
	case "fail":
		return resp, errors.New("agent exited 1")
	case "infra":
		return resp, &agent.InfraError{Err: errors.New("connection refused")}
	case "refused":
		return resp, &agent.InfraError{Err: errors.New("HTTP 401"), Fatal: true}
	}
	return resp, nil
}

// spendGrader grades with 5 tokens and $0.005, and cannot grade "unscorable".
type spendGrader struct{}

func (spendGrader) Score(ctx context.Context, t eval.Task, output string) (float64, error) {
	g, err := spendGrader{}.Grade(ctx, t, output)
	return g.Reward, err
}

func (spendGrader) Grade(_ context.Context, t eval.Task, _ string) (eval.Grade, error) {
	g := eval.Grade{Reward: 1, Tokens: 5, Cost: 0.005}
	if t.ID == "unscorable" {
		return g, errors.New("judge returned no verdict")
	}
	return g, nil
}

// Every fresh rollout's spending reaches the meter exactly once, whether it
// succeeds, fails as the library's fault, fails for infrastructure or
// cannot be scored; a cached result spends nothing.
func TestEvaluatorMetersEveryFreshRolloutOnce(t *testing.T) {
	ctx, repo, lib, tree := oneFileLibrary(t)
	meter := budget.NewMeter(0, 0, nil)
	e := &Evaluator{
		Repo: repo, Library: lib, Runner: spendRunner{}, Scorer: spendGrader{},
		Limiter: sandbox.NewLimiter(2), Cache: OpenCache(t.TempDir()), Config: "c",
		WorkDir: t.TempDir(), Meter: meter, Backoff: time.Millisecond,
	}
	for _, c := range []struct {
		task    string
		wantErr bool
		tokens  int64 // the meter's total after this rollout
	}{
		{"ok", false, 15},        // agent and grader
		{"ok", false, 15},        // cached: nothing spent
		{"fail", false, 25},      // recorded as a failure, never graded
		{"infra", false, 55},     // errored: tried three times, each spent
		{"refused", true, 65},    // fatal: not recorded, but spent
		{"unscorable", true, 80}, // the grader's spending counts too
	} {
		rec, err := e.Rollout(ctx, tree, eval.Task{ID: c.task, Prompt: "p"})
		if (err != nil) != c.wantErr {
			t.Fatalf("%s: err = %v, want error %v", c.task, err, c.wantErr)
		}
		if err != nil && (rec.Task != "" || rec.Tokens != 0) {
			t.Errorf("%s: a failed rollout returned a record: %+v", c.task, rec)
		}
		if c.task == "infra" && (rec.Errored == "" || rec.Reward != 0 || rec.Tokens != 0) {
			t.Errorf("infra: record %+v, want an errored one", rec)
		}
		if tokens, _ := meter.Total(); tokens != c.tokens {
			t.Errorf("after %s: meter has %d tokens, want %d", c.task, tokens, c.tokens)
		}
	}
	if _, cost := meter.Total(); cost < 0.0799 || cost > 0.0801 {
		t.Errorf("meter has $%.4f, want $0.0800", cost)
	}
}

// countingRunner fails every rollout for infrastructure reasons and counts
// its calls.
type countingRunner struct{ calls *atomic.Int32 }

func (r countingRunner) Run(context.Context, agent.Request) (agent.Response, error) {
	r.calls.Add(1)
	return agent.Response{}, &agent.InfraError{Err: errors.New("exit status 127: not found")}
}

// A rollout that cannot run is tried three times, then errored: no reward,
// nothing on disk, and the same rollout asked again in the run is not
// tried again. Once most rollouts have errored, the run is told to stop.
func TestErroredRolloutsAreCountedNotCached(t *testing.T) {
	ctx, repo, lib, tree := oneFileLibrary(t)
	var calls atomic.Int32
	dir := t.TempDir()
	e := &Evaluator{Repo: repo, Library: lib, Runner: countingRunner{&calls}, Scorer: spendGrader{},
		Limiter: sandbox.NewLimiter(2), Cache: OpenCache(dir), Config: "c", WorkDir: t.TempDir(), Backoff: time.Millisecond}
	for i := 0; i < 2; i++ {
		rec, err := e.Rollout(ctx, tree, eval.Task{ID: "a", Prompt: "p"})
		if err != nil || rec.Errored == "" || rec.Reward != 0 {
			t.Fatalf("attempt %d: %+v, %v", i, rec, err)
		}
	}
	if calls.Load() != Attempts {
		t.Fatalf("the agent ran %d times, want %d (three tries, then remembered)", calls.Load(), Attempts)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("an errored rollout reached the cache: %v", entries)
	}
	var tooMany *TooManyErrorsError
	var err error
	for i := 0; i < minErrored; i++ {
		_, err = e.Rollout(ctx, tree, eval.Task{ID: string(rune('b' + i)), Prompt: "p"})
	}
	if !errors.As(err, &tooMany) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("after %d errored rollouts: %v", minErrored+1, err)
	}
	if st := e.Stats(); st.Errored != minErrored+1 || !strings.Contains(st.FirstError, "not found") {
		t.Fatalf("stats = %+v", st)
	}
}

// stallRunner answers at once, except that the first attempt of task
// "slow" hangs until it is stopped; it counts attempts that were stopped.
type stallRunner struct {
	slow    *atomic.Int32 // attempts of "slow" started
	stopped *atomic.Int32
}

func (r stallRunner) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	if req.TaskID == "slow" && r.slow.Add(1) == 1 {
		<-ctx.Done()
		r.stopped.Add(1)
		return agent.Response{}, ctx.Err()
	}
	time.Sleep(2 * time.Millisecond)
	return agent.Response{Output: "ok"}, nil
}

// A rollout that runs far beyond its estimate is started again on a free
// slot; the first answer wins and the stalled attempt is stopped. Without
// Hedge it would wait forever (here: until the test's deadline).
func TestHedgedRolloutTakesTheFirstAnswer(t *testing.T) {
	ctx, repo, lib, tree := oneFileLibrary(t)
	var slow, stopped atomic.Int32
	e := &Evaluator{Repo: repo, Library: lib, Runner: stallRunner{&slow, &stopped}, Scorer: spendGrader{},
		Limiter: sandbox.NewLimiter(2), Cache: OpenCache(""), Config: "c", WorkDir: t.TempDir(), Hedge: 4}
	var tasks []eval.Task
	for i := 0; i < durationMinimum; i++ {
		tasks = append(tasks, eval.Task{ID: string(rune('a' + i)), Prompt: "p"})
	}
	if _, err := e.RolloutAll(ctx, tree, tasks); err != nil { // the estimate: a few ms
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rec, err := e.Rollout(ctx, tree, eval.Task{ID: "slow", Prompt: "p"})
	if err != nil || rec.Output != "ok" {
		t.Fatalf("hedged rollout: %+v, %v", rec, err)
	}
	if st := e.Stats(); st.Hedges != 1 {
		t.Errorf("%d hedges, want 1", st.Hedges)
	}
	for deadline := time.Now().Add(5 * time.Second); stopped.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if stopped.Load() != 1 {
		t.Error("the stalled attempt was not stopped")
	}
}

// oneFileLibrary is a repository whose library skills/s holds a SKILL.md,
// and that library's tree.
func oneFileLibrary(t *testing.T) (context.Context, *git.Repo, *library.Library, git.Hash) {
	t.Helper()
	return libraryOf(t, map[string]string{"SKILL.md": "# S\n"})
}

// libraryOf commits a library skills/s holding files (paths relative to
// it) and returns its tree.
func libraryOf(tb testing.TB, files map[string]string) (context.Context, *git.Repo, *library.Library, git.Hash) {
	tb.Helper()
	ctx, repo := gittest.NewRepo(tb)
	lib := library.New("skills/s")
	for p, content := range files {
		full := filepath.Join(repo.Top(), filepath.FromSlash(lib.Path), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	head, err := repo.CommitAll(ctx, "init", git.Signature{Name: "T", Email: "t@example.com"})
	if err != nil {
		tb.Fatal(err)
	}
	tree, err := repo.TreeOf(ctx, head, lib.Path)
	if err != nil {
		tb.Fatal(err)
	}
	return ctx, repo, lib, tree
}

// failingRunner fails every rollout, as a timed-out or killed agent does.
type failingRunner struct{}

func (failingRunner) Run(context.Context, agent.Request) (agent.Response, error) {
	return agent.Response{}, errors.New("killed")
}

// A workspace is kept for the next rollout only after an agent that ended
// cleanly; after one that failed it is removed; Close removes the kept.
func TestWorkspacesKeptOnlyAfterCleanRollouts(t *testing.T) {
	ctx, repo, lib, tree := libraryOf(t, map[string]string{"SKILL.md": "s\n"})
	scorer, err := eval.NewScorer(eval.ScorerConfig{Kind: "exact"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	workspaces := func() int {
		m, _ := filepath.Glob(filepath.Join(root, "descent-rollout-*"))
		return len(m)
	}
	for _, c := range []struct {
		runner agent.Runner
		kept   int
	}{{answerRunner{}, 1}, {failingRunner{}, 0}} {
		e := &Evaluator{Repo: repo, Library: lib, Runner: c.runner, Scorer: scorer, Limiter: sandbox.NewLimiter(1), WorkDir: root}
		for i := 0; i < 3; i++ {
			if _, err := e.run(ctx, tree, eval.Task{ID: "t", Prompt: "p", Expected: "answer"}, i); err != nil {
				t.Fatal(err)
			}
		}
		if n := workspaces(); n != c.kept {
			t.Errorf("%T: %d workspaces after three rollouts, want %d", c.runner, n, c.kept)
		}
		if err := e.Close(); err != nil || workspaces() != 0 {
			t.Errorf("%T: Close left %d workspaces (%v)", c.runner, workspaces(), err)
		}
	}
}
