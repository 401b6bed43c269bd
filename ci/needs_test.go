package ci

import (
	"slices"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

func names(ss []Secret) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestNeedsOf(t *testing.T) {
	for _, c := range []struct {
		name         string
		set          func(l *library.Library)
		real, all    []string
		tools, notes []string // tool names; words each note has
	}{
		{name: "claude", set: func(l *library.Library) { l.Run, l.Proposer = "claude", "claude" },
			real: []string{"ANTHROPIC_API_KEY"}, all: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, tools: []string{"Claude Code"}},
		{name: "codex runs, claude proposes", set: func(l *library.Library) { l.Run, l.Proposer = "codex", "claude" },
			real: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}, all: []string{"OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
			tools: []string{"Codex", "Claude Code"}},
		{name: "a model's key under another name, and a judge", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Scorer, l.Provider.KeyEnv = "openai", "openai", "judge", "DEEPSEEK_API_KEY"
		}, real: []string{"DEEPSEEK_API_KEY"}, all: []string{"DEEPSEEK_API_KEY"}},
		{name: "a judge beside a command", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Scorer = "{{repo}}/agent", "{{repo}}/propose", "contains*0.5, judge*0.5"
		}, real: []string{"OPENAI_API_KEY"}, all: []string{"OPENAI_API_KEY"}},
		{name: "no key for a keyless endpoint", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Provider.KeyEnv = "openai", "openai", "none"
		}},
		{name: "a model on this machine", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Provider.BaseURL = "openai", "openai", "http://localhost:11434/v1"
		}, notes: []string{"localhost:11434", "cannot reach"}},
		{name: "commands: in the repository, on every runner, elsewhere", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Scorer, l.ScoreCommand, l.Oracle = "{{repo}}/tools/agent {{prompt}}", "LANG=C bash propose.sh", "command", "exec env X=1 score-it", "pytest -q"
		}, tools: []string{"score-it", "pytest"}, notes: []string{`"score-it"`, `"pytest"`}},
		{name: "env names and patterns", set: func(l *library.Library) {
			l.Run, l.Proposer, l.Env = "agent", "agent", []string{"CORP_KEY", "CORP_*", "bad-name"}
		}, real: []string{"CORP_KEY"}, all: []string{"CORP_KEY", "CORP_NAME"}, tools: []string{"agent"},
			notes: []string{`"agent"`, "CORP_*", `"bad-name"`}},
		{name: "a stored login", set: func(l *library.Library) { l.Run, l.Proposer, l.Login = "claude", "claude", "user" },
			real: []string{"ANTHROPIC_API_KEY"}, all: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, tools: []string{"Claude Code"},
			notes: []string{"login = user"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := library.New("skills/s")
			c.set(l)
			n := NeedsOf(Input{Library: l})
			if got := names(n.Real()); !slices.Equal(got, c.real) {
				t.Errorf("secrets %v, want %v", got, c.real)
			}
			if got := names(n.Secrets); !slices.Equal(got, c.all) {
				t.Errorf("secrets and placeholders %v, want %v", got, c.all)
			}
			var tools []string
			for _, tool := range n.Tools {
				tools = append(tools, tool.Name)
			}
			if !slices.Equal(tools, c.tools) {
				t.Errorf("tools %v, want %v", tools, c.tools)
			}
			notes := strings.Join(n.Notes, "\n")
			for _, w := range c.notes {
				if !strings.Contains(notes, w) {
					t.Errorf("no note says %q:\n%s", w, notes)
				}
			}
			if len(c.notes) == 0 && len(n.Notes) > 0 {
				t.Errorf("notes %q", n.Notes)
			}
		})
	}
}

// TestNeedsSecretsSayWhatReadsThem joins the roles that read one key.
func TestNeedsSecretsSayWhatReadsThem(t *testing.T) {
	l := library.New("skills/s")
	l.Run, l.Proposer, l.Scorer = "claude", "claude", "judge"
	n := NeedsOf(Input{Library: l})
	if got := n.Secrets[0]; got.Name != "ANTHROPIC_API_KEY" || got.For != "the claude runner and proposer" {
		t.Errorf("first secret %+v", got)
	}
	if got := n.Secrets[2]; got.Name != "OPENAI_API_KEY" || !strings.Contains(got.For, "judge") {
		t.Errorf("third secret %+v", got)
	}
}

// TestNeedsLocalSettings names the provider settings a CI checkout will
// not have: set in git config, not in .descent.
func TestNeedsLocalSettings(t *testing.T) {
	l := library.New("skills/s")
	l.Run, l.Proposer = "openai", "openai"
	in := Input{Library: l,
		UserConfig: []git.ConfigEntry{{Key: "descent.model", Value: "gpt-4.1-mini"}, {Key: "descent.base-url", Value: "https://x.example/v1"},
			{Key: "descent.gpt-4.1-mini.input-price", Value: "0.4"}, {Key: "descent.concurrency", Value: "2"}, {Key: "descent.other-feature", Value: "x"}},
		File: []git.ConfigEntry{{Key: "descent.base-url", Value: "https://x.example/v1"}, {Key: "library.s.concurrency", Value: "3"}},
	}
	notes := strings.Join(NeedsOf(in).Notes, "\n")
	if !strings.Contains(notes, "descent.model, descent.gpt-4.1-mini.input-price set in your git config") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, w := range []string{"base-url", "concurrency", "other-feature"} {
		if strings.Contains(notes, w) {
			t.Errorf("notes name %s, which .descent sets or no library reads:\n%s", w, notes)
		}
	}
	in.BaseURLEnv, l.Provider.BaseURL = "https://gateway.example/v1", "https://gateway.example/v1"
	if notes := strings.Join(NeedsOf(in).Notes, "\n"); !strings.Contains(notes, "comes from OPENAI_BASE_URL") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestNoSecretValue generates every workflow with the secrets' variables
// set where it runs: no value may reach the file, only names.
func TestNoSecretValue(t *testing.T) {
	const value = "sk-live-0123456789abcdef"
	for _, name := range []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY", "DEEPSEEK_API_KEY", "CORP_KEY", "CORP_OTHER", "DESCENT_PUSH_TOKEN"} {
		t.Setenv(name, value)
	}
	for name, lib := range libraries() {
		in := Input{Library: lib, UserConfig: []git.ConfigEntry{{Key: "descent.model", Value: "m"}}}
		for system, write := range map[string]func(Input, Options) (*Workflow, error){"github": GitHub, "gitlab": GitLab} {
			w, err := write(in, options(4))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(w.Content), value) || strings.Contains(strings.Join(w.Needs.Notes, "\n"), value) {
				t.Errorf("%s for %s holds a secret's value", system, name)
			}
			if len(w.Needs.Real()) == 0 && name != "command" {
				t.Errorf("%s for %s names no secret", system, name)
			}
		}
	}
}
