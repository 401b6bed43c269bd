package accept

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// sleepy is a Source whose candidate rollouts of task i take dur[i] and
// fail, with dev known to fail every task: a gate that must visit them all.
type sleepy struct{ dur []time.Duration }

func (s sleepy) Known(cand bool, i int) []float64 {
	if cand {
		return nil
	}
	return []float64{0}
}

func (s sleepy) Roll(ctx context.Context, cand bool, i int) (float64, bool, Spent, error) {
	t := time.NewTimer(s.dur[i])
	defer t.Stop()
	select {
	case <-t.C:
		return 0, true, Spent{}, nil
	case <-ctx.Done():
		return 0, false, Spent{}, ctx.Err()
	}
}

// BenchmarkGateDispatch measures what starting the longest rollouts first
// saves a gate whose tasks take unequal times: 24 tasks, one in six taking
// 60 ms and the rest 10 ms, 4 rollouts in flight. It reports the wall time
// of a gate dispatched in Order's order without estimates and with them,
// and their ratio (run with -benchtime 5x).
func BenchmarkGateDispatch(b *testing.B) {
	const n = 24
	dur := make([]time.Duration, n)
	for i := range dur {
		dur[i] = 10 * time.Millisecond
		if i%6 == 5 {
			dur[i] = 60 * time.Millisecond
		}
	}
	src := sleepy{dur}
	runs := make([][]float64, n)
	for i := range runs {
		runs[i] = []float64{0}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = string(rune('a' + i))
	}
	gate := func(est []time.Duration) time.Duration {
		spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 1, Window: 4, Estimates: est}
		start := time.Now()
		if _, err := Run(context.Background(), spec, ids, Order(runs, runs, est), src); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var blind, informed time.Duration
	for range b.N {
		blind += gate(nil)
		informed += gate(dur)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(blind), "ms/gate-in-order")
	b.ReportMetric(ms(informed), "ms/gate-longest-first")
	b.ReportMetric(float64(blind)/float64(informed), "speedup")
}

// recorder is a Source that records the order rollouts start in: dev
// fails every task, the candidate passes those in wins.
type recorder struct {
	mu      sync.Mutex
	wins    map[int]bool
	started []int
}

func (r *recorder) Known(cand bool, i int) []float64 {
	if cand {
		return nil
	}
	return []float64{0}
}

func (r *recorder) Roll(ctx context.Context, cand bool, i int) (float64, bool, Spent, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, i)
	if cand && r.wins[i] {
		return 1, true, Spent{}, nil
	}
	return 0, true, Spent{}, nil
}

// Re-rolls start longest first too.
func TestGateRerollsLongestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	src := &recorder{wins: map[int]bool{0: true, 2: true}}
	est := []time.Duration{time.Second, 0, 9 * time.Second, 0}
	spec := Spec{Delta: 0.2, MinRepeats: 1, MaxRepeats: 4, Pool: pool(rng, 20, 0.2), Window: 1, Estimates: est}
	order := []int{0, 1, 2, 3} // the first pass as given
	g, err := Run(context.Background(), spec, ids(4), order, src)
	if err != nil {
		t.Fatal(err)
	}
	if g.Rerolls == 0 || len(src.started) < 6 {
		t.Fatalf("no re-rolls (%+v, started %v)", g, src.started)
	}
	if got := src.started[4:6]; got[0] != 2 || got[1] != 2 {
		t.Fatalf("rollouts started %v: the first re-rolls are not of the longest task (2)", src.started)
	}
}
