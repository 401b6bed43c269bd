package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shRun is a RunFunc that really runs the command with sh -c, as the
// caller's runner does (minus timeouts and process groups).
func shRun(ctx context.Context, command, dir string, env []string, stdin []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

func commandScorerFor(t *testing.T, command string, env ...string) Scorer {
	t.Helper()
	s, err := NewScorer(ScorerConfig{
		Kind:    "command",
		Command: command,
		Dir:     t.TempDir(),
		Env:     append([]string{"PATH=" + os.Getenv("PATH")}, env...),
	}, shRun)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var commandTask = Task{
	ID:           "t1",
	Prompt:       "Add 2 and 2",
	Expected:     "4",
	Files:        []string{"in/a.txt"},
	Expectations: []string{"says four"},
	Source:       "evals/evals.json:3",
}

func TestScoreCommand(t *testing.T) {
	tests := []struct {
		command string
		want    float64
	}{
		{"echo 0.75", 0.75},
		{"printf 'grading...\\n0.25\\n\\n  \\n'", 0.25},
		{"echo 1", 1},
		{"echo 0", 0},
		{`test "$(cat)" = "four" && echo 1 || echo 0`, 1},
		{`test "$DESCENT_OUTPUT" = four && test "$DESCENT_EXPECTED" = 4 && test "$DESCENT_TASK_ID" = t1 && test "$DESCENT_PROMPT" = "Add 2 and 2" && echo 1`, 1},
		{`test "$BASE" = kept && echo 1`, 1},
	}
	for _, tt := range tests {
		s := commandScorerFor(t, tt.command, "BASE=kept", "DESCENT_TASK_ID=stale")
		got, err := s.Score(context.Background(), commandTask, "four")
		if err != nil {
			t.Errorf("%s: %v", tt.command, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: Score = %v, want %v", tt.command, got, tt.want)
		}
	}
}

func TestScoreCommandErrors(t *testing.T) {
	prefix := `task "t1" (evals/evals.json:3): score command `
	tests := []struct {
		command string
		want    []string
	}{
		{"echo 'score: high'", []string{prefix + `"echo 'score: high'": last line of output is not a number in [0,1]; it printed "score: high"`}},
		{"echo 1.5", []string{`last line of output is not a number in [0,1]; it printed "1.5"`}},
		{"echo -0.1", []string{`it printed "-0.1"`}},
		{"echo NaN", []string{`it printed "NaN"`}},
		{"true", []string{`last line of output is not a number in [0,1]; it printed nothing`}},
		{"echo 0.5; echo oops >&2; exit 1", []string{prefix + `"echo 0.5; echo oops >&2; exit 1": exit status 1: oops; it printed "0.5"`}},
	}
	for _, tt := range tests {
		s := commandScorerFor(t, tt.command)
		got, err := s.Score(context.Background(), commandTask, "four")
		if err == nil {
			t.Errorf("%s: Score = %v, want an error", tt.command, got)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error\n got %s\nwant it to contain %s", tt.command, err, want)
			}
		}
	}
}

func TestScoreCommandTruncatesPrinted(t *testing.T) {
	s := commandScorerFor(t, `i=0; while [ $i -lt 100 ]; do echo "log line $i"; i=$((i+1)); done; echo verdict-unknown`)
	_, err := s.Score(context.Background(), commandTask, "")
	if err == nil {
		t.Fatal("Score succeeded, want an error")
	}
	msg := err.Error()
	_, quoted, _ := strings.Cut(msg, "; it printed ")
	if !strings.HasPrefix(quoted, `"...`) || !strings.HasSuffix(quoted, `verdict-unknown"`) || len(quoted) > 200+40 {
		t.Errorf("printed output not cut to its last 200 bytes: %s", quoted)
	}
}

func TestScoreCommandTaskFile(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "seen")
	s := commandScorerFor(t, `cp "$DESCENT_TASK_FILE" "$KEEP" && echo "$DESCENT_TASK_FILE" >> "$KEEP.path" && echo 1`, "KEEP="+keep)
	if _, err := s.Score(context.Background(), commandTask, "four"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(keep)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("task file is not JSON: %v\n%s", err, data)
	}
	want := map[string]any{
		"id":              "t1",
		"prompt":          "Add 2 and 2",
		"expected_output": "4",
		"files":           []any{"in/a.txt"},
		"expectations":    []any{"says four"},
		"source":          "evals/evals.json:3",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("task file = %v, want %v", got, want)
	}
	path, err := os.ReadFile(keep + ".path")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(strings.TrimSpace(string(path)))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("task file directory %q still exists after scoring (stat: %v)", dir, err)
	}
}

func TestScoreCommandCapsEnvOutput(t *testing.T) {
	output := strings.Repeat("é", 60<<10) // 120 KiB, two bytes a rune
	s := commandScorerFor(t, `test "$(printf %s "$DESCENT_OUTPUT" | wc -c)" -eq 102400 && test "$(wc -c)" -eq 122880 && echo 1`)
	got, err := s.Score(context.Background(), commandTask, output)
	if err != nil || got != 1 {
		t.Errorf("Score = %v, %v; want DESCENT_OUTPUT capped at 100 KiB and stdin whole", got, err)
	}
	if capped := envText(output + "x"); len(capped) != 100<<10 {
		t.Errorf("envText kept %d bytes, want %d", len(capped), 100<<10)
	}
	if capped := envText("x" + output); len(capped) != 100<<10-1 {
		t.Errorf("envText kept %d bytes, want %d (cut before a split rune)", len(capped), 100<<10-1)
	}
}
