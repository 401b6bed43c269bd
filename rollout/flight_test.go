package rollout

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// result is what one Do call returned.
type result struct {
	rec Record
	hit bool
	err error
}

// watchedCache returns a cache whose waiters announce themselves on the
// returned channel as they start waiting for another caller's flight.
func watchedCache(dir string) (*Cache, <-chan struct{}) {
	c := OpenCache(dir)
	waiting := make(chan struct{}, 16)
	c.testHookWait = func() { waiting <- struct{}{} }
	return c, waiting
}

// goDo runs c.Do in a goroutine and delivers its result.
func goDo(ctx context.Context, c *Cache, key Key, f func() (Record, error)) <-chan result {
	out := make(chan result, 1)
	go func() {
		rec, hit, err := c.Do(ctx, key, f)
		out <- result{rec, hit, err}
	}()
	return out
}

// blockUntilDone is a rollout that starts (closing started) and runs until
// its caller's ctx ends.
func blockUntilDone(ctx context.Context, started chan<- struct{}) func() (Record, error) {
	return func() (Record, error) {
		close(started)
		<-ctx.Done()
		return Record{}, ctx.Err()
	}
}

// Waiters whose context is alive are not handed the first caller's
// cancellation: one of them runs the rollout afresh, once, and both get
// its record.
func TestCacheWaitersOutliveCancelledLeader(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		c, waiting := watchedCache(dir)
		key := Key{Tree: "t", Task: "x", Config: "c"}
		lctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		leader := goDo(lctx, c, key, blockUntilDone(lctx, started))
		<-started
		var runs atomic.Int32
		again := func() (Record, error) {
			runs.Add(1)
			return Record{Task: "x", Reward: 0.5}, nil
		}
		w1 := goDo(context.Background(), c, key, again)
		w2 := goDo(context.Background(), c, key, again)
		<-waiting
		<-waiting
		cancel()
		if r := <-leader; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("dir %q: leader = %+v hit=%v err=%v, want its cancellation", dir, r.rec, r.hit, r.err)
		}
		for i, w := range []<-chan result{w1, w2} {
			if r := <-w; r.err != nil || r.rec.Reward != 0.5 {
				t.Errorf("dir %q: waiter %d = %+v hit=%v err=%v, want the fresh record", dir, i+1, r.rec, r.hit, r.err)
			}
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("dir %q: the waiters ran the rollout %d times, want 1", dir, n)
		}
	}
}

// A waiter whose own context ends stops waiting with its own error while
// the flight it joined goes on, and the flight's result is still kept.
func TestCacheWaiterStopsWithItsOwnContext(t *testing.T) {
	c, waiting := watchedCache("")
	key := Key{Tree: "t", Task: "x", Config: "c"}
	started, release := make(chan struct{}), make(chan struct{})
	leader := goDo(context.Background(), c, key, func() (Record, error) {
		close(started)
		<-release
		return Record{Task: "x", Reward: 1}, nil
	})
	<-started
	wctx, cancelW := context.WithCancel(context.Background())
	waiter := goDo(wctx, c, key, func() (Record, error) {
		t.Error("the waiter ran the rollout")
		return Record{}, nil
	})
	<-waiting
	cancelW()
	if r := <-waiter; !errors.Is(r.err, context.Canceled) || r.hit {
		t.Fatalf("waiter = %+v hit=%v err=%v, want its own cancellation", r.rec, r.hit, r.err)
	}
	close(release)
	if r := <-leader; r.err != nil || r.hit || r.rec.Reward != 1 {
		t.Fatalf("leader = %+v hit=%v err=%v", r.rec, r.hit, r.err)
	}
	rec, hit, err := c.Do(context.Background(), key, func() (Record, error) {
		t.Error("ran again after the flight finished")
		return Record{}, nil
	})
	if err != nil || !hit || rec.Reward != 1 {
		t.Fatalf("after the flight: %+v hit=%v err=%v", rec, hit, err)
	}
}

// Every flight leaves the in-flight map when it finishes, whatever its
// outcome; a record and an errored rollout are still served from the
// cache, an ordinary error and a cancellation are not.
func TestCacheForgetsFinishedFlights(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		f    func() (Record, error)
		kept bool
	}{
		{"record", context.Background(), func() (Record, error) { return Record{Reward: 1}, nil }, true},
		{"errored", context.Background(), func() (Record, error) { return Record{}, &erroredError{boom} }, true},
		{"error", context.Background(), func() (Record, error) { return Record{}, boom }, false},
		{"cancelled", cancelled, func() (Record, error) { return Record{}, cancelled.Err() }, false},
	} {
		for _, dir := range []string{"", t.TempDir()} {
			cache := OpenCache(dir)
			key := Key{Tree: "t", Task: c.name, Config: "c"}
			want, _, wantErr := cache.Do(c.ctx, key, c.f)
			if n := cache.inflightLen(); n != 0 {
				t.Errorf("%s, dir %q: %d flights left in the map, want 0", c.name, dir, n)
			}
			ran := false
			rec, hit, err := cache.Do(context.Background(), key, func() (Record, error) {
				ran = true
				return Record{Reward: 0.25}, nil
			})
			if c.kept && (ran || !hit || rec.Reward != want.Reward || !errors.Is(err, wantErr)) {
				t.Errorf("%s, dir %q: later call = %+v hit=%v err=%v ran=%v, want the kept outcome", c.name, dir, rec, hit, err, ran)
			}
			if !c.kept && (!ran || hit || err != nil || rec.Reward != 0.25) {
				t.Errorf("%s, dir %q: later call = %+v hit=%v err=%v ran=%v, want a fresh run", c.name, dir, rec, hit, err, ran)
			}
		}
	}
}

// inflightLen is how many flights are in the map now.
func (c *Cache) inflightLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}

// A caller that joins a rollout still waiting for a slot raises the
// priority it waits with to its own: a gate that needs what a speculation
// started is not left behind the workers' rollouts.
func TestCacheJoinerRaisesTheLeadersClaim(t *testing.T) {
	c, waiting := watchedCache("")
	l := sandbox.NewLimiter(1)
	bg := context.Background()
	if err := l.Acquire(bg); err != nil {
		t.Fatal(err)
	}
	granted := make(chan string, 2)
	key := Key{Tree: "t", Task: "x", Config: "c"}
	lctx, _ := sandbox.WithClaim(sandbox.WithPriority(bg, sandbox.Speculative))
	leader := goDo(lctx, c, key, func() (Record, error) {
		if err := l.Acquire(lctx); err != nil {
			return Record{}, err
		}
		granted <- "speculation"
		return Record{Task: "x", Reward: 1}, nil
	})
	waitUntil(t, "the speculation to wait for a slot", func() bool { return l.Waiting() == 1 })
	worker := make(chan error, 1)
	go func() {
		err := l.Acquire(bg)
		granted <- "worker"
		worker <- err
	}()
	waitUntil(t, "the worker to wait for a slot", func() bool { return l.Waiting() == 2 })
	gate := goDo(sandbox.WithPriority(bg, sandbox.Critical), c, key, func() (Record, error) {
		t.Error("the gate ran the rollout itself instead of joining it")
		return Record{}, nil
	})
	<-waiting
	l.Release()
	if first := <-granted; first != "speculation" {
		t.Errorf("the freed slot went to the %s, want the speculation the gate joined", first)
	}
	l.Release()
	<-granted
	if err := <-worker; err != nil {
		t.Fatal(err)
	}
	for _, r := range []result{<-leader, <-gate} {
		if r.err != nil || r.rec.Reward != 1 {
			t.Errorf("Do = %+v, want the speculation's record", r)
		}
	}
}

// waitUntil yields until cond holds, failing the test after a while.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
