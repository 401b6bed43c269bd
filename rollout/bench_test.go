package rollout

import (
	"context"
	"fmt"
	"testing"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/sandbox"
)

// answerRunner answers at once, in process.
type answerRunner struct{}

func (answerRunner) Run(context.Context, agent.Request) (agent.Response, error) {
	return agent.Response{Output: "answer"}, nil
}

// BenchmarkRollout measures one uncached rollout of a 20-file library:
// the workspace laid out and removed, the agent run, the answer scored. The
// in-process agent shows what the workspace costs; `echo` adds a process.
//
//	go test -run '^$' -bench Rollout ./rollout
func BenchmarkRollout(b *testing.B) {
	files := map[string]string{"SKILL.md": "file 0\n"}
	for i := 1; i < 20; i++ {
		files[fmt.Sprintf("references/r%02d.md", i)] = fmt.Sprintf("file %d\n", i)
	}
	ctx, repo, lib, tree := libraryOf(b, files)
	scorer, err := eval.NewScorer(eval.ScorerConfig{Kind: "exact"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		runner agent.Runner
	}{{"in-process", answerRunner{}}, {"echo", &agent.Exec{Command: "echo answer"}}} {
		b.Run(c.name, func(b *testing.B) {
			e := &Evaluator{Repo: repo, Library: lib, Runner: c.runner, Scorer: scorer,
				Limiter: sandbox.NewLimiter(1), WorkDir: sandbox.WorkspaceRoot()}
			for i := 0; i < b.N; i++ {
				if _, err := e.run(ctx, tree, eval.Task{ID: "t", Prompt: "p", Expected: "answer"}, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
