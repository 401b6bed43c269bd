package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-descent/git-descent/llm"
)

// Chat is a Runner that asks a chat model directly, without tools: the
// library's instructions (Instructions) are the system prompt and the task,
// with the text of its input files, the user message. The reply is the
// output. It is safe for concurrent use.
type Chat struct {
	Client *llm.Client
	Budget int // characters of instructions and files per prompt
	Log    *slog.Logger

	warned sync.Map // cut reports already logged
}

// InfraError is a rollout or proposal that failed for reasons outside the
// library: the model endpoint refused or stayed unreachable, the agent is
// not logged in, its command was not found, it was killed or timed out.
// Rollouts that fail this way are never scored or cached as the library's
// failures. A Fatal one (a refused key or model, a wrong URL, no login)
// stops the run and says what to fix; the others are transient: the
// rollout is retried, then counted as errored.
type InfraError struct {
	Err   error
	Fatal bool
}

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// Transient reports whether err is an InfraError that may pass: worth
// trying again after a while.
func Transient(err error) bool {
	var infra *InfraError
	return errors.As(err, &infra) && !infra.Fatal
}

// chatPreamble introduces the skill to the model.
const chatPreamble = "The skill below is installed for you. Follow its instructions to complete the user's task.\n\n"

// Run implements Runner.
func (c *Chat) Run(ctx context.Context, req Request) (Response, error) {
	system, cut := Instructions(req.SkillDir, c.Budget*3/4)
	if cut != "" {
		if _, seen := c.warned.LoadOrStore(cut, true); !seen && c.Log != nil {
			c.Log.Warn(cut, "library", req.Library)
		}
	}
	user := req.Prompt + taskFiles(req.Files, c.Budget-len(system))
	resp, err := c.Client.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: chatPreamble + system},
		{Role: llm.RoleUser, Content: user},
	}})
	out := Response{Output: resp.Text, Tokens: resp.Usage.Tokens(), Cost: resp.Usage.Cost}
	if infrastructure(err) {
		return out, &InfraError{Err: err, Fatal: fatal(err)}
	}
	return out, err
}

// fatal tells an endpoint failure that retrying cannot fix (refused, not
// found, never sent) from one that may pass (overloaded, unreachable,
// timed out).
func fatal(err error) bool {
	var lerr *llm.Error
	return errors.As(err, &lerr) && !lerr.Retryable
}

// infrastructure tells a model endpoint's failure (refused request, wrong
// key or URL, unreachable, retries exhausted) from the model's own answer
// going wrong (a refusal, the token limit), which is the library's result.
func infrastructure(err error) bool {
	var lerr *llm.Error
	if !errors.As(err, &lerr) {
		return false
	}
	answered := lerr.Status >= 200 && lerr.Status < 300
	return !answered || lerr.Retryable
}

// taskFiles renders the task's input files for a model that cannot open
// them: text files inline, within the budget; others by name.
func taskFiles(files []string, budget int) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nFiles attached to the task:\n")
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "\n- %s (unreadable: %v)\n", name, err)
		case strings.IndexByte(string(data), 0) >= 0:
			fmt.Fprintf(&b, "\n- %s (binary, %d bytes, not shown)\n", name, len(data))
		case b.Len()+len(data) > budget:
			fmt.Fprintf(&b, "\n- %s (%d characters, over the context budget, not shown)\n", name, len(data))
		default:
			fmt.Fprintf(&b, "\n--- %s ---\n%s\n--- end of %s ---\n", name, data, name)
		}
	}
	return b.String()
}
