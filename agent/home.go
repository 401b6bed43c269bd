package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Seed is what a CLI agent's private configuration directory starts with
// on every run: the parts of the user's own configuration that reach their
// model provider (endpoint, model, and with login their credentials), never
// their skills, plugins, hooks or history. Runs never share a directory, so
// concurrent rollouts cannot trip over each other's files.
type Seed struct {
	Files map[string][]byte // path relative to the home → content
	Model string            // the model the user's configuration selects, if it says
}

// write lays the seed out in dir.
func (s Seed) write(dir string) error {
	for name, data := range s.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// userDir is the user's configuration directory of an agent: the variable
// when set, else ~/<dotdir>.
func userDir(variable, dotdir string) string {
	if d := os.Getenv(variable); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, dotdir)
}

// readOptional reads a file that may not exist: nil, nil when it does not.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// claudeSettings are the keys of Claude Code's settings.json that say how
// it reaches its model; hooks, permissions, plugins and the rest stay out.
var claudeSettings = []string{"env", "apiKeyHelper", "model", "forceLoginMethod", "forceLoginOrgUUID", "awsAuthRefresh", "awsCredentialExport"}

// claudeAccount are the keys of its .claude.json that carry a login.
var claudeAccount = []string{"oauthAccount", "primaryApiKey", "customApiKeyResponses", "userID"}

// seedClaude reads Claude Code's configuration: settings.json's provider
// keys, and with login the stored credentials (.credentials.json, and the
// account in .claude.json, which lives in the home directory unless
// CLAUDE_CONFIG_DIR is set).
func seedClaude(login bool) (Seed, error) {
	dir := userDir("CLAUDE_CONFIG_DIR", ".claude")
	s := Seed{Files: map[string][]byte{}}
	// The private directory is new each run: no onboarding to show.
	account := map[string]any{"hasCompletedOnboarding": true}
	if dir == "" {
		s.Files[".claude.json"], _ = json.Marshal(account)
		return s, nil
	}
	settings, err := pickJSON(filepath.Join(dir, "settings.json"), claudeSettings)
	if err != nil {
		return s, err
	}
	if len(settings) > 0 {
		s.Files["settings.json"], _ = json.MarshalIndent(settings, "", "  ")
		if m, ok := settings["model"].(string); ok {
			s.Model = m
		}
	}
	if login {
		creds, err := readOptional(filepath.Join(dir, ".credentials.json"))
		if err != nil {
			return s, err
		}
		if creds != nil {
			s.Files[".credentials.json"] = creds
		}
		global := filepath.Join(dir, ".claude.json")
		if os.Getenv("CLAUDE_CONFIG_DIR") == "" {
			global = filepath.Join(filepath.Dir(dir), ".claude.json")
		}
		acct, err := pickJSON(global, claudeAccount)
		if err != nil {
			return s, err
		}
		for k, v := range acct {
			account[k] = v
		}
		if creds == nil && len(acct) == 0 {
			return s, fmt.Errorf("login = user: no Claude Code login in %s (run `claude` and /login, or use `claude setup-token` and CLAUDE_CODE_OAUTH_TOKEN)", dir)
		}
	}
	s.Files[".claude.json"], _ = json.Marshal(account)
	return s, nil
}

// pickJSON reads the named keys of a JSON object file; none when it does
// not exist.
func pickJSON(path string, keys []string) (map[string]any, error) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// codexConfig are the keys of Codex's config.toml that say which model and
// provider it uses; MCP servers, notify hooks, project trust, history and
// the rest stay out.
var codexConfig = []string{"model", "model_provider", "model_providers", "model_reasoning_effort",
	"model_reasoning_summary", "model_verbosity", "model_context_window", "model_max_output_tokens",
	"model_auto_compact_token_limit", "profile", "profiles", "preferred_auth_method", "forced_login_method",
	"forced_chatgpt_workspace_id", "chatgpt_base_url", "openai_base_url"}

// codexQuiet is written over the user's settings: nothing but the model
// provider is contacted from a rollout.
var codexQuiet = map[string]any{
	"check_for_update_on_startup": false,
	"history":                     map[string]any{"persistence": "none"},
	"analytics":                   map[string]any{"enabled": false},
	"feedback":                    map[string]any{"enabled": false},
	"otel":                        map[string]any{"exporter": "none", "trace_exporter": "none", "metrics_exporter": "none"},
}

// seedCodex reads Codex's configuration: config.toml's model and provider
// keys, and with login its stored credentials (auth.json).
func seedCodex(login bool) (Seed, error) {
	dir := userDir("CODEX_HOME", ".codex")
	s := Seed{Files: map[string][]byte{}}
	cfg := map[string]any{}
	if dir != "" {
		data, err := readOptional(filepath.Join(dir, "config.toml"))
		if err != nil {
			return s, err
		}
		var all map[string]any
		if _, err := toml.Decode(string(data), &all); err != nil {
			return s, fmt.Errorf("read %s: %w", filepath.Join(dir, "config.toml"), err)
		}
		for _, k := range codexConfig {
			if v, ok := all[k]; ok {
				cfg[k] = v
			}
		}
	}
	s.Model = codexModel(cfg)
	for k, v := range codexQuiet {
		cfg[k] = v
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return s, err
	}
	s.Files["config.toml"] = buf.Bytes()
	if login {
		auth, err := readOptional(filepath.Join(dir, "auth.json"))
		if err != nil {
			return s, err
		}
		if auth == nil {
			return s, fmt.Errorf("login = user: no Codex login in %s (run `codex login`, or give the provider's key variable instead)", dir)
		}
		s.Files["auth.json"] = auth
	}
	return s, nil
}

// codexModel is the model a Codex configuration selects: its profile's, or
// its own.
func codexModel(cfg map[string]any) string {
	if name, ok := cfg["profile"].(string); ok {
		if profiles, ok := cfg["profiles"].(map[string]any); ok {
			if p, ok := profiles[name].(map[string]any); ok {
				if m, ok := p["model"].(string); ok {
					return m
				}
			}
		}
	}
	m, _ := cfg["model"].(string)
	return m
}

// credentials are seed files that carry a login, not settings: they do not
// change what an agent answers.
var credentials = map[string]bool{".credentials.json": true, ".claude.json": true, "auth.json": true}

// Fingerprint is what of the agent's configuration can change its answers:
// the model and the seeded settings, credentials left out. Rollout caches
// key on it, so editing config.toml or settings.json is not served stale.
func (c *CLI) Fingerprint() string {
	names := make([]string, 0, len(c.Seed.Files))
	for n := range c.Seed.Files {
		if !credentials[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "model %s\x00", c.Model)
	for _, n := range names {
		fmt.Fprintf(&b, "%s %d\x00%s", n, len(c.Seed.Files[n]), c.Seed.Files[n])
	}
	return b.String()
}
