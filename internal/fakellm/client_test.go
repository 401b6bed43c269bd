package fakellm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// These tests run the real Claude Code and Codex CLIs against the server, and
// skip when a client is not on PATH. Each run takes about a second.

// clientTimeout bounds one run of a real client. Codex never gives up on an
// endpoint that refuses connections; this is what stops it.
const clientTimeout = time.Minute

// requireClient returns the path of a real client, skipping t when it is not
// on PATH.
func requireClient(t *testing.T, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: %s", name, install)
	}
	return path
}

// runClient runs path with args in dir, stdin as its input and env as its
// whole environment (with this process's PATH), and returns its stdout. It
// fails t if the client fails or outlives clientTimeout.
func runClient(t *testing.T, dir, stdin string, env []string, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(path), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// runJailed is runClient under git-descent's bwrap isolation level, with
// the network (the server is on the loopback) and write access to write.
func runJailed(t *testing.T, dir, stdin string, env, write []string, path string, args ...string) string {
	t.Helper()
	command := path
	for _, a := range args {
		command += " '" + a + "'"
	}
	res, err := sandbox.Run(context.Background(), sandbox.Spec{
		Command: command, Dir: dir, Stdin: []byte(stdin), Timeout: clientTimeout,
		Env:  append([]string{"PATH=" + os.Getenv("PATH")}, env...),
		Jail: sandbox.Jail{Level: sandbox.LevelBwrap, Network: true}, Write: write,
	})
	if err != nil {
		t.Fatalf("%s under bwrap: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(path), err, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// claudeResult is the part of `claude -p --output-format json` the tests read.
type claudeResult struct {
	Result       string  `json:"result"`
	IsError      bool    `json:"is_error"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	Usage        struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
}

// runClaude runs `claude -p` in dir against s, which expects key, with
// everything but the fake server turned off, and returns its result.
func runClaude(t *testing.T, s *Server, key, dir, prompt string, args ...string) claudeResult {
	t.Helper()
	path := requireClient(t, "claude", "npm install -g @anthropic-ai/claude-code@2.1.332")
	home, config := t.TempDir(), t.TempDir()
	env := []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + config,
		"ANTHROPIC_BASE_URL=" + s.Origin(),
		"ANTHROPIC_API_KEY=" + key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0", // a failing test fails in a second, not after ten retries over three minutes
	}
	args = append([]string{"-p", "--output-format", "json", "--setting-sources", "project", "--no-session-persistence"}, args...)
	var out string
	if _, _, err := sandbox.Resolve(sandbox.LevelBwrap); err == nil {
		out = runJailed(t, dir, prompt, env, []string{dir, home, config}, path, args...) // as git-descent runs it
	} else {
		out = runClient(t, dir, prompt, env, path, args...)
	}
	var res claudeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("claude printed no JSON result (%v):\n%s", err, out)
	}
	return res
}

// checkServed fails t unless every request reached the server as api with
// a model, was answered 200, and left out the client's system prompt; and
// the client reported the tokens served.
func checkServed(t *testing.T, s *Server, api, systemWords string, input, output int) {
	t.Helper()
	for i, r := range s.Requests() {
		if r.API != api || r.Model == "" || r.Status != 200 || r.Auth != "ok" {
			t.Errorf("request %d: %s %q auth %s status %d, want %s with a model, ok, 200", i, r.API, r.Model, r.Auth, r.Status, api)
		}
		if text := transcript(r.Messages); strings.Contains(text, systemWords) {
			t.Errorf("request %d: the transcript has the system prompt (%q)", i, systemWords)
		}
	}
	if st := s.Stats(); input != st.PromptTokens || output != st.CompletionTokens || input == 0 {
		t.Errorf("client reported %d input and %d output tokens; the server served %d and %d", input, output, st.PromptTokens, st.CompletionTokens)
	}
}

func TestClaudeAnswers(t *testing.T) {
	t.Parallel()
	s := start(t, []Rule{{API: "anthropic", Match: "my invoice is wrong", Reply: "billing"}})
	s.SetKey("sk-ant-test")
	res := runClaude(t, s, "sk-ant-test", t.TempDir(), "Which team handles this ticket? my invoice is wrong\n")
	if res.Result != "billing" || res.IsError {
		t.Errorf("result %q (is_error %v), want billing", res.Result, res.IsError)
	}
	if res.TotalCostUSD <= 0 {
		t.Errorf("total_cost_usd %v, want the cost of the tokens served", res.TotalCostUSD)
	}
	checkServed(t, s, "anthropic", "You are a Claude agent", res.Usage.InputTokens, res.Usage.OutputTokens)
}

// TestClaudeEditsAsProposer has Claude edit a skill with Edit (given a path
// relative to its directory, as a rules file in a script can), add a file
// with Write, and answer once the second tool's result comes back. The
// directory is not under a .git directory, where acceptEdits would refuse.
func TestClaudeEditsAsProposer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skill, examples := filepath.Join(dir, "SKILL.md"), filepath.Join(dir, "EXAMPLES.md")
	writeFile(t, skill, "# Triage\n- \"invoice\" -> billing\n")
	edit, _ := json.Marshal(map[string]string{"file_path": "SKILL.md", "old_string": "- \"invoice\" -> billing", "new_string": "- \"invoice\" -> billing\n- \"x\" -> general"})
	write, _ := json.Marshal(map[string]string{"file_path": examples, "content": "x: general\n"})
	s := start(t, []Rule{
		{API: "anthropic", Last: "File created successfully", Reply: "Route x tickets to general\n\nAdded a rule and an example."},
		{API: "anthropic", Last: "has been updated successfully", Tool: "Write", Input: write},
		{API: "anthropic", Match: "Failed tasks", Tool: "Edit", Input: edit},
	})
	res := runClaude(t, s, "sk-ant-test", dir, "Improve SKILL.md.\n\nFailed tasks:\n- ticket x went nowhere\n", "--permission-mode", "acceptEdits")
	if res.Result != "Route x tickets to general\n\nAdded a rule and an example." || res.IsError || len(res.PermissionDenials) > 0 {
		t.Errorf("result %q (is_error %v, denials %s), want the scripted answer", res.Result, res.IsError, res.PermissionDenials)
	}
	checkFile(t, skill, "# Triage\n- \"invoice\" -> billing\n- \"x\" -> general\n")
	checkFile(t, examples, "x: general\n")
	checkRules(t, s, 2, 1, 0)
	checkServed(t, s, "anthropic", "You are a Claude agent", res.Usage.InputTokens, res.Usage.OutputTokens)
}

// codexEvents is what the tests read of `codex exec --json`: the last agent
// message and the usage of turn.completed.
type codexEvents struct {
	message   string
	completed bool
	usage     struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
}

// runCodex runs `codex exec` in dir against s, which expects key, in the
// given sandbox mode, and returns what it printed. The Codex home is the one
// WriteCodexHome writes, with retries off so that a failing test fails fast.
func runCodex(t *testing.T, s *Server, key, dir, mode, prompt string) codexEvents {
	t.Helper()
	path := requireClient(t, "codex", "npm install -g @openai/codex@0.171.0")
	home := t.TempDir()
	if err := s.WriteCodexHome(home, ""); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(home, "config.toml"), "request_max_retries = 0\nstream_max_retries = 0\n") // the provider's table is last
	userHome := t.TempDir()
	env := []string{"HOME=" + userHome, "CODEX_HOME=" + home, "OPENAI_API_KEY=" + key}
	args := []string{"exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--sandbox", mode, "-"}
	var out string
	if _, _, err := sandbox.Resolve(sandbox.LevelBwrap); err == nil {
		// Where bubblewrap works git-descent runs Codex inside its own
		// sandbox, with Codex's off (agent.Preset.Jailed): Codex's needs
		// namespaces it cannot make inside another, nor in many containers.
		args[len(args)-2] = "danger-full-access"
		out = runJailed(t, dir, prompt, env, []string{dir, home, userHome}, path, args...)
	} else {
		out = runClient(t, dir, prompt, env, path, args...)
	}
	var ev codexEvents
	lines := bufio.NewScanner(strings.NewReader(out))
	for lines.Scan() {
		var line struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			t.Fatalf("codex printed a line that is not JSON (%v): %s", err, lines.Bytes())
		}
		switch {
		case line.Type == "item.completed" && line.Item.Type == "agent_message":
			ev.message = line.Item.Text
		case line.Type == "turn.completed":
			ev.completed = true
			if err := json.Unmarshal(line.Usage, &ev.usage); err != nil {
				t.Fatalf("turn.completed usage: %v", err)
			}
		}
	}
	if !ev.completed {
		t.Fatalf("codex printed no turn.completed:\n%s", out)
	}
	return ev
}

func TestCodexAnswers(t *testing.T) {
	t.Parallel()
	s := start(t, []Rule{{API: "responses", Match: "my invoice is wrong", Reply: "billing"}})
	s.SetKey("sk-test")
	ev := runCodex(t, s, "sk-test", t.TempDir(), "read-only", "Which team handles this ticket? my invoice is wrong\n")
	if ev.message != "billing" {
		t.Errorf("agent message %q, want billing", ev.message)
	}
	checkServed(t, s, "responses", "You are a coding agent running in the Codex CLI", ev.usage.InputTokens, ev.usage.OutputTokens)
}

// TestCodexEditsAsProposer has Codex edit a skill with apply_patch, which
// Codex 0.171 offers through exec_command (it intercepts the heredoc), in the
// workspace-write sandbox, or in git-descent's where bubblewrap works.
func TestCodexEditsAsProposer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skill := filepath.Join(dir, "SKILL.md")
	writeFile(t, skill, "# Triage\n- \"invoice\" -> billing\n")
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: SKILL.md\n@@\n - \"invoice\" -> billing\n+- \"x\" -> general\n*** End Patch\nEOF\n"
	cmd, _ := json.Marshal(map[string]string{"cmd": patch})
	s := start(t, []Rule{
		{API: "responses", Last: "Success. Updated the following files", Reply: "Route x tickets to general\n\nAdded a rule."},
		{API: "responses", Match: "Failed tasks", Tool: "exec_command", Input: cmd},
	})
	ev := runCodex(t, s, "sk-test", dir, "workspace-write", "Improve SKILL.md.\n\nFailed tasks:\n- ticket x went nowhere\n")
	if ev.message != "Route x tickets to general\n\nAdded a rule." {
		t.Errorf("agent message %q, want the scripted answer", ev.message)
	}
	checkFile(t, skill, "# Triage\n- \"invoice\" -> billing\n- \"x\" -> general\n")
	checkRules(t, s, 1, 0)
	checkServed(t, s, "responses", "You are a coding agent running in the Codex CLI", ev.usage.InputTokens, ev.usage.OutputTokens)
}

// checkRules fails t unless the server answered one request per rule given,
// with those rules in order.
func checkRules(t *testing.T, s *Server, rules ...int) {
	t.Helper()
	var got []int
	for _, r := range s.Requests() {
		got = append(got, r.Rule)
	}
	if !slices.Equal(got, rules) {
		t.Errorf("rules used %v, want %v", got, rules)
	}
}

func checkFile(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || string(data) != want {
		t.Errorf("%s: %q (%v), want %q", filepath.Base(path), data, err, want)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
