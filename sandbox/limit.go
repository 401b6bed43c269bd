package sandbox

import "context"

// Limiter bounds how many processes run at once. Every rollout (a worker's
// or the gate's) takes a slot, so one limit governs the whole run.
type Limiter struct{ slots chan struct{} }

// NewLimiter allows n concurrent holders (at least 1).
func NewLimiter(n int) *Limiter {
	if n < 1 {
		n = 1
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Acquire waits for a slot or for ctx to end.
func (l *Limiter) Acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot if one is free now, without waiting.
func (l *Limiter) TryAcquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives back a slot taken by Acquire or TryAcquire.
func (l *Limiter) Release() { <-l.slots }

// Cap is the number of slots.
func (l *Limiter) Cap() int { return cap(l.slots) }
