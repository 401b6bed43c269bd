package ci

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// Secret is an environment variable the jobs take from the CI system's
// secrets, under the same name. Only its name is ever written.
type Secret struct {
	Name string // the variable's name, which is also the secret's
	For  string // what reads it, for the comment beside it
	// Placeholder marks a guess or an alternative: written commented out,
	// for the user to fill in or swap in.
	Placeholder bool
}

// Tool is a program a job installs before git-descent runs.
type Tool struct {
	Name string // what it is, e.g. "Claude Code"
	// Install is the shell command that installs it; "" when it cannot be
	// told, and the step is a commented placeholder.
	Install string
	Node    bool // Install needs Node.js and npm
}

// Needs is what a library's jobs need besides git, Go and git-descent: the
// secrets its agents read, the programs they start, and what could not be
// told from its configuration (Notes, one sentence each, for stderr).
type Needs struct {
	Secrets []Secret
	Tools   []Tool
	Notes   []string
}

// Input is what a workflow is made from: the library, and what of its
// configuration a CI checkout will not have.
type Input struct {
	Library *library.Library
	// UserConfig are the descent.* entries of the git config where the
	// command runs (system, global, the repository's own): a CI checkout
	// has none of them.
	UserConfig []git.ConfigEntry
	// File are the entries of .descent, which the checkout has.
	File []git.ConfigEntry
	// BaseURLEnv is OPENAI_BASE_URL where the command runs, "" when unset.
	BaseURLEnv string
}

// The CLI agents' secrets and packages. Each also reads an alternative
// credential, written as a placeholder.
var presets = map[string]struct {
	tool          Tool
	key, alt, why string
}{
	library.RunnerClaude: {Tool{Name: "Claude Code", Install: "npm install -g @anthropic-ai/claude-code", Node: true},
		"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "a Claude subscription's token (claude setup-token), instead of the API key"},
	library.RunnerCodex: {Tool{Name: "Codex", Install: "npm install -g @openai/codex", Node: true},
		"OPENAI_API_KEY", "CODEX_API_KEY", "Codex's own key, instead of OPENAI_API_KEY"},
}

// present are programs a command may start that every runner image has,
// or that the workflow installs itself.
var present = []string{"sh", "bash", "git", "git-descent", "cat", "echo", "printf", "test", "true", "grep", "sed", "awk"}

// NeedsOf reads what in's library needs on a CI runner: for each role
// (runner, proposer, judge, scorer command, oracle) the API key it reads
// and the program it starts, and every exact name its env setting passes.
func NeedsOf(in Input) Needs {
	lib := in.Library
	var n Needs
	if lib.Run == lib.Proposer {
		n.role("runner and proposer", lib.Run, lib, in.BaseURLEnv)
	} else {
		n.role("runner", lib.Run, lib, in.BaseURLEnv)
		n.role("proposer", lib.Proposer, lib, in.BaseURLEnv)
	}
	if judges(lib.Scorer) {
		n.openAI("judge", lib)
	}
	if scores(lib.Scorer) && lib.ScoreCommand != "" {
		n.command("score-command", lib.ScoreCommand)
	}
	if lib.Oracle != "" {
		n.command("oracle", lib.Oracle)
	}
	n.env(lib)
	if lib.Login == library.LoginUser {
		n.note("login = user copies a stored login, which a CI runner does not have: the agents use the secrets the workflow names")
	}
	if local := localOnly(in); len(local) > 0 {
		n.note(fmt.Sprintf("%s set in your git config, which a CI checkout does not have: move them into .descent (git config -f .descent descent.<key> <value>) and commit it",
			strings.Join(local, ", ")))
	}
	return n
}

// role adds what the runner or the proposer (or both: role names them)
// needs, value being their setting.
func (n *Needs) role(role, value string, lib *library.Library, baseURLEnv string) {
	switch value {
	case "":
	case library.RunnerOpenAI:
		n.openAI(role, lib)
		if baseURLEnv != "" && baseURLEnv == lib.Provider.BaseURL {
			n.note(fmt.Sprintf("the %s's endpoint %s comes from OPENAI_BASE_URL here: set descent.base-url in .descent so CI uses it too", role, baseURLEnv))
		}
	case library.RunnerClaude, library.RunnerCodex:
		p := presets[value]
		n.secret(Secret{Name: p.key, For: "the " + value + " " + role})
		n.secret(Secret{Name: p.alt, For: p.why, Placeholder: true})
		n.tool(p.tool)
	default:
		n.command(role, value)
	}
}

// openAI adds the key of a chat-model role.
func (n *Needs) openAI(role string, lib *library.Library) {
	p := lib.Provider
	if isLocal(p.BaseURL) {
		n.note(fmt.Sprintf("the %s's endpoint %s is on this machine, which a CI runner cannot reach: set descent.base-url in .descent to one it can", role, p.BaseURL))
		return
	}
	switch {
	case p.KeyEnv == "" || p.KeyEnv == "none":
		return
	case !validName(p.KeyEnv):
		n.note(fmt.Sprintf("the %s's api-key-env %q is not a variable name; it is left out", role, p.KeyEnv))
		return
	}
	n.secret(Secret{Name: p.KeyEnv, For: fmt.Sprintf("the %s's model at %s", role, p.BaseURL)})
}

// command adds the program a command template starts, unless it lives in
// the repository or every runner has it.
func (n *Needs) command(role, template string) {
	prog := program(template)
	if prog == "" || strings.Contains(prog, library.RepoPlaceholder) || slices.Contains(present, prog) {
		return
	}
	n.tool(Tool{Name: prog})
	n.note(fmt.Sprintf("the %s starts %q: install it on the runner (the workflow has a commented step for it)", role, prog))
}

// env adds the variables the library's env setting passes to its
// commands: exact names as secrets, patterns as a placeholder.
func (n *Needs) env(lib *library.Library) {
	for _, name := range lib.Env {
		prefix, pattern := strings.CutSuffix(name, "*")
		switch {
		case pattern && validName(prefix+"X"):
			n.secret(Secret{Name: prefix + "NAME", For: fmt.Sprintf("library.%s.env passes %s: name the variables it needs", lib.Name, name), Placeholder: true})
			n.note(fmt.Sprintf("library.%s.env passes %s: name the variables the workflow should set (it has a commented placeholder)", lib.Name, name))
		case validName(name):
			n.secret(Secret{Name: name, For: fmt.Sprintf("library.%s.env", lib.Name)})
		default:
			n.note(fmt.Sprintf("library.%s.env = %q is not a variable name; it is left out", lib.Name, name))
		}
	}
}

// secret adds s once, with what reads it joined to what read it before; a
// name needed for real is never also a placeholder.
func (n *Needs) secret(s Secret) {
	for i, have := range n.Secrets {
		switch {
		case have.Name != s.Name:
			continue
		case have.Placeholder && !s.Placeholder:
			n.Secrets[i] = s
		case have.Placeholder == s.Placeholder && !strings.Contains(have.For, s.For):
			n.Secrets[i].For += ", " + s.For
		}
		return
	}
	n.Secrets = append(n.Secrets, s)
}

func (n *Needs) tool(t Tool) {
	if !slices.Contains(n.Tools, t) {
		n.Tools = append(n.Tools, t)
	}
}

func (n *Needs) note(s string) {
	if !slices.Contains(n.Notes, s) {
		n.Notes = append(n.Notes, s)
	}
}

// Real are the secrets the jobs need for certain, placeholders left out.
func (n Needs) Real() []Secret {
	var out []Secret
	for _, s := range n.Secrets {
		if !s.Placeholder {
			out = append(out, s)
		}
	}
	return out
}

// Node reports whether a tool needs Node.js.
func (n Needs) Node() bool {
	return slices.ContainsFunc(n.Tools, func(t Tool) bool { return t.Node })
}

// localOnly lists the provider settings (descent.<key>) the user's git
// config gives that .descent does not: the CI checkout will miss them.
func localOnly(in Input) []string {
	inFile := map[string]bool{}
	for _, e := range in.File {
		key, ok := strings.CutPrefix(e.Key, "descent.")
		if !ok {
			key, ok = strings.CutPrefix(e.Key, "library."+in.Library.Name+".")
		}
		if ok {
			inFile[key] = true
		}
	}
	var out []string
	for _, e := range in.UserConfig {
		key, ok := strings.CutPrefix(e.Key, "descent.")
		if !ok || inFile[key] || !providerKey(key) {
			continue
		}
		if s := "descent." + key; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// providerKey reports whether a descent.* key is a provider setting: one
// of library.ProviderKeys, or a model's price.
func providerKey(key string) bool {
	return slices.Contains(library.ProviderKeys, key) || strings.HasSuffix(key, ".input-price") || strings.HasSuffix(key, ".output-price")
}

// program is the program a command template starts: its first word that
// is neither a variable assignment nor exec or env, unquoted; "" when there
// is none.
func program(template string) string {
	for _, w := range strings.Fields(template) {
		if k, _, ok := strings.Cut(w, "="); ok && validName(k) || w == "exec" || w == "env" {
			continue
		}
		return strings.Trim(w, `'"`)
	}
	return ""
}

func judges(scorer string) bool { return hasKind(scorer, "judge") }
func scores(scorer string) bool { return hasKind(scorer, "command") }

func hasKind(scorer, kind string) bool {
	parts, err := eval.ParseSpec(scorer)
	return err == nil && slices.ContainsFunc(parts, func(p eval.Part) bool { return p.Kind == kind })
}

// isLocal reports whether an endpoint is on this machine.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// validName reports whether s is an environment variable name that is
// safe to write as a secret's name: letters, digits and underscores, not
// starting with a digit.
func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
