package sandbox

import (
	"context"
	"sync"
)

// Limiter bounds how many processes run at once. Every rollout (a worker's
// or the gate's) takes a slot, so one limit governs the whole run. When
// slots are short, a freed one goes to the waiter of the highest Priority
// (the oldest of them): the aggregator's rollouts, which every worker ends
// up waiting for, before the workers', and those before speculation.
type Limiter struct {
	mu      sync.Mutex
	n, used int
	waiting [priorities][]*waiter // oldest first
}

// Priority orders the waiters for a slot.
type Priority int

const (
	// Speculative rollouts measure what no decision waits for yet.
	Speculative Priority = iota
	// Normal is a worker's rollouts, and anything not marked.
	Normal
	// Critical rollouts are ones a decision is waiting for.
	Critical
	priorities
)

type priorityKey struct{}

// WithPriority marks ctx's rollouts with p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is ctx's priority: Normal unless marked.
func PriorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok && p >= 0 && p < priorities {
		return p
	}
	return Normal
}

// Claim is the priority of a slot several callers wait for together (one
// rollout shared by whoever asks for it, say): it starts at its first
// caller's and is raised to that of any caller who joins, also while its
// Acquire is waiting. One Acquire at a time waits under a Claim (a
// rollout's attempts take turns). The lock order is a Claim's, then a
// Limiter's.
type Claim struct {
	mu    sync.Mutex
	p     Priority
	raise func(Priority) // while an Acquire under the claim waits
}

type claimKey struct{}

// WithClaim returns ctx with a new Claim at ctx's priority, which the
// Acquire of a Limiter under the returned context waits with.
func WithClaim(ctx context.Context) (context.Context, *Claim) {
	c := &Claim{p: PriorityOf(ctx)}
	return context.WithValue(ctx, claimKey{}, c), c
}

// ClaimOf is ctx's Claim, or nil.
func ClaimOf(ctx context.Context) *Claim {
	c, _ := ctx.Value(claimKey{}).(*Claim)
	return c
}

// Raise lifts c to priority p when p is higher, moving a waiting Acquire
// up with it.
func (c *Claim) Raise(p Priority) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p <= c.p {
		return
	}
	c.p = p
	if c.raise != nil {
		c.raise(p)
	}
}

// waiter is an Acquire waiting for a slot; granted is closed when it has
// one.
type waiter struct {
	p       Priority
	granted chan struct{}
}

// NewLimiter allows n concurrent holders (at least 1).
func NewLimiter(n int) *Limiter {
	return &Limiter{n: max(n, 1)}
}

// Acquire waits for a slot or for ctx to end, behind the waiters of ctx's
// priority and above (PriorityOf, or ctx's Claim's, which may be raised
// while it waits).
func (l *Limiter) Acquire(ctx context.Context) error {
	c := ClaimOf(ctx)
	if c == nil {
		c = &Claim{p: PriorityOf(ctx)}
	}
	c.mu.Lock()
	l.mu.Lock()
	if l.used < l.n {
		l.used++
		l.mu.Unlock()
		c.mu.Unlock()
		return nil
	}
	w := &waiter{p: c.p, granted: make(chan struct{})}
	l.waiting[w.p] = append(l.waiting[w.p], w)
	l.mu.Unlock()
	c.raise = func(p Priority) { l.raise(w, p) }
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.raise = nil
		c.mu.Unlock()
	}()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-w.granted:
		// Granted as it was cancelled: the slot is passed on.
		l.release()
	default:
		l.unqueue(w)
	}
	return ctx.Err()
}

// raise moves w, still waiting, up to priority p.
func (l *Limiter) raise(w *waiter, p Priority) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p <= w.p || !l.unqueue(w) {
		return
	}
	w.p = p
	l.waiting[p] = append(l.waiting[p], w)
}

// unqueue removes w from its queue; false when it is in none (granted).
// l.mu is held.
func (l *Limiter) unqueue(w *waiter) bool {
	q := l.waiting[w.p]
	for i, x := range q {
		if x == w {
			l.waiting[w.p] = append(q[:i:i], q[i+1:]...)
			return true
		}
	}
	return false
}

// TryAcquire takes a slot if one is free now, without waiting.
func (l *Limiter) TryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used < l.n {
		l.used++
		return true
	}
	return false
}

// Release gives back a slot taken by Acquire or TryAcquire.
func (l *Limiter) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release()
}

// release hands the slot to the first waiter of the highest priority, or
// frees it. l.mu is held.
func (l *Limiter) release() {
	for p := priorities - 1; p >= 0; p-- {
		if q := l.waiting[p]; len(q) > 0 {
			l.waiting[p] = q[1:]
			close(q[0].granted)
			return
		}
	}
	l.used--
}

// Cap is the number of slots.
func (l *Limiter) Cap() int { return l.n }

// Waiting is how many Acquires are waiting for a slot.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, q := range l.waiting {
		n += len(q)
	}
	return n
}
