package eval

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Part is one scorer in a weighted combination.
type Part struct {
	Kind   string
	Weight float64
}

// ParseSpec reads a scorer setting: one kind ("contains"), or kinds with
// weights ("contains*0.3, judge*0.7"); weights are normalised to sum to 1
// and default to 1.
func ParseSpec(spec string) ([]Part, error) {
	var parts []Part
	var total float64
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" && len(parts) == 0 && !strings.Contains(spec, ",") {
			f = "exact"
		}
		kind, w, weighted := strings.Cut(f, "*")
		p := Part{Kind: strings.ToLower(strings.TrimSpace(kind)), Weight: 1}
		if weighted {
			v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("scorer %q: weight %q must be a positive number", spec, w)
			}
			p.Weight = v
		}
		if !contains(Kinds, p.Kind) {
			return nil, fmt.Errorf("%w %q: valid kinds are %s (combine them as \"contains*0.3, judge*0.7\")", ErrUnknownScorer, p.Kind, strings.Join(Kinds, ", "))
		}
		parts = append(parts, p)
		total += p.Weight
	}
	for i := range parts {
		parts[i].Weight /= total
	}
	return parts, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// combined is a weighted sum of scorers.
type combined struct {
	parts   []Scorer
	weights []float64
}

func (c combined) Score(ctx context.Context, t Task, output string) (float64, error) {
	g, err := c.Grade(ctx, t, output)
	return g.Reward, err
}

func (c combined) Grade(ctx context.Context, t Task, output string) (Grade, error) {
	var total Grade
	for i, s := range c.parts {
		g, err := GradeWith(ctx, s, t, output)
		total.Tokens += g.Tokens
		total.Cost += g.Cost
		if err != nil {
			return total, err
		}
		total.Reward += c.weights[i] * g.Reward
		total.Expectations = append(total.Expectations, g.Expectations...)
	}
	return total, nil
}
