package llm

import "context"

// Limiter bounds how many requests to one provider are in flight at once.
// Share one Limiter among every [Client] of that provider. A slot is held for
// one HTTP attempt only, not while a Client waits to retry. Safe for
// concurrent use; a nil *Limiter imposes no limit.
type Limiter struct {
	slots chan struct{} // a buffered semaphore: a send takes a slot, a receive frees it
}

// NewLimiter returns a Limiter allowing n concurrent requests; n < 1 means 1.
func NewLimiter(n int) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1))}
}

// acquire takes a slot, waiting until one is free or ctx is done.
func (l *Limiter) acquire(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release frees a slot taken by acquire.
func (l *Limiter) release() {
	if l != nil {
		<-l.slots
	}
}
