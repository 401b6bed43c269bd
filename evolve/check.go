package evolve

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// Finding is one thing git descent doctor checked.
type Finding struct {
	OK   bool   `json:"ok"`
	Text string `json:"text"`
}

// Check looks at what an evolve of lib needs, without running an agent:
// the configuration, the evals and their split, the isolation level, the
// merge driver, and every chat-model endpoint a role uses (asked for its
// models, so it costs nothing).
func Check(ctx context.Context, repo *git.Repo, lib *library.Library) []Finding {
	var out []Finding
	add := func(err error, ok string) bool {
		if err != nil {
			out = append(out, Finding{Text: err.Error()})
			return false
		}
		out = append(out, Finding{OK: true, Text: ok})
		return true
	}
	add(validate(lib), fmt.Sprintf("config: run = %s, proposer = %s, scorer = %s", orNone(lib.Run), orNone(lib.Proposer), lib.Scorer))
	if splits, err := loadSplits(repo, lib); add(err, "") {
		n := len(splits[eval.Train]) + len(splits[eval.Validation]) + len(splits[eval.Test])
		out[len(out)-1].Text = fmt.Sprintf("evals: %d tasks in %s: %d train, %d validation, %d test", n, lib.RepoPath(lib.Evals),
			len(splits[eval.Train]), len(splits[eval.Validation]), len(splits[eval.Test]))
		if err := eval.CheckTasks(lib.Scorer, slices.Concat(splits[eval.Train], splits[eval.Validation], splits[eval.Test])); err != nil {
			add(err, "")
		}
	}
	_, why, err := sandbox.Resolve(lib.Isolation)
	add(err, why)
	add(hooks.CheckMergeDriver(ctx, repo, lib.Path), "merge driver registered for "+lib.Path)
	ms := newModels(lib)
	var seen []string
	for _, role := range chatRoles(lib) {
		c, err := ms.client(role)
		if !add(err, "") {
			continue
		}
		out = out[:len(out)-1]
		cfg := c.Config()
		if slices.Contains(seen, cfg.Model) {
			continue
		}
		seen = append(seen, cfg.Model)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		add(c.Reach(rctx), fmt.Sprintf("endpoint %s answers (the %s's model %s)", c.Endpoint(), roleName(role), cfg.Model))
		cancel()
	}
	return out
}

// chatRoles are the roles of lib that call a chat model.
func chatRoles(lib *library.Library) []string {
	var roles []string
	if lib.Run == library.RunnerOpenAI {
		roles = append(roles, "run")
	}
	if lib.Proposer == library.RunnerOpenAI {
		roles = append(roles, "proposer")
	}
	if parts, err := eval.ParseSpec(lib.Scorer); err == nil && usesJudge(parts) {
		roles = append(roles, "judge")
	}
	return roles
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
