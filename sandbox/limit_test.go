package sandbox

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitFor yields until cond holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// queue starts an Acquire on l under ctx that reports name on got once it
// has a slot, and returns when it is waiting.
func queue(t *testing.T, l *Limiter, ctx context.Context, name string, got chan<- string) {
	t.Helper()
	before := l.Waiting()
	go func() {
		if err := l.Acquire(ctx); err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- name
	}()
	waitFor(t, name+" to wait", func() bool { return l.Waiting() == before+1 })
}

// grants releases the slot held and collects who got it next, n times.
func grants(l *Limiter, got <-chan string, n int) []string {
	var order []string
	for range n {
		l.Release()
		order = append(order, <-got)
	}
	return order
}

// A freed slot goes to the most urgent waiter, the oldest of them first.
func TestLimiterGrantsByPriority(t *testing.T) {
	l := NewLimiter(1)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	bg := context.Background()
	queue(t, l, WithPriority(bg, Speculative), "speculative", got)
	queue(t, l, bg, "normal 1", got)
	queue(t, l, WithPriority(bg, Critical), "critical", got)
	queue(t, l, WithPriority(bg, Normal), "normal 2", got)
	order := grants(l, got, 4)
	want := []string{"critical", "normal 1", "normal 2", "speculative"}
	if len(order) != len(want) {
		t.Fatalf("granted %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("granted %v, want %v", order, want)
		}
	}
}

// Raising a waiting Acquire's claim moves it ahead of the waiters below
// its new priority.
func TestLimiterClaimRaisedWhileWaiting(t *testing.T) {
	l := NewLimiter(1)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	bg := context.Background()
	ctx, claim := WithClaim(WithPriority(bg, Speculative))
	queue(t, l, ctx, "claimed", got)
	queue(t, l, bg, "normal", got)
	claim.Raise(Critical)
	claim.Raise(Speculative) // never lowered
	if order := grants(l, got, 2); order[0] != "claimed" {
		t.Fatalf("granted %v, want the raised claim first", order)
	}
}

// A waiter whose context ends leaves the queue and takes no slot with it.
func TestLimiterCancelledWaiter(t *testing.T) {
	l := NewLimiter(1)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	ctx, cancel := context.WithCancel(WithPriority(context.Background(), Critical))
	queue(t, l, ctx, "cancelled", got)
	cancel()
	if g := <-got; g != "error: context canceled" {
		t.Fatalf("cancelled waiter got %q", g)
	}
	if n := l.Waiting(); n != 0 {
		t.Fatalf("%d waiting after the cancel, want 0", n)
	}
	l.Release()
	if !l.TryAcquire() {
		t.Fatal("the slot was not free after the release")
	}
}

// Waiters cancelled at any moment, some as a slot is handed to them, leave
// no slot taken and no waiter queued.
func TestLimiterCancelsUnderLoad(t *testing.T) {
	l := NewLimiter(3)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(WithPriority(context.Background(), Priority(i%3)), time.Duration(i%7)*100*time.Microsecond)
			defer cancel()
			if l.Acquire(ctx) == nil {
				time.Sleep(50 * time.Microsecond)
				l.Release()
			}
		}()
	}
	wg.Wait()
	if n := l.Waiting(); n != 0 {
		t.Fatalf("%d still waiting", n)
	}
	for i := range 3 {
		if !l.TryAcquire() {
			t.Fatalf("slot %d of 3 is taken with no holder", i+1)
		}
	}
	if l.TryAcquire() {
		t.Fatal("a fourth slot was granted")
	}
}
