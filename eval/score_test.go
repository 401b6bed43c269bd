package eval

import (
	"context"
	"errors"
	"github.com/git-descent/git-descent/llm"
	"strings"
	"testing"
)

// scoreCase is one output of one task and the reward it should get.
type scoreCase struct {
	expected, output string
	want             float64
}

func runScoreCases(t *testing.T, cfg ScorerConfig, cases []scoreCase) {
	t.Helper()
	s, err := NewScorer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got, err := s.Score(context.Background(), Task{ID: "1", Expected: c.expected}, c.output)
		if err != nil {
			t.Errorf("%s: Score(expected %q, output %q): %v", cfg.Kind, c.expected, c.output, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: Score(expected %q, output %q) = %v, want %v", cfg.Kind, c.expected, c.output, got, c.want)
		}
	}
}

func TestScoreExact(t *testing.T) {
	cases := []scoreCase{
		{"42", "42", 1},
		{"42", "  42\n", 1},
		{"line one\nline two\n", "line one\r\nline two\r\n", 1},
		{"42", "42.0", 0},
		{"Paris", "paris", 0},
		{"", "", 1},
		{"", "something", 0},
	}
	runScoreCases(t, ScorerConfig{Kind: "exact"}, cases)
	runScoreCases(t, ScorerConfig{}, cases) // "" means exact
}

func TestScoreContains(t *testing.T) {
	runScoreCases(t, ScorerConfig{Kind: "contains"}, []scoreCase{
		{"Paris", "The capital of France is paris.", 1},
		{"  Paris\n", "PARIS", 1},
		{"a\nb", "x a\r\nb y", 1},
		{"Paris", "Lyon", 0},
		{"Paris", "", 0},
	})
}

func TestScoreRegex(t *testing.T) {
	runScoreCases(t, ScorerConfig{Kind: "Regex"}, []scoreCase{
		{`^\d{4}-\d{2}-\d{2}$`, "2024-01-15", 1},
		{`\d{4}-\d{2}-\d{2}`, "the date is 2024-01-15.", 1},
		{`(?i)paris`, "PARIS", 1},
		{`^\d+$`, "12a", 0},
		{`(?m)^done$`, "working\ndone\n", 1},
	})
}

func TestScoreTaskErrors(t *testing.T) {
	task := Task{ID: "7", Source: "evals/evals.json:12"}
	tests := []struct {
		kind, expected, want string
	}{
		{"regex", "a(b", `task "7" (evals/evals.json:12): regex scorer: expected_output: error parsing regexp: missing closing ): ` + "`a(b`"},
		{"regex", "", `task "7" (evals/evals.json:12): regex scorer: expected_output is empty`},
		{"contains", "  ", `task "7" (evals/evals.json:12): contains scorer: expected_output is empty`},
		{"numeric", "about 4", `task "7" (evals/evals.json:12): numeric scorer: expected_output "about 4" is not a number`},
		{"numeric", "", `task "7" (evals/evals.json:12): numeric scorer: expected_output "" is not a number`},
	}
	for _, tt := range tests {
		s, err := NewScorer(ScorerConfig{Kind: tt.kind}, nil)
		if err != nil {
			t.Fatal(err)
		}
		task.Expected = tt.expected
		got, err := s.Score(context.Background(), task, "4")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s with expected %q: Score = %v, %v; want error %q", tt.kind, tt.expected, got, err, tt.want)
		}
	}
}

func TestNewScorerErrors(t *testing.T) {
	run := func(context.Context, string, string, []string, []byte) ([]byte, error) { return []byte("1"), nil }
	tests := []struct {
		cfg  ScorerConfig
		run  RunFunc
		want string
	}{
		{ScorerConfig{Kind: "fuzzy"}, run, `unknown scorer "fuzzy": valid kinds are exact, contains, regex, numeric, command`},
		{ScorerConfig{Kind: "command"}, run, `command scorer: no command: set score-command in .descent`},
		{ScorerConfig{Kind: "command", Command: "  "}, run, `set score-command in .descent`},
		{ScorerConfig{Kind: "command", Command: "true"}, nil, `command scorer: no RunFunc to run the command`},
		{ScorerConfig{Kind: "numeric", Tolerance: -1}, nil, `numeric scorer: tolerance -1: must be a number >= 0`},
	}
	for _, tt := range tests {
		s, err := NewScorer(tt.cfg, tt.run)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewScorer(%+v) = %v, %v; want error containing %q", tt.cfg, s, err, tt.want)
		}
	}
	if _, err := NewScorer(ScorerConfig{Kind: "fuzzy"}, nil); !errors.Is(err, ErrUnknownScorer) {
		t.Errorf("unknown kind error %v does not wrap ErrUnknownScorer", err)
	}
	judgeModel, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:9/v1", Model: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range append(Kinds, "contains*0.3, judge*0.7") {
		if _, err := NewScorer(ScorerConfig{Kind: kind, Command: "true", Judge: judgeModel}, run); err != nil {
			t.Errorf("NewScorer(%q): %v", kind, err)
		}
	}
}
