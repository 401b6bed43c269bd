package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/cli holds what the real Claude Code 2.1.332 and Codex 0.171.0
// printed against a local endpoint (see DESIGN.md): the parsers are held
// to them, and the stand-in scripts of the testscripts print the same
// shapes.
func sample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cli", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRealClientSamples(t *testing.T) {
	type want struct {
		text      string
		tokens    int64
		infra     bool // an InfraError
		fatal     bool
		errSubstr string
		denied    string
	}
	cases := []struct {
		file  string
		parse func([]byte) (Result, error)
		want  want
	}{
		{"claude-hello.json", parseClaude, want{text: "billing", tokens: 12221}},
		{"claude-verbose.json", parseClaude, want{text: "billing", tokens: 24685}},
		{"claude-max-turns.json", parseClaude, want{tokens: 12272, errSubstr: "maximum number of turns"}},
		{"claude-propose-git-acceptEdits.json", parseClaude, want{text: "Route \"x\" tickets to general\n\nAdded a rule for the failed task.", tokens: 38111, denied: "Edit <repo>/.git/descent/worktrees/triage/w1/skills/triage/SKILL.md"}},
		{"err-claude-401.stdout", parseClaude, want{infra: true, fatal: true, errSubstr: "401 authentication_error: Invalid API key"}},
		{"err-claude-529.stdout", parseClaude, want{infra: true, errSubstr: "529 overloaded_error"}},
		{"err-claude-unreachable.stdout", parseClaude, want{infra: true, errSubstr: "Connection refused"}},
		{"codex-hello-b.jsonl", parseCodex, want{text: "billing", tokens: 10314}},
		{"codex-skill.jsonl", parseCodex, want{text: "billing", tokens: 20970}},
		{"err-codex-401.stdout", parseCodex, want{infra: true, fatal: true, errSubstr: "401 Unauthorized"}},
		{"err-codex-529.stdout", parseCodex, want{infra: true, errSubstr: "529"}},
		{"err-codex-unreachable.stdout", parseCodex, want{infra: true, errSubstr: "waiting for network"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			r, err := c.parse(sample(t, c.file))
			var infra *InfraError
			isInfra := errors.As(err, &infra)
			switch {
			case (err == nil || c.want.text != "") && r.Text != c.want.text, r.Tokens() != c.want.tokens:
				t.Fatalf("text %q tokens %d; want %q, %d", r.Text, r.Tokens(), c.want.text, c.want.tokens)
			case isInfra != c.want.infra || isInfra && infra.Fatal != c.want.fatal:
				t.Fatalf("err = %v (infra %v); want infra %v fatal %v", err, isInfra, c.want.infra, c.want.fatal)
			case c.want.errSubstr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case c.want.errSubstr != "" && (err == nil || !strings.Contains(err.Error(), c.want.errSubstr)):
				t.Fatalf("err = %v; want it to say %q", err, c.want.errSubstr)
			case c.want.denied != "" && (len(r.Denied) != 1 || r.Denied[0] != c.want.denied):
				t.Fatalf("denied = %q; want %q", r.Denied, c.want.denied)
			case c.want.denied == "" && len(r.Denied) > 0:
				t.Fatalf("denied = %q", r.Denied)
			}
		})
	}
}

// The reason a stream-json run gives for a refused call is kept with it.
func TestClaudeStreamGivesDenialReasons(t *testing.T) {
	stream := strings.Join([]string{
		`{"type":"system","subtype":"init"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/r/.git/x/SKILL.md"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"Claude requested permissions to edit /r/.git/x/SKILL.md which is a sensitive file."}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"Done","total_cost_usd":0.1,"usage":{"input_tokens":10,"output_tokens":2},"permission_denials":[{"tool_name":"Edit","tool_use_id":"toolu_1","tool_input":{"file_path":"/r/.git/x/SKILL.md"}}]}`,
	}, "\n")
	r, err := parseClaude([]byte(stream))
	if err != nil || r.Text != "Done" || len(r.Denied) != 1 || !strings.Contains(r.Denied[0], "which is a sensitive file") {
		t.Fatalf("r = %+v, err %v", r, err)
	}
}

// Output that is no account of a run at all (a crash, a usage message) is
// the client not working: not scored.
func TestClaudeWithoutJSONIsInfrastructure(t *testing.T) {
	var infra *InfraError
	if _, err := parseClaude([]byte("error: unknown option '--bogus'\n")); !errors.As(err, &infra) || infra.Fatal {
		t.Fatalf("err = %v", err)
	}
	if _, err := parseClaude(nil); !errors.As(err, &infra) {
		t.Fatalf("empty: %v", err)
	}
}
