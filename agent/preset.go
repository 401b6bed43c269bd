package agent

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Preset names a built-in CLI agent: how to run it as a rollout agent and
// as a proposer, which environment it needs, and how to read its output.
type Preset struct {
	Name string
	// Run is the rollout command; the prompt arrives on standard input.
	Run string
	// Propose is the proposer command, run in the library's directory in a
	// worker's worktree with the brief on standard input.
	Propose string
	// Allow are environment variables (or PREFIX_* patterns) the agent needs,
	// its credentials above all.
	Allow []string
	// Homes are variables pointed at private directories, like HOME, so the
	// user's own configuration does not leak into rollouts.
	Homes []string
	// Layout is where the agent finds project skills, relative to its
	// working directory; %s is the library's name.
	Layout string
	// Parse reads the agent's standard output.
	Parse func(stdout []byte) (Result, error)
	// Version is the command printing the agent's version.
	Version string
}

// Result is what a CLI agent reported: its final message and usage.
type Result struct {
	Text         string
	InputTokens  int64 // prompt tokens, cached ones included
	OutputTokens int64
	Cost         float64 // USD; 0 when the agent does not report cost
	Model        string  // the model it reported, if any
}

// Tokens is input and output together.
func (r Result) Tokens() int64 { return r.InputTokens + r.OutputTokens }

// Presets are the built-in CLI agents, by name.
var Presets = map[string]*Preset{
	"claude": {
		Name:    "claude",
		Run:     "claude -p --output-format json --setting-sources project --no-session-persistence",
		Propose: "claude -p --output-format json --setting-sources project --no-session-persistence --permission-mode acceptEdits",
		Allow:   []string{"ANTHROPIC_*", "CLAUDE_CODE_*"},
		Homes:   []string{"CLAUDE_CONFIG_DIR"},
		Layout:  ".claude/skills/%s",
		Parse:   parseClaude,
		Version: "claude --version",
	},
	"codex": {
		Name:    "codex",
		Run:     "codex exec --json --skip-git-repo-check --ephemeral --sandbox read-only -",
		Propose: "codex exec --json --skip-git-repo-check --ephemeral --sandbox workspace-write -",
		Allow:   []string{"CODEX_*", "OPENAI_*"},
		Homes:   []string{"CODEX_HOME"},
		Layout:  ".agents/skills/%s",
		Parse:   parseCodex,
		Version: "codex --version",
	},
}

// WithModel returns the command with the agent's model flag added.
func WithModel(command, model string) string {
	if model == "" {
		return command
	}
	return command + " --model " + ShellQuote(model)
}

var versions sync.Map // preset name → version string

// AgentVersion runs the preset's version command once per process and
// returns e.g. "claude 2.1.251"; "claude (version unknown)" when it fails.
func (p *Preset) AgentVersion(ctx context.Context, env []string) string {
	if v, ok := versions.Load(p.Name); ok {
		return v.(string)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", p.Version)
	c.Env = env
	out, err := c.Output()
	v := p.Name + " (version unknown)"
	if f := strings.Fields(string(out)); err == nil && len(f) > 0 {
		// "2.1.251 (Claude Code)" or "codex-cli 0.155.0": keep the number.
		num := f[0]
		for _, w := range f {
			if len(w) > 0 && w[0] >= '0' && w[0] <= '9' {
				num = w
				break
			}
		}
		v = p.Name + " " + num
	}
	versions.Store(p.Name, v)
	return v
}
