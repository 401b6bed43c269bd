package agent

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// Preset names a built-in CLI agent: how to run it as a rollout agent and
// as a proposer, which environment it needs, and how to read its output.
type Preset struct {
	Name string
	// Run is the rollout command; the prompt arrives on standard input.
	Run string
	// Propose is the proposer command, run in a copy of the library outside
	// the repository with the brief on standard input.
	Propose string
	// Allow are environment variables (or PREFIX_* patterns) the agent needs,
	// its credentials above all.
	Allow []string
	// Defaults are environment variables set unless the user's environment
	// sets them: no update checks or telemetry from rollouts, and few
	// retries of the client's own, since git-descent retries outages itself.
	Defaults map[string]string
	// Home is the variable naming the agent's configuration directory. Each
	// run gets a private one, seeded from the user's by Seed.
	Home string
	// Seed reads the user's configuration for the private homes; see Seed.
	Seed func(login bool) (Seed, error)
	// Layout is where the agent finds project skills, relative to its
	// working directory; %s is the library's name.
	Layout string
	// Parse reads the agent's standard output.
	Parse func(stdout []byte) (Result, error)
	// ReportsCost is set when that output says what the run cost; else
	// its tokens are priced from the library's price table.
	ReportsCost bool
	// Offline reports an output line saying the agent waits for a network
	// that is not there (nil: it never says so).
	Offline func(line []byte) bool
	// Version is the command printing the agent's version.
	Version string
}

// Result is what a CLI agent reported: its final message and usage.
type Result struct {
	Text         string
	InputTokens  int64 // prompt tokens, cached ones included
	OutputTokens int64
	Cost         float64  // USD, when the agent reports it
	Model        string   // the model it reported, if any
	Denied       []string // tool calls its permission mode refused, with the reason
}

// Tokens is input and output together.
func (r Result) Tokens() int64 { return r.InputTokens + r.OutputTokens }

// Presets are the built-in CLI agents, by name.
var Presets = map[string]*Preset{
	"claude": {
		Name: "claude",
		Run:  "claude -p --output-format json --setting-sources user,project --no-session-persistence",
		// stream-json carries the reasons of refused tool calls.
		Propose: "claude -p --output-format stream-json --verbose --setting-sources user,project --no-session-persistence --permission-mode acceptEdits",
		Allow:   []string{"ANTHROPIC_*", "CLAUDE_CODE_*"},
		Defaults: map[string]string{
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
			"DISABLE_AUTOUPDATER":                      "1",
			"DISABLE_TELEMETRY":                        "1",
			"DISABLE_ERROR_REPORTING":                  "1",
			"CLAUDE_CODE_MAX_RETRIES":                  "2",
		},
		Home:        "CLAUDE_CONFIG_DIR",
		Seed:        seedClaude,
		Layout:      ".claude/skills/%s",
		Parse:       parseClaude,
		ReportsCost: true,
		Version:     "claude --version",
	},
	"codex": {
		Name:    "codex",
		Run:     "codex exec --json --skip-git-repo-check --ephemeral --sandbox read-only -",
		Propose: "codex exec --json --skip-git-repo-check --ephemeral --sandbox workspace-write -",
		Allow:   []string{"CODEX_*", "OPENAI_*"},
		Home:    "CODEX_HOME",
		Seed:    seedCodex,
		Layout:  ".agents/skills/%s",
		Parse:   parseCodex,
		Offline: codexOffline,
		Version: "codex --version",
	},
}

// Jailed is the preset's command as it runs under the isolation level:
// under bwrap, Codex's own sandbox is off (danger-full-access), since it
// needs namespaces of its own, which it cannot make inside git-descent's,
// and git-descent's sandbox confines it to its workspace already.
func (p *Preset) Jailed(command, level string) string {
	if p.Name != "codex" || level != sandbox.LevelBwrap {
		return command
	}
	for _, mode := range []string{"--sandbox read-only", "--sandbox workspace-write"} {
		command = strings.Replace(command, mode, "--sandbox danger-full-access", 1)
	}
	return command
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
