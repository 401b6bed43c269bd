package eval

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/git-descent/git-descent/llm"
)

// Scorer grades one output of one task. Score returns a reward in [0,1].
// A task or configuration the scorer cannot grade is an error, never a
// silent 0. The scorers from NewScorer are safe for concurrent use.
type Scorer interface {
	Score(ctx context.Context, t Task, output string) (float64, error)
}

// ScorerConfig is how a library's scorer is configured.
type ScorerConfig struct {
	Kind      string      // exact, contains, regex, numeric, command; "" means exact
	Tolerance float64     // numeric: absolute tolerance (default 1e-6 when 0), compared as |got-want| <= tol
	Command   string      // command: shell command line
	Dir       string      // command: working directory
	Env       []string    // command: base environment ("K=V") to which the DESCENT_* variables are added
	Judge     *llm.Client // judge: the chat model that grades expectations
}

// Kinds lists the valid scorer kinds, for messages.
var Kinds = []string{"exact", "contains", "regex", "numeric", "command", "judge"}

// ErrUnknownScorer is wrapped by NewScorer when the kind is not in Kinds.
var ErrUnknownScorer = errors.New("unknown scorer")

// RunFunc runs a shell command and returns its standard output; the caller
// supplies it (it enforces timeouts and process-group kills). A non-zero
// exit is an error; the output printed so far may come back with it.
type RunFunc func(ctx context.Context, command, dir string, env []string, stdin []byte) ([]byte, error)

// NewScorer returns the scorer cfg.Kind names (matched case-insensitively;
// "" means exact):
//
//   - exact: 1 when output equals t.Expected, both trimmed and with CRLF
//     read as LF; else 0.
//
//   - contains: 1 when output contains the trimmed t.Expected,
//     case-insensitively; else 0. An empty t.Expected is an error.
//
//   - regex: t.Expected is an RE2 expression; 1 when it matches anywhere in
//     output, else 0. An invalid or empty expression is an error naming the
//     task.
//
//   - numeric: t.Expected must be one number (thousands separators and a
//     trailing "%" allowed), else an error naming the task. The last
//     number in output (sign, decimals, exponent and thousands separators
//     like "1,234.5" allowed; a trailing "%" or unit ignored) scores 1 when
//     |got-want| <= cfg.Tolerance (DefaultTolerance when 0), else 0; an
//     output without a number scores 0. A negative tolerance is an error.
//
//   - command: runs cfg.Command through run in cfg.Dir with the output on
//     stdin and cfg.Env plus DESCENT_TASK_ID, DESCENT_EXPECTED,
//     DESCENT_PROMPT, DESCENT_OUTPUT (each capped at 100 KiB; stdin has the
//     whole output) and DESCENT_TASK_FILE, a JSON file holding the whole
//     task (id, prompt, expected_output, files, expectations, source) in a
//     temporary directory removed afterwards. The last non-blank line of
//     its stdout must be a number in [0,1], which is the reward; anything
//     else, or an error from run, is an error naming the task, the command
//     and the tail of what it printed. An empty cfg.Command or a nil run is
//     an error.
//
//   - judge: a chat model (cfg.Judge) grades each of the task's
//     expectations, passed or not with evidence; the reward is the pass
//     rate. A task without expectations is judged on giving its expected
//     output. The scorer is a Grader: it reports the tokens it spent.
//
// cfg.Kind may also combine kinds with weights, "contains*0.3, judge*0.7"
// (ParseSpec): the reward is the weighted sum.
//
// An unknown kind is an error wrapping ErrUnknownScorer.
func NewScorer(cfg ScorerConfig, run RunFunc) (Scorer, error) {
	parts, err := ParseSpec(cfg.Kind)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return newScorer(cfg, parts[0].Kind, run)
	}
	var c combined
	for _, p := range parts {
		s, err := newScorer(cfg, p.Kind, run)
		if err != nil {
			return nil, err
		}
		c.parts, c.weights = append(c.parts, s), append(c.weights, p.Weight)
	}
	return c, nil
}

// newScorer builds one kind of scorer.
func newScorer(cfg ScorerConfig, kind string, run RunFunc) (Scorer, error) {
	switch kind {
	case "judge":
		if cfg.Judge == nil {
			return nil, errors.New("scorer judge needs a model: set descent.model (or judge-model) and the endpoint")
		}
		return judge{client: cfg.Judge}, nil
	case "", "exact":
		return scoreFunc(scoreExact), nil
	case "contains":
		return scoreFunc(scoreContains), nil
	case "regex":
		return scoreFunc(scoreRegex), nil
	case "numeric":
		return newNumericScorer(cfg.Tolerance)
	case "command":
		return newCommandScorer(cfg, run)
	}
	return nil, fmt.Errorf("%w %q: valid kinds are %s", ErrUnknownScorer, cfg.Kind, strings.Join(Kinds, ", "))
}

// scoreFunc adapts a function that needs no configuration to Scorer.
type scoreFunc func(t Task, output string) (float64, error)

func (f scoreFunc) Score(_ context.Context, t Task, output string) (float64, error) {
	return f(t, output)
}

func scoreExact(t Task, output string) (float64, error) {
	return reward(normalize(output) == normalize(t.Expected)), nil
}

func scoreContains(t Task, output string) (float64, error) {
	want := normalize(t.Expected)
	if want == "" {
		return 0, fmt.Errorf("%s: contains scorer: expected_output is empty", taskRef(t))
	}
	return reward(strings.Contains(strings.ToLower(normalizeEOL(output)), strings.ToLower(want))), nil
}

func scoreRegex(t Task, output string) (float64, error) {
	if t.Expected == "" {
		return 0, fmt.Errorf("%s: regex scorer: expected_output is empty", taskRef(t))
	}
	re, err := regexp.Compile(t.Expected)
	if err != nil {
		return 0, fmt.Errorf("%s: regex scorer: expected_output: %w", taskRef(t), err)
	}
	return reward(re.MatchString(output)), nil
}

// normalize reads CRLF as LF and trims surrounding space.
func normalize(s string) string { return strings.TrimSpace(normalizeEOL(s)) }

func normalizeEOL(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func reward(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// taskRef names a task in messages: `task "3" (evals/evals.json:12)`.
func taskRef(t Task) string {
	if t.Source == "" {
		return fmt.Sprintf("task %q", t.ID)
	}
	return fmt.Sprintf("task %q (%s)", t.ID, t.Source)
}

// CheckTasks reports, before any rollout, the tasks the scorer spec can
// never score: those whose expected_output contains and regex need but
// that have none, and regexes that do not compile. The error names them
// (up to five) and the fix.
func CheckTasks(spec string, tasks []Task) error {
	parts, err := ParseSpec(spec)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.Kind != "contains" && p.Kind != "regex" {
			continue
		}
		var bad []string
		for _, t := range tasks {
			if _, err := regexp.Compile(t.Expected); strings.TrimSpace(t.Expected) == "" || p.Kind == "regex" && err != nil {
				bad = append(bad, taskRef(t))
			}
		}
		if len(bad) > 0 {
			more := ""
			if len(bad) > 5 {
				bad, more = bad[:5], fmt.Sprintf(" and %d more", len(bad)-5)
			}
			return fmt.Errorf("the %s scorer needs each task's expected_output, and %s%s %s: give them one (a key named otherwise, such as \"expected\", is not read)",
				p.Kind, strings.Join(bad, ", "), more, map[bool]string{true: "has none or an invalid one", false: "have none or an invalid one"}[len(bad) == 1 && more == ""])
		}
	}
	return nil
}
