package evolve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/library"
)

// Together, the steps' minibatches cover the train split before any task
// repeats, and each worker's window moves every round.
func TestMinibatchesCoverTrainSplit(t *testing.T) {
	var train []eval.Task
	for i := 0; i < 10; i++ {
		train = append(train, eval.Task{ID: fmt.Sprint(i)})
	}
	lib := library.New("skills/s")
	lib.Minibatch = 2
	lib.Validation = library.ValidationSplit
	r := &runner{lib: lib}
	for i := 0; i < 3; i++ {
		r.workers = append(r.workers, &worker{index: i, r: r, train: train})
	}
	seen := map[string]int{}
	for seq := 0; seq < 6; seq++ {
		for _, task := range r.workers[seq%3].minibatch(seq) {
			seen[task.ID]++
		}
	}
	// 12 picks over 10 tasks: every task at least once, none three times.
	if len(seen) != 10 {
		t.Fatalf("covered %d of 10 tasks: %v", len(seen), seen)
	}
	for id, n := range seen {
		if n > 2 {
			t.Errorf("task %s picked %d times", id, n)
		}
	}
	if a, b := r.workers[0].minibatch(0), r.workers[0].minibatch(3); a[0].ID == b[0].ID {
		t.Errorf("worker 1's window did not move: %v then %v", a, b)
	}
	lib.Minibatch = 50
	if got := r.workers[0].minibatch(0); len(got) != 10 {
		t.Errorf("minibatch larger than the split gave %d tasks", len(got))
	}
}

func TestShuffledIsStableAndSeeded(t *testing.T) {
	var tasks []eval.Task
	for i := 0; i < 20; i++ {
		tasks = append(tasks, eval.Task{ID: fmt.Sprint(i)})
	}
	a, b, c := shuffled(tasks, "x"), shuffled(tasks, "x"), shuffled(tasks, "y")
	same, differs := true, false
	for i := range a {
		same = same && a[i].ID == b[i].ID
		differs = differs || a[i].ID != c[i].ID
	}
	if !same || !differs {
		t.Fatalf("same seed same order: %v; other seed other order: %v", same, differs)
	}
}

func TestFirstErrorPrefersTheCause(t *testing.T) {
	boom := errors.New("boom")
	errs := []error{context.Canceled, boom, nil}
	if got := firstError(context.Background(), errs, func(e error) error { return e }); got != boom {
		t.Fatalf("firstError = %v, want the worker's own error", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := firstError(ctx, errs, func(e error) error { return e }); !errors.Is(got, context.Canceled) {
		t.Fatalf("firstError after the run's cancel = %v", got)
	}
}

func TestLockLibraryIsExclusive(t *testing.T) {
	dir := t.TempDir()
	l, err := lockLibrary(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockLibrary(dir, "s"); !errors.Is(err, errLocked) {
		t.Fatalf("second lock: %v", err)
	}
	other, err := lockLibrary(dir, "t")
	if err != nil {
		t.Fatalf("another library: %v", err)
	}
	other.release()
	l.release()
	l2, err := lockLibrary(dir, "s")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.release()
}

// The pipeline parks a worker when a batch filled the queue while the
// aggregator was busy and the rollout slots were saturated, never below
// half of them, and wakes one when the aggregator had to wait or slots
// stood idle; a full queue with slots to spare parks nobody (a round
// decides all it holds in about the same time). A parked worker takes no
// step until woken, and none once the last is taken or the workers are
// stopped.
func TestPipelineAdaptsWorkersToTheAggregator(t *testing.T) {
	r := &runner{}
	for i := 0; i < 4; i++ {
		r.workers = append(r.workers, &worker{index: i, r: r})
	}
	p := &pipeline{r: r, steps: 100, active: 4, fewest: 4, most: 4}
	p.wake = sync.NewCond(&p.mu)
	for i := 0; i < 5; i++ {
		p.adapt(4, false, 0.6)
	}
	if p.active != 4 || p.moves != 0 {
		t.Fatalf("full batches with 60%% of the slots busy: %d workers active, %d moves; want 4, 0", p.active, p.moves)
	}
	for i := 0; i < 5; i++ {
		p.adapt(4, false, 0.95)
	}
	if p.active != 2 {
		t.Fatalf("after five full batches %d workers active, want 2 (half)", p.active)
	}
	took := make(chan bool)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		_, _, ok := p.take(ctx, r.workers[3])
		took <- ok
	}()
	select {
	case <-took:
		t.Fatal("a parked worker took a step")
	case <-time.After(50 * time.Millisecond):
	}
	p.adapt(1, true, 0.95)
	p.adapt(3, false, 0.5)
	if ok := <-took; !ok || p.active != 4 || p.moves != 4 {
		t.Fatalf("woken: took %v, %d active, %d moves", ok, p.active, p.moves)
	}
	p.adapt(4, false, 1)
	p.adapt(4, false, 1)
	go func() {
		_, _, ok := p.take(ctx, r.workers[3])
		took <- ok
	}()
	stop()
	p.mu.Lock()
	p.wake.Broadcast() // as the stop's AfterFunc does
	p.mu.Unlock()
	if ok := <-took; ok {
		t.Fatal("a parked worker took a step after the workers were stopped")
	}
}
