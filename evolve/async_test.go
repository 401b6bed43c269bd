package evolve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/library"
)

type runFunc func(ctx context.Context, req agent.Request) (agent.Response, error)

func (f runFunc) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	return f(ctx, req)
}

type proposeFunc func(ctx context.Context, req agent.ProposeRequest) (agent.Rationale, error)

func (f proposeFunc) Propose(ctx context.Context, req agent.ProposeRequest) (agent.Rationale, error) {
	return f(ctx, req)
}

// The asynchronous runtime's workers start while the baseline is measured
// (a worker's proposer runs before the baseline's rollouts end), but
// write nothing before it is in: a dev that already meets --target ends
// the run with no proposal written.
func TestAsyncWorkersStartDuringTheBaseline(t *testing.T) {
	ctx, repo, lib := libraryRepo(t, 30, "right", nil, map[string]string{"run": "echo", "proposer": "true", "validation": "split"})
	splits, err := loadSplits(repo, lib)
	if err != nil {
		t.Fatal(err)
	}
	validation := map[string]bool{}
	for _, task := range splits[eval.Validation] {
		validation[task.ID] = true
	}
	// Validation tasks pass, slowly; train tasks fail at once.
	var proposed, overlapped atomic.Bool
	runner := runFunc(func(ctx context.Context, req agent.Request) (agent.Response, error) {
		if !validation[req.TaskID] {
			return agent.Response{Output: "wrong"}, nil
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return agent.Response{}, ctx.Err()
		}
		if proposed.Load() {
			overlapped.Store(true)
		}
		return agent.Response{Output: "right"}, nil
	})
	proposer := proposeFunc(func(ctx context.Context, req agent.ProposeRequest) (agent.Rationale, error) {
		proposed.Store(true)
		f := filepath.Join(req.SkillDir, "SKILL.md")
		data, err := os.ReadFile(f)
		if err != nil {
			return agent.Rationale{}, err
		}
		return agent.Rationale{Subject: "Say right"}, os.WriteFile(f, append(data, "Say right.\n"...), 0o644)
	})
	sum, err := Evolve(ctx, repo, lib, Options{Workers: 2, Rounds: 2, Jobs: 64, Async: true, Target: 0.5,
		Runner: runner, Proposer: proposer, AgentName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stop != "target" || sum.Baseline != 1 {
		t.Fatalf("stop %q, baseline %.2f: want the target met by the baseline", sum.Stop, sum.Baseline)
	}
	if !overlapped.Load() {
		t.Error("no worker's proposer ran before the baseline's rollouts ended")
	}
	refs, err := repo.ListRefs(ctx, "refs/heads/descent/s/w/")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 0 {
		t.Errorf("proposals written in a run whose baseline met the target: %v", refs)
	}
}

// writeFiles writes files (by slash path) under dir.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// libraryRepo makes a repository with library s at skills/s: a one-line
// SKILL.md, tasks eval tasks expecting expected, files beside it, the
// library's settings config (path set), the merge driver, all committed.
func libraryRepo(tb testing.TB, tasks int, expected string, files, config map[string]string) (context.Context, *git.Repo, *library.Library) {
	tb.Helper()
	ctx, repo := gittest.NewRepo(tb)
	evals := `{"evals": [`
	for i := 0; i < tasks; i++ {
		if i > 0 {
			evals += ","
		}
		evals += fmt.Sprintf(`{"id": "t%02d", "prompt": "p", "expected_output": %q}`, i, expected)
	}
	writeFiles(tb, repo.Top(), files)
	writeFiles(tb, repo.Top(), map[string]string{"skills/s/SKILL.md": "# S\n", "skills/s/evals/evals.json": evals + "]}"})
	file := library.File(repo)
	if err := repo.ConfigSet(ctx, file, "library.s.path", "skills/s"); err != nil {
		tb.Fatal(err)
	}
	for k, v := range config {
		if err := repo.ConfigSet(ctx, file, "library.s."+k, v); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := hooks.InstallMergeDriver(ctx, repo, "skills/s", false); err != nil {
		tb.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "init", git.Signature{Name: "T", Email: "t@example.com"}); err != nil {
		tb.Fatal(err)
	}
	lib, err := library.Find(ctx, repo, "s")
	if err != nil {
		tb.Fatal(err)
	}
	return ctx, repo, lib
}
