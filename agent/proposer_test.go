package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/sandbox"
)

// newProposeRequest lays out a worktree with a library and a control
// directory under a temporary root.
func newProposeRequest(t *testing.T) ProposeRequest {
	t.Helper()
	root := t.TempDir()
	req := ProposeRequest{
		Library: "pdf-audit", Worker: "3",
		Worktree: filepath.Join(root, "wt"), SkillDir: filepath.Join(root, "wt", "skills", "pdf-audit"),
		Control: filepath.Join(root, "control"),
		Feedback: Feedback{
			Library: "pdf-audit", SkillDir: filepath.Join(root, "wt", "skills", "pdf-audit"), Frozen: []string{"evals/**"},
			Failures: []Attempt{{TaskID: "t1", Prompt: "Sum it's \"column\"", Output: "41", Expected: "42", Score: 0, Error: "exit 1"}},
			Passed:   []Attempt{{TaskID: "t2", Prompt: "p", Output: "ok", Expectations: []string{"says ok", "is short"}, Score: 1}},
		},
	}
	for _, d := range []string{req.SkillDir, req.Control} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(req.SkillDir, "SKILL.md"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return req
}

// The proposer reads the feedback file, edits the library, and its
// rationale comes from the rationale file or else from stdout.
func TestExecProposerPropose(t *testing.T) {
	for _, c := range []struct {
		name, command string
		want          Rationale
	}{
		{"rationale file",
			`printf 'Say which column to sum\n\nTwo failures summed the wrong column.\n' > "$DESCENT_RATIONALE_FILE"; echo ignored`,
			Rationale{Subject: "Say which column to sum", Body: "Two failures summed the wrong column."}},
		{"rationale file placeholder",
			`printf '  Subject\r\nBody\r\n' > {{rationale_file}}; echo ignored`,
			Rationale{Subject: "Subject", Body: "Body"}},
		{"stdout",
			`echo; echo "  Reword   step 2  "; echo "because"; echo "it failed"`,
			Rationale{Subject: "Reword step 2", Body: "because\nit failed"}},
		{"blank rationale file falls back to stdout",
			`printf '\n  \n' > "$DESCENT_RATIONALE_FILE"; echo from stdout`,
			Rationale{Subject: "from stdout"}},
		{"no rationale at all", `true`, Rationale{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newProposeRequest(t)
			// Every proposer copies the feedback it read and edits the library.
			cmd := `cp {{failures_file}} feedback.json && echo v2 >> "$DESCENT_SKILL_DIR/SKILL.md" && ` + c.command
			got, err := (&ExecProposer{Command: cmd}).Propose(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Rationale = %+v, want %+v", got, c.want)
			}
			data, err := os.ReadFile(filepath.Join(req.Worktree, "feedback.json"))
			if err != nil {
				t.Fatalf("the proposer could not copy the feedback into its working directory: %v", err)
			}
			var fb Feedback
			if err := json.Unmarshal(data, &fb); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fb, req.Feedback) {
				t.Errorf("feedback read by the proposer:\n%+v\nwant\n%+v", fb, req.Feedback)
			}
			if skill, _ := os.ReadFile(filepath.Join(req.SkillDir, "SKILL.md")); string(skill) != "v1\nv2\n" {
				t.Errorf("SKILL.md = %q, want the proposer's edit", skill)
			}
		})
	}
}

func TestExecProposerEnvironment(t *testing.T) {
	t.Setenv("SECRET_TOKEN", "s3cret")
	req := newProposeRequest(t)
	if _, err := (&ExecProposer{Command: "env -0 > env.out"}).Propose(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(req.Worktree, "env.out"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for k, want := range map[string]string{
		"DESCENT_LIBRARY": "pdf-audit", "DESCENT_WORKER": "3", "DESCENT_WORKTREE": req.Worktree,
		"DESCENT_SKILL_DIR": req.SkillDir, "DESCENT_FAILURES": filepath.Join(req.Control, "failures.json"),
		"DESCENT_RATIONALE_FILE": filepath.Join(req.Control, "rationale.txt"),
		"HOME":                   filepath.Join(req.Control, "home"), "TMPDIR": filepath.Join(req.Control, "tmp"),
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if v, ok := env["SECRET_TOKEN"]; ok {
		t.Errorf("SECRET_TOKEN = %q leaked into the proposer", v)
	}
}

func TestExecProposerFailure(t *testing.T) {
	req := newProposeRequest(t)
	_, err := (&ExecProposer{Command: `echo "Subject"; echo model refused >&2; exit 2`}).Propose(context.Background(), req)
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 2 || !strings.Contains(err.Error(), "model refused") {
		t.Errorf("Propose = %v, want exit status 2 with the stderr", err)
	}
	if _, err := (&ExecProposer{Command: `edit {{failure_file}}`}).Propose(context.Background(), req); err == nil ||
		!strings.Contains(err.Error(), "{{failures_file}}") {
		t.Errorf("Propose with a misspelt placeholder = %v, want the valid names", err)
	}
}

func TestParseRationale(t *testing.T) {
	long := strings.Repeat("é", 150)
	for _, c := range []struct {
		name, in string
		want     Rationale
	}{
		{"empty", "", Rationale{}},
		{"subject only", "Fix step 2\n", Rationale{Subject: "Fix step 2"}},
		{"leading blank lines", "\n\n  Fix\tstep   2  \n\nBody line 1\nline 2\n\n", Rationale{Subject: "Fix step 2", Body: "Body line 1\nline 2"}},
		{"CRLF", "Fix\r\n\r\nBody\r\n", Rationale{Subject: "Fix", Body: "Body"}},
		{"exactly 100 runes kept", strings.Repeat("x", 100), Rationale{Subject: strings.Repeat("x", 100)}},
		{"101 runes clipped", strings.Repeat("x", 101) + "\nbody", Rationale{Subject: strings.Repeat("x", 99) + "…", Body: "body"}},
		{"multibyte clipped on runes", long, Rationale{Subject: strings.Repeat("é", 99) + "…"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ParseRationale(c.in)
			if got != c.want {
				t.Errorf("ParseRationale(%q) = %+v, want %+v", c.in, got, c.want)
			}
			if n := len([]rune(got.Subject)); n > 100 {
				t.Errorf("subject has %d runes", n)
			}
		})
	}
}

// A CLI proposer works in the library's directory of its seat, and the
// brief, the feedback file and DESCENT_SKILL_DIR name it.
func TestCLIProposerEditsTheSeat(t *testing.T) {
	req := newProposeRequest(t)
	p := &ExecProposer{
		Command: `[ "$PWD" = "` + req.SkillDir + `" ] || exit 9; [ "$DESCENT_SKILL_DIR" = "$PWD" ] || exit 8; ` +
			`grep -q "files are in $PWD" || exit 7; grep -q "\"skill_dir\": \"$PWD\"" "$DESCENT_FAILURES" || exit 6; echo v2 > SKILL.md; ` +
			`printf '{"type":"result","subtype":"success","is_error":false,"result":"Subject\\n\\nBody","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":2}}\n'`,
		CLI: &CLI{Parse: parseClaude, ReportsCost: true, Home: "CLAUDE_CONFIG_DIR"},
	}
	rat, err := p.Propose(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if rat.Subject != "Subject" || rat.Body != "Body" || rat.Tokens != 12 || rat.Cost != 0.5 {
		t.Fatalf("rationale %+v", rat)
	}
	if data, _ := os.ReadFile(filepath.Join(req.SkillDir, "SKILL.md")); string(data) != "v2\n" {
		t.Fatalf("edit not made: %q", data)
	}
}

// A refused tool call fails the proposal with the client's reason (so what
// it did is never captured).
func TestCLIProposerRefusedCallFails(t *testing.T) {
	req := newProposeRequest(t)
	p := &ExecProposer{
		Command: `echo v2 > SKILL.md; printf '%s\n' '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Claude requested permissions to edit x which is a sensitive file."}]}}' ` +
			`'{"type":"result","subtype":"success","is_error":false,"result":"Done","usage":{},"permission_denials":[{"tool_name":"Edit","tool_use_id":"t1","tool_input":{"file_path":"x/SKILL.md"}}]}'`,
		CLI: &CLI{Parse: parseClaude, ReportsCost: true},
	}
	_, err := p.Propose(context.Background(), req)
	var infra *InfraError
	if err == nil || errors.As(err, &infra) || !strings.Contains(err.Error(), "refused 1 tool call(s): Edit x/SKILL.md: Claude requested permissions") {
		t.Fatalf("err = %v", err)
	}
}
