package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The private CODEX_HOME keeps the user's provider and model, drops what
// would run or leak (MCP servers, notify hooks, skills, history), turns off
// update checks, and copies auth.json only with login.
func TestSeedCodexKeepsTheProviderOnly(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	writeFile(t, filepath.Join(home, "config.toml"), `
model = "gpt-5.4"
model_provider = "corp"
notify = ["/usr/bin/say"]
[model_providers.corp]
name = "corp"
base_url = "http://127.0.0.1:1/v1"
env_key = "CORP_KEY"
wire_api = "responses"
[mcp_servers.github]
command = "gh-mcp"
`)
	writeFile(t, filepath.Join(home, "auth.json"), `{"OPENAI_API_KEY":"sk-user"}`)
	writeFile(t, filepath.Join(home, "skills", "mine", "SKILL.md"), "# mine")
	writeFile(t, filepath.Join(home, "history.jsonl"), "{}")

	s, err := seedCodex(false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(s.Files["config.toml"])
	for _, want := range []string{`model = "gpt-5.4"`, `model_provider = "corp"`, `base_url = "http://127.0.0.1:1/v1"`, `env_key = "CORP_KEY"`, "check_for_update_on_startup = false"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.toml lacks %s:\n%s", want, cfg)
		}
	}
	for _, gone := range []string{"mcp_servers", "notify", "gh-mcp"} {
		if strings.Contains(cfg, gone) {
			t.Errorf("config.toml keeps %s:\n%s", gone, cfg)
		}
	}
	if len(s.Files) != 1 || s.Model != "gpt-5.4" {
		t.Fatalf("files %v, model %q", keys(s.Files), s.Model)
	}
	if s, err = seedCodex(true); err != nil || string(s.Files["auth.json"]) != `{"OPENAI_API_KEY":"sk-user"}` {
		t.Fatalf("login: %v, %v", keys(s.Files), err)
	}

	dir := t.TempDir()
	if err := s.write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "auth.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills")); err == nil {
		t.Fatal("the user's skills reached the private home")
	}
}

func TestSeedCodexLoginWithoutOne(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	if _, err := seedCodex(true); err == nil || !strings.Contains(err.Error(), "codex login") {
		t.Fatalf("err = %v", err)
	}
	s, err := seedCodex(false) // no config at all: the quiet settings only
	if err != nil || !strings.Contains(string(s.Files["config.toml"]), "check_for_update_on_startup = false") {
		t.Fatalf("%v %s", err, s.Files["config.toml"])
	}
}

// The private CLAUDE_CONFIG_DIR gets settings.json's provider keys (not
// hooks or permissions) and, with login, the credentials and account.
func TestSeedClaude(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	writeFile(t, filepath.Join(dir, "settings.json"), `{"env":{"ANTHROPIC_BASE_URL":"http://gw"},"model":"opus","hooks":{"Stop":[]},"permissions":{"allow":["Bash"]}}`)
	writeFile(t, filepath.Join(dir, ".credentials.json"), `{"claudeAiOauth":{"accessToken":"tok"}}`)
	writeFile(t, filepath.Join(dir, ".claude.json"), `{"oauthAccount":{"emailAddress":"a@b"},"projects":{"/x":{}}}`)

	s, err := seedClaude(false)
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(s.Files["settings.json"], &settings); err != nil {
		t.Fatal(err)
	}
	if _, ok := settings["hooks"]; ok || settings["model"] != "opus" || settings["env"] == nil || s.Model != "opus" {
		t.Fatalf("settings %v", settings)
	}
	if _, ok := s.Files[".credentials.json"]; ok {
		t.Fatal("credentials copied without login")
	}
	s, err = seedClaude(true)
	if err != nil || string(s.Files[".credentials.json"]) != `{"claudeAiOauth":{"accessToken":"tok"}}` {
		t.Fatalf("login: %v %v", keys(s.Files), err)
	}
	acct := string(s.Files[".claude.json"])
	if !strings.Contains(acct, "a@b") || strings.Contains(acct, "projects") || !strings.Contains(acct, "hasCompletedOnboarding") {
		t.Fatalf(".claude.json = %s", acct)
	}
	// The fingerprint covers settings, not credentials.
	a := (&CLI{Seed: s, Model: "m"}).Fingerprint()
	s.Files[".credentials.json"] = []byte("rotated")
	if b := (&CLI{Seed: s, Model: "m"}).Fingerprint(); a != b {
		t.Fatal("a refreshed login changed the fingerprint")
	}
	s.Files["settings.json"] = []byte(`{"model":"sonnet"}`)
	if b := (&CLI{Seed: s, Model: "m"}).Fingerprint(); a == b {
		t.Fatal("new settings kept the fingerprint")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
