package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// newRequest lays out a rollout's directories under a temporary root.
func newRequest(t *testing.T) Request {
	t.Helper()
	root := t.TempDir()
	req := Request{
		Library: "pdf-audit", TaskID: "t-007", Prompt: `What's the "total"? $(echo no)`,
		TaskFile: filepath.Join(root, "control", "task.json"), SkillDir: filepath.Join(root, "ws", "skills", "pdf-audit"),
		Workspace: filepath.Join(root, "ws"), Control: filepath.Join(root, "control"),
		Files: []string{filepath.Join(root, "ws", "a.pdf"), filepath.Join(root, "ws", "b.pdf")},
	}
	for _, d := range []string{req.Workspace, req.Control, req.SkillDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

func TestExecRunOutput(t *testing.T) {
	for _, c := range []struct {
		name, command, want string
	}{
		{"stdout", `printf 'answer for %s' {{task_id}}`, "answer for t-007"},
		{"stdin is the prompt", `cat`, `What's the "total"? $(echo no)`},
		{"prompt placeholder", `printf %s {{prompt}}`, `What's the "total"? $(echo no)`},
		{"output file wins over stdout", `echo noise; printf 42 > "$DESCENT_OUTPUT_FILE"`, "42"},
		{"output file placeholder", `echo noise; printf 43 > {{output_file}}`, "43"},
		{"working directory is the workspace", `pwd -P`, "$WORKSPACE\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newRequest(t)
			ws, err := filepath.EvalSymlinks(req.Workspace)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(c.want, "$WORKSPACE", ws)
			resp, err := (&Exec{Command: c.command}).Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Output != want {
				t.Errorf("Output = %q, want %q", resp.Output, want)
			}
		})
	}
}

func TestExecRunEnvironment(t *testing.T) {
	t.Setenv("SECRET_TOKEN", "s3cret")
	t.Setenv("MY_API_KEY", "k")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	for _, c := range []struct {
		name  string
		allow []string
		want  func(req Request) map[string]string // "" means unset
	}{
		{"isolated", nil, func(req Request) map[string]string {
			return map[string]string{
				"DESCENT_PROMPT": req.Prompt, "DESCENT_TASK_ID": "t-007", "DESCENT_TASK_FILE": req.TaskFile,
				"DESCENT_SKILL_DIR": req.SkillDir, "DESCENT_WORKSPACE": req.Workspace, "DESCENT_LIBRARY": "pdf-audit",
				"DESCENT_OUTPUT_FILE": filepath.Join(req.Control, "output"),
				"DESCENT_FILES":       strings.Join(req.Files, string(os.PathListSeparator)),
				"HOME":                filepath.Join(req.Control, "home"), "TMPDIR": filepath.Join(req.Control, "tmp"),
				"SECRET_TOKEN": "", "MY_API_KEY": "",
			}
		}},
		{"allowed", []string{"HOME", "TMPDIR", "MY_*"}, func(req Request) map[string]string {
			return map[string]string{
				"HOME": os.Getenv("HOME"), "TMPDIR": os.Getenv("TMPDIR"), "MY_API_KEY": "k", "SECRET_TOKEN": "",
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newRequest(t)
			resp, err := (&Exec{Command: "env -0", Allow: c.allow}).Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for _, kv := range strings.Split(resp.Output, "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
			for k, want := range c.want(req) {
				got, ok := env[k]
				if want == "" && ok {
					t.Errorf("%s = %q leaked into the command", k, got)
				} else if want != "" && got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if c.allow == nil {
				for _, k := range []string{"HOME", "TMPDIR"} {
					if fi, err := os.Stat(env[k]); err != nil || !fi.IsDir() {
						t.Errorf("%s %q is not a directory: %v", k, env[k], err)
					}
				}
			}
		})
	}
}

func TestExecRunFailure(t *testing.T) {
	req := newRequest(t)
	cmd := `printf partial; printf ignored > "$DESCENT_OUTPUT_FILE"; echo oops >&2; exit 3`
	resp, err := (&Exec{Command: cmd}).Run(context.Background(), req)
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 3 {
		t.Fatalf("Run = %v, want exit status 3", err)
	}
	if resp.Output != "partial" || strings.TrimSpace(resp.Stderr) != "oops" {
		t.Errorf("Response = %+v, want the partial stdout and stderr", resp)
	}
}

// A process that never answered for itself is an infrastructure failure
// (transient: retried, never scored): its command not found (127), not
// runnable (126), killed, timed out, or unable to start at all. A failing
// exit of its own is not (and a prompt too long for {{prompt}} is a
// configuration that stops the run: TestExecRunLongPrompt).
func TestExecRunInfrastructureFailures(t *testing.T) {
	for _, c := range []struct {
		name, command string
		infra         bool
	}{
		{"not found", "no-such-agent-xyz", true},
		{"not runnable", "/dev/null", true},
		{"killed", "kill -9 $$", true},
		{"timed out", "sleep 5", true},
		{"its own failure", "exit 3", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newRequest(t)
			_, err := (&Exec{Command: c.command, Timeout: 200 * time.Millisecond}).Run(context.Background(), req)
			var infra *InfraError
			if got := errors.As(err, &infra); got != c.infra || got && infra.Fatal {
				t.Fatalf("Run = %v: infrastructure %v, want %v (and never fatal)", err, got, c.infra)
			}
		})
	}
}

func TestExecRunTruncates(t *testing.T) {
	req := newRequest(t)
	resp, err := (&Exec{Command: "yes | head -c 1000", MaxOutput: 10}).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 10 || !resp.Truncated {
		t.Errorf("Output %q truncated %v, want 10 bytes, truncated", resp.Output, resp.Truncated)
	}
}

func TestExecRunBadTemplate(t *testing.T) {
	req := newRequest(t)
	if _, err := (&Exec{Command: "agent {{answer}}"}).Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "{{answer}}") {
		t.Errorf("Run with an unknown placeholder = %v", err)
	}
}

// A prompt too long for the environment or a command line still reaches the
// agent, on stdin and in DESCENT_PROMPT_FILE; {{prompt}} with one stops the
// run with the fix, instead of failing to start every time.
func TestExecRunLongPrompt(t *testing.T) {
	req := newRequest(t)
	req.Prompt = strings.Repeat("long prompt ", 200<<10/12) // 200 KiB
	for _, command := range []string{`wc -c`, `wc -c < "$DESCENT_PROMPT_FILE"`, `wc -c < {{prompt_file}}`, `printf %s "${DESCENT_PROMPT:-none}"`} {
		resp, err := (&Exec{Command: command}).Run(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		want := fmt.Sprint(len(req.Prompt))
		if strings.Contains(command, "DESCENT_PROMPT:-") {
			want = "none" // too long for the environment
		}
		if strings.TrimSpace(resp.Output) != want {
			t.Errorf("%s: output %q, want %s", command, resp.Output, want)
		}
	}
	_, err := (&Exec{Command: `printf %s {{prompt}} | wc -c`}).Run(context.Background(), req)
	var infra *InfraError
	if !errors.As(err, &infra) || !infra.Fatal || !strings.Contains(err.Error(), "too long for {{prompt}} on a command line") || !strings.Contains(err.Error(), "{{prompt_file}}") {
		t.Fatalf("{{prompt}} with a 200 KiB prompt: %v", err)
	}
	req.Prompt = "short"
	resp, err := (&Exec{Command: `printf %s "$DESCENT_PROMPT"`}).Run(context.Background(), req)
	if err != nil || resp.Output != "short" {
		t.Fatalf("short prompt in the environment: %q, %v", resp.Output, err)
	}
}
