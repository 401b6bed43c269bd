package evolve

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/llm"
	"github.com/git-descent/git-descent/sandbox"
)

// models hands out the run's chat-model clients: one per role, all sharing
// one concurrency limit for the library's endpoint. It is safe for
// concurrent use.
type models struct {
	lib *library.Library
	lim *llm.Limiter

	mu      sync.Mutex
	clients map[string]*llm.Client // by model
}

func newModels(lib *library.Library) *models {
	return &models{lib: lib, lim: llm.NewLimiter(lib.Provider.Concurrency), clients: map[string]*llm.Client{}}
}

// client returns the client of a role ("run", "proposer", "judge"),
// reading the key from the environment.
func (m *models) client(role string) (*llm.Client, error) {
	p := m.lib.Provider
	model := p.ModelFor(role)
	if model == "" {
		return nil, fmt.Errorf("library %q: the %s needs a model: set descent.model (or %s-model) in git config or %s", m.lib.Name, roleName(role), role, library.FileName)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[model]; ok {
		return c, nil
	}
	key, err := p.Key()
	if err != nil {
		return nil, fmt.Errorf("library %q: %w", m.lib.Name, err)
	}
	price := p.Prices[model]
	cfg := llm.Config{
		BaseURL: p.BaseURL, Model: model, Key: key, KeyEnv: p.KeyEnv,
		Timeout: p.Timeout, MaxRetries: p.Retries, MaxTokens: p.MaxTokens,
		Price: llm.Price{Input: price.Input, Output: price.Output},
	}
	if p.Temperature != nil {
		t := float32(*p.Temperature)
		cfg.Temperature = &t
	}
	c, err := llm.New(cfg, m.lim)
	if err != nil {
		return nil, fmt.Errorf("library %q: %w", m.lib.Name, err)
	}
	m.clients[model] = c
	return c, nil
}

func roleName(role string) string {
	return map[string]string{"run": "openai runner", "proposer": "openai proposer", "judge": "judge scorer"}[role]
}

// Usage totals every client's requests, retries, tokens and cost.
func (m *models) Usage() llm.Usage {
	if m == nil {
		return llm.Usage{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var u llm.Usage
	for _, c := range m.clients {
		u.Add(c.Usage())
	}
	return u
}

// newRunner builds the library's rollout agent from its `run` setting: a
// chat model (openai), a CLI agent preset (claude, codex), or a command.
// It also returns how the agent is named in evidence.
func newRunner(ctx context.Context, lib *library.Library, top string, ms *models, exe string, jail jailFunc, log *slog.Logger) (agent.Runner, string, error) {
	switch lib.Run {
	case library.RunnerOpenAI:
		c, err := ms.client("run")
		if err != nil {
			return nil, "", err
		}
		return &agent.Chat{Client: c, Budget: lib.Provider.ContextBudget, Log: log}, "openai " + c.Config().Model, nil
	case library.RunnerClaude, library.RunnerCodex:
		p := agent.Presets[lib.Run]
		model := lib.Provider.RunModel
		cli, allow, err := newCLI(lib, p, model)
		if err != nil {
			return nil, "", err
		}
		j := jail(true, lib.Timeout)
		return &agent.Exec{Command: agent.WithModel(p.Jailed(p.Run, j.Level), model), Allow: allow, Timeout: lib.Timeout, ExePath: exe, CLI: cli, Jail: j},
			p.AgentVersion(ctx, sandbox.Environ(allow, nil, exe)), nil
	}
	return &agent.Exec{Command: library.ExpandRepo(lib.Run, top), Allow: lib.Env, Timeout: lib.Timeout, ExePath: exe, Jail: jail(false, lib.Timeout)}, "command", nil
}

// newProposer builds the library's proposer from its `proposer` setting,
// like newRunner.
func newProposer(ctx context.Context, lib *library.Library, top string, ms *models, exe string, jail jailFunc) (agent.Proposer, string, error) {
	switch lib.Proposer {
	case library.RunnerOpenAI:
		c, err := ms.client("proposer")
		if err != nil {
			return nil, "", err
		}
		return &agent.Reflect{Client: c, Budget: lib.Provider.ContextBudget, Guarded: lib.Guarded, Evals: lib.Evals}, "openai " + c.Config().Model, nil
	case library.RunnerClaude, library.RunnerCodex:
		p := agent.Presets[lib.Proposer]
		model := lib.Provider.ProposerModel
		cli, allow, err := newCLI(lib, p, model)
		if err != nil {
			return nil, "", err
		}
		j := jail(true, lib.ProposeTimeout)
		return &agent.ExecProposer{Command: agent.WithModel(p.Jailed(p.Propose, j.Level), model), Allow: allow, Timeout: lib.ProposeTimeout,
			ExePath: exe, Guarded: lib.Guarded, CLI: cli, Jail: j}, p.AgentVersion(ctx, sandbox.Environ(allow, nil, exe)), nil
	}
	return &agent.ExecProposer{Command: library.ExpandRepo(lib.Proposer, top), Allow: lib.Env, Timeout: lib.ProposeTimeout, ExePath: exe, Guarded: lib.Guarded,
		Jail: jail(false, lib.ProposeTimeout)}, "command", nil
}

// jailFunc builds the jail of a process: a CLI agent's (cli) or a
// command's, with CPU time up to its timeout.
type jailFunc func(cli bool, timeout time.Duration) sandbox.Jail

// newCLI reads the user's configuration of a CLI agent once per run (see
// agent.Seed) and returns how to run it with model ("" for the one the
// configuration or the agent chooses), and the environment it may see.
func newCLI(lib *library.Library, p *agent.Preset, model string) (*agent.CLI, []string, error) {
	allow := append(append([]string(nil), p.Allow...), lib.Env...)
	seed, err := p.Seed(lib.Login == library.LoginUser)
	if err != nil {
		return nil, nil, fmt.Errorf("library %q: %s: %w", lib.Name, p.Name, err)
	}
	if model == "" {
		model = seed.Model
	}
	pr := lib.Provider.Prices[model]
	return &agent.CLI{
		Parse: p.Parse, ReportsCost: p.ReportsCost, Home: p.Home, Seed: seed, Defaults: p.Defaults,
		Offline: p.Offline, OfflineAfter: lib.OfflineTimeout,
		Price: agent.Price{Input: pr.Input, Output: pr.Output}, Model: model,
	}, allow, nil
}
