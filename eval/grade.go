package eval

import "context"

// Grade is a reward with what computing it spent and, for the judge, the
// verdict on each expectation (the skill-creator grading.json shape).
type Grade struct {
	Reward       float64   `json:"reward"`
	Tokens       int64     `json:"tokens,omitempty"`
	Cost         float64   `json:"cost,omitempty"` // USD
	Expectations []Verdict `json:"expectations,omitempty"`
}

// Verdict is a grader's finding on one expectation.
type Verdict struct {
	Text     string `json:"text"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
}

// Grader is a Scorer that also reports what grading cost and why.
type Grader interface {
	Scorer
	Grade(ctx context.Context, t Task, output string) (Grade, error)
}

// GradeWith grades output with s: through Grade when s is a Grader, else
// as a bare reward.
func GradeWith(ctx context.Context, s Scorer, t Task, output string) (Grade, error) {
	if g, ok := s.(Grader); ok {
		return g.Grade(ctx, t, output)
	}
	r, err := s.Score(ctx, t, output)
	return Grade{Reward: r}, err
}
