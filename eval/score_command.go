package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxEnvText caps each text passed to a score command in an environment
// variable; the full texts are in its stdin and task file.
const maxEnvText = 100 << 10

// maxPrinted caps how much of a score command's output an error quotes.
const maxPrinted = 200

// descentVars are the environment variables the command scorer sets,
// replacing any of the same name in the base environment.
var descentVars = []string{"DESCENT_TASK_ID", "DESCENT_EXPECTED", "DESCENT_PROMPT", "DESCENT_OUTPUT", "DESCENT_TASK_FILE"}

// commandScorer runs a shell command per output; NewScorer documents it.
type commandScorer struct {
	command string
	dir     string
	env     []string
	run     RunFunc
}

func newCommandScorer(cfg ScorerConfig, run RunFunc) (Scorer, error) {
	if strings.TrimSpace(cfg.Command) == "" {
		return nil, errors.New("command scorer: no command: set score-command in .descent")
	}
	if run == nil {
		return nil, errors.New("command scorer: no RunFunc to run the command")
	}
	return commandScorer{command: cfg.Command, dir: cfg.Dir, env: cfg.Env, run: run}, nil
}

func (s commandScorer) Score(ctx context.Context, t Task, output string) (float64, error) {
	tmp, err := os.MkdirTemp("", "descent-score-")
	if err != nil {
		return 0, fmt.Errorf("%s: score command %q: create task file: %w", taskRef(t), s.command, err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "task.json")
	if err := writeTaskFile(file, t); err != nil {
		return 0, fmt.Errorf("%s: score command %q: %w", taskRef(t), s.command, err)
	}
	out, err := s.run(ctx, s.command, s.dir, s.environ(t, output, file), []byte(output))
	if err != nil {
		return 0, fmt.Errorf("%s: score command %q: %w%s", taskRef(t), s.command, err, printed(out))
	}
	v, ok := parseScore(out)
	if !ok {
		return 0, fmt.Errorf("%s: score command %q: last line of output is not a number in [0,1]%s",
			taskRef(t), s.command, printed(out))
	}
	return v, nil
}

// environ returns the base environment without any DESCENT_* variable the
// scorer sets, followed by those variables.
func (s commandScorer) environ(t Task, output, file string) []string {
	env := make([]string, 0, len(s.env)+len(descentVars))
	for _, kv := range s.env {
		name, _, _ := strings.Cut(kv, "=")
		if !isDescentVar(name) {
			env = append(env, kv)
		}
	}
	return append(env,
		"DESCENT_TASK_ID="+envText(t.ID),
		"DESCENT_EXPECTED="+envText(t.Expected),
		"DESCENT_PROMPT="+envText(t.Prompt),
		"DESCENT_OUTPUT="+envText(output),
		"DESCENT_TASK_FILE="+file,
	)
}

func isDescentVar(name string) bool {
	for _, v := range descentVars {
		if v == name {
			return true
		}
	}
	return false
}

// envText makes s fit an environment variable: NUL bytes dropped and at
// most maxEnvText bytes, cut at a UTF-8 boundary.
func envText(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= maxEnvText {
		return s
	}
	cut := maxEnvText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// taskFile is the JSON a score command finds at $DESCENT_TASK_FILE, in the
// skill-creator field names.
type taskFile struct {
	ID           string   `json:"id"`
	Prompt       string   `json:"prompt"`
	Expected     string   `json:"expected_output"`
	Files        []string `json:"files"`
	Expectations []string `json:"expectations"`
	Source       string   `json:"source"`
}

func writeTaskFile(path string, t Task) error {
	data, err := json.MarshalIndent(taskFile{
		ID:           t.ID,
		Prompt:       t.Prompt,
		Expected:     t.Expected,
		Files:        nonNil(t.Files),
		Expectations: nonNil(t.Expectations),
		Source:       t.Source,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode task file: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write task file: %w", err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// parseScore reads the last non-blank line of out as a number in [0,1].
func parseScore(out []byte) (float64, bool) {
	text := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[i+1:])
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
		return 0, false
	}
	return v, true
}

// printed describes a command's output for the end of an error message:
// its last maxPrinted bytes, where the score line is, starting with "..."
// when cut.
func printed(out []byte) string {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return "; it printed nothing"
	}
	if len(out) <= maxPrinted {
		return fmt.Sprintf("; it printed %q", out)
	}
	cut := len(out) - maxPrinted
	for cut < len(out) && !utf8.RuneStart(out[cut]) {
		cut++
	}
	return fmt.Sprintf("; it printed %q", append([]byte("..."), out[cut:]...))
}
