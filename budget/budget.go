// Package budget totals what a run spends on models and agents, in tokens
// and dollars, and stops the run when it passes its limits.
package budget

import (
	"context"
	"fmt"
	"sync"
)

// Meter totals a run's spending. It is safe for concurrent use.
type Meter struct {
	maxTokens int64
	maxCost   float64
	stop      context.CancelCauseFunc

	mu       sync.Mutex
	tokens   int64
	cost     float64
	unpriced int64
	over     bool
}

// NewMeter returns a meter that calls stop with an *ExceededError the first
// time spending passes maxTokens or maxCost (zero means no limit). stop may
// be nil.
func NewMeter(maxTokens int64, maxCost float64, stop context.CancelCauseFunc) *Meter {
	return &Meter{maxTokens: maxTokens, maxCost: maxCost, stop: stop}
}

// Add records spending: tokens, their cost in USD, and how many of them
// have no known cost (no price for the model; --max-cost cannot see them).
// Work already running when a limit is passed is cancelled through the
// run's context; what it spent is still counted.
func (m *Meter) Add(tokens int64, cost float64, unpriced int64) {
	if m == nil || tokens == 0 && cost == 0 {
		return
	}
	m.mu.Lock()
	m.tokens += tokens
	m.cost += cost
	m.unpriced += unpriced
	var err *ExceededError
	switch {
	case m.over:
	case m.maxTokens > 0 && m.tokens >= m.maxTokens:
		err = &ExceededError{What: "tokens", Limit: float64(m.maxTokens), Spent: float64(m.tokens)}
	case m.maxCost > 0 && m.cost >= m.maxCost:
		err = &ExceededError{What: "cost", Limit: m.maxCost, Spent: m.cost}
	}
	if err != nil {
		m.over = true
	}
	m.mu.Unlock()
	if err != nil && m.stop != nil {
		m.stop(err)
	}
}

// Unpriced returns the tokens whose cost is unknown.
func (m *Meter) Unpriced() int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unpriced
}

// Cost renders a cost for people: "$0.0123", or with tokens nobody priced
// "cost unknown (1234 tokens unpriced)" or "$0.0123 + unknown (1234 tokens
// unpriced)". An unknown cost is never shown as $0.
func Cost(cost float64, unpriced int64) string {
	switch {
	case unpriced == 0:
		return fmt.Sprintf("$%.4f", cost)
	case cost == 0:
		return fmt.Sprintf("cost unknown (%d tokens unpriced)", unpriced)
	}
	return fmt.Sprintf("$%.4f + unknown (%d tokens unpriced)", cost, unpriced)
}

// Total returns the spending so far.
func (m *Meter) Total() (tokens int64, cost float64) {
	if m == nil {
		return 0, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens, m.cost
}

// ExceededError is a run stopped by its budget.
type ExceededError struct {
	What  string // "tokens" or "cost"
	Limit float64
	Spent float64
}

func (e *ExceededError) Error() string {
	if e.What == "cost" {
		return fmt.Sprintf("--max-cost $%.2f reached ($%.4f spent)", e.Limit, e.Spent)
	}
	return fmt.Sprintf("--max-tokens %.0f reached (%.0f spent)", e.Limit, e.Spent)
}
