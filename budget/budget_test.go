package budget

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestMeterStopsOnceAtTheLimit(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	m := NewMeter(0, 1.0, cancel)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); m.Add(10, 0.011, 0) }()
	}
	wg.Wait()
	tokens, cost := m.Total()
	if tokens != 1000 || cost < 1.09 || cost > 1.11 {
		t.Fatalf("total = %d, %f", tokens, cost)
	}
	var ex *ExceededError
	if !errors.As(context.Cause(ctx), &ex) || ex.What != "cost" || ex.Limit != 1.0 {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
	if got := ex.Error(); got[:25] != "--max-cost $1.00 reached " {
		t.Fatalf("message %q", got)
	}
}

func TestMeterTokensAndNoLimits(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	m := NewMeter(500, 0, cancel)
	m.Add(499, 5, 0)
	if ctx.Err() != nil {
		t.Fatal("stopped below the token limit (cost has no limit)")
	}
	m.Add(1, 0, 0)
	var ex *ExceededError
	if !errors.As(context.Cause(ctx), &ex) || ex.What != "tokens" {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
	var nilMeter *Meter
	nilMeter.Add(1, 1, 0) // a nil meter counts nothing and never panics
	if tk, c := nilMeter.Total(); tk != 0 || c != 0 {
		t.Fatal("nil meter has totals")
	}
}

// Tokens nobody priced are counted apart and shown as unknown, never $0.
func TestMeterCountsUnpricedTokens(t *testing.T) {
	m := NewMeter(0, 0, nil)
	m.Add(100, 0, 100)
	m.Add(50, 0.5, 0)
	if tk, c := m.Total(); tk != 150 || c != 0.5 || m.Unpriced() != 100 {
		t.Fatalf("total %d, %v, unpriced %d", tk, c, m.Unpriced())
	}
	if got := Cost(0.5, m.Unpriced()); got != "$0.5000 + unknown (100 tokens unpriced)" {
		t.Fatalf("Cost = %q", got)
	}
	if got := Cost(0, 7); got != "cost unknown (7 tokens unpriced)" {
		t.Fatalf("Cost = %q", got)
	}
}
