package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/git-descent/git-descent/library"
)

// Suite is the runtime bench's results: every run of its three parts and
// the ratios they give.
type Suite struct {
	Scaling  []Result `json:"scaling"`  // routing, fixed 50 ms, by runtime and workers
	Tails    []Result `json:"tails"`    // routing, 8 workers, lognormal σ 1, sync and async
	Overhead []Result `json:"overhead"` // routing, zero latency, 10,000 files beside it, sync and async
	// Speedup2to8 is the time to target with 2 workers over that with 8
	// (ideal 4), by runtime; 0 when either did not reach it.
	Speedup2to8 map[string]float64 `json:"speedup_2_to_8"`
	// AsyncToTarget is sync's time to target over async's under lognormal
	// latency; AsyncThroughput async's proposals per second over sync's.
	AsyncToTarget   float64 `json:"async_to_target"`
	AsyncThroughput float64 `json:"async_throughput"`
	// MsPerProposal is the wall time per decided proposal with a
	// zero-latency agent, by runtime.
	MsPerProposal map[string]float64 `json:"ms_per_proposal"`
	// GateTasks and GateCompared add up every gate of the suite: the tasks
	// the gates were over and those they compared before deciding.
	GateTasks    int `json:"gate_tasks"`
	GateCompared int `json:"gate_compared"`
}

// RuntimeSuite measures the runtime on the routing domain with simulated
// agents, o.Runs times each: time to target and throughput for 1 to 16
// workers with 50 ms calls, in rounds and in the pipeline; sync against
// async with lognormal latency (σ 1) at 8 workers, at least tailRuns
// times; the wall time per decided proposal with a zero-latency agent in a
// repository of 10,000 other files. It prints each part's table, then the
// ratios (of mean times).
func RuntimeSuite(ctx context.Context, o Options) (*Suite, error) {
	base := o
	base.Domains, base.Gates, base.Latency, base.Filler, base.NoTarget = []string{"routing"}, []string{library.GateCalibrated}, "", 0, false
	if base.MaxTime <= 0 {
		base.MaxTime = 120 * time.Second
	}
	s := &Suite{MsPerProposal: map[string]float64{}, Speedup2to8: map[string]float64{}}
	var err error

	scaling := base
	scaling.Runtimes, scaling.Workers, scaling.Latency = []string{RuntimeSync, RuntimeAsync}, []int{1, 2, 4, 8, 16}, "fixed:50ms"
	if s.Scaling, err = Run(ctx, scaling); err != nil {
		return s, err
	}
	tails := base
	tails.Runtimes, tails.Workers, tails.Latency = []string{RuntimeSync, RuntimeAsync}, []int{8}, "lognormal:50ms,1"
	tails.Runs = max(withDefaults(o).Runs, tailRuns)
	if tails.Hedge == 0 {
		tails.Hedge = 4
	}
	if s.Tails, err = Run(ctx, tails); err != nil {
		return s, err
	}
	over := base
	over.Runtimes, over.Workers, over.Latency, over.Filler, over.NoTarget = []string{RuntimeSync, RuntimeAsync}, []int{4}, "0", 10000, true
	if over.Rounds <= 0 {
		over.Rounds = 10
	}
	if s.Overhead, err = Run(ctx, over); err != nil {
		return s, err
	}

	for _, rt := range []string{RuntimeSync, RuntimeAsync} {
		s.Speedup2to8[rt] = ratio(toTarget(s.Scaling, rt, 2), toTarget(s.Scaling, rt, 8))
	}
	s.AsyncToTarget = ratio(toTarget(s.Tails, RuntimeSync, 8), toTarget(s.Tails, RuntimeAsync, 8))
	s.AsyncThroughput = ratio(throughput(s.Tails, RuntimeAsync), throughput(s.Tails, RuntimeSync))
	for _, rt := range []string{RuntimeSync, RuntimeAsync} {
		if t := throughput(s.Overhead, rt); t > 0 {
			s.MsPerProposal[rt] = 1000 / t
		}
	}
	for _, part := range [][]Result{s.Scaling, s.Tails, s.Overhead} {
		for _, r := range part {
			s.GateTasks += r.GateTasks
			s.GateCompared += r.GateCompared
		}
	}
	w := withDefaults(o).Out
	fmt.Fprintf(w, "runtime suite, %d runs each (the lognormal part %d):\n", withDefaults(o).Runs, tails.Runs)
	fmt.Fprintf(w, "  time to target, 2 → 8 workers (50 ms calls): sync %s faster, async %s (ideal 4×)\n", times(s.Speedup2to8[RuntimeSync]), times(s.Speedup2to8[RuntimeAsync]))
	fmt.Fprintf(w, "  async against sync, 8 workers, lognormal σ 1: %s faster to target, %s the proposals per second\n", times(s.AsyncToTarget), times(s.AsyncThroughput))
	hedges := int64(0)
	for _, r := range s.Tails {
		hedges += r.Hedges
	}
	fmt.Fprintf(w, "  hedges fired (lognormal part, --hedge %g): %d\n", tails.Hedge, hedges)
	fmt.Fprintf(w, "  wall per decided proposal, zero-latency agent, 10,000 files beside the library: sync %.1f ms, async %.1f ms\n", s.MsPerProposal[RuntimeSync], s.MsPerProposal[RuntimeAsync])
	if s.GateTasks > 0 {
		fmt.Fprintf(w, "  gates decided early: compared %d of the %d tasks they were over (%.0f%% saved)\n", s.GateCompared, s.GateTasks, 100*(1-float64(s.GateCompared)/float64(s.GateTasks)))
	}
	return s, nil
}

// tailRuns is the fewest runs of the lognormal part: one run's time to
// target varies by a third either way, as much as the runtimes differ.
const tailRuns = 5

// toTarget is the mean time to target of the runs of a runtime and worker
// count, or 0 when any did not reach it.
func toTarget(rs []Result, runtime string, workers int) float64 {
	sum, n := 0.0, 0
	for _, r := range rs {
		if r.Runtime != runtime || r.Workers != workers {
			continue
		}
		if !r.Reached {
			return 0
		}
		sum += r.ToTarget
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// throughput is the proposals per second of evolution of a runtime's runs
// together.
func throughput(rs []Result, runtime string) float64 {
	props, secs := 0, 0.0
	for _, r := range rs {
		if r.Runtime == runtime {
			props += r.Proposals
			secs += r.Evolving
		}
	}
	if secs <= 0 {
		return 0
	}
	return float64(props) / secs
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

func times(x float64) string {
	if x == 0 {
		return "— (a run did not reach the target)"
	}
	return fmt.Sprintf("%.2f×", x)
}
