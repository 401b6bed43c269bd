package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// RemoteComparison is the remote bench's two runs of one domain: workers
// in git-descent's process (evolve), and as many `git descent work`
// processes, each in its own clone of a shared bare repository, with an
// aggregator (git descent aggregate --watch) deciding what they push.
type RemoteComparison struct {
	InProcess Result `json:"in_process"`
	Processes Result `json:"processes"`
	Pushed    int    `json:"pushed"`  // proposals the work processes pushed
	Decided   int    `json:"decided"` // of them, decided by the end
	Queued    int    `json:"queued"`  // left queued (pushed after the target was reached)
}

// Remote runs the routing domain to its target twice with o.Workers[0]
// workers (8 by default) and simulated agents (o.Latency, fixed 50 ms by
// default): in process, and as work processes pushing to a bare
// repository on this machine. exe is the git-descent executable the
// processes run.
func Remote(ctx context.Context, o Options, exe string) (*RemoteComparison, error) {
	o = withDefaults(o)
	workers := 8
	if len(o.Workers) > 0 && o.Workers[0] > 0 {
		workers = o.Workers[0]
	}
	latency := o.Latency
	if latency == "" {
		latency = "fixed:50ms"
	}
	lat, err := ParseLatency(latency)
	if err != nil {
		return nil, err
	}
	d := Domains["routing"]
	out := &RemoteComparison{}
	c := config{gate: library.GateCalibrated, runtime: RuntimeSync, workers: workers, latency: &lat}
	if out.InProcess, err = runOnce(ctx, o, d, c, 1); err != nil {
		return nil, fmt.Errorf("bench remote, in process: %w", err)
	}
	fmt.Fprintf(o.Out, "%-8s %-26s: %s\n", d.Name(), fmt.Sprintf("in process, %d workers", workers), out.InProcess.line(d))
	if err := remoteOnce(ctx, o, d, lat, latency, workers, exe, out); err != nil {
		return nil, fmt.Errorf("bench remote, processes: %w", err)
	}
	fmt.Fprintf(o.Out, "%-8s %-26s: %s; %d pushed, %d decided, %d still queued at the end\n", d.Name(), fmt.Sprintf("%d work processes", workers), out.Processes.line(d), out.Pushed, out.Decided, out.Queued)
	fmt.Fprintf(o.Out, "time to target: %s in process, %s with work processes (%s)\n",
		reachedAt(out.InProcess), reachedAt(out.Processes), times(ratio(out.InProcess.ToTarget, out.Processes.ToTarget)))
	return out, nil
}

func reachedAt(r Result) string {
	if !r.Reached {
		return "not reached"
	}
	return fmt.Sprintf("%.1fs", r.ToTarget)
}

// remoteOnce is the run with work processes.
func remoteOnce(ctx context.Context, o Options, d Domain, lat Latency, latency string, workers int, exe string, out *RemoteComparison) error {
	dir, err := os.MkdirTemp(o.Dir, "descent-bench-remote-")
	if err != nil {
		return err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	if _, _, err := setupRepo(ctx, filepath.Join(dir, "src"), d, library.GateCalibrated, 1, 0); err != nil {
		return err
	}
	origin := filepath.Join(dir, "origin.git")
	if _, err := git.Clone(ctx, filepath.Join(dir, "src"), origin, true, nil); err != nil {
		return err
	}
	agg, err := git.Clone(ctx, origin, filepath.Join(dir, "aggregator"), false, nil)
	if err != nil {
		return err
	}
	lib, err := library.Find(ctx, agg, d.Name())
	if err != nil {
		return err
	}
	var clones []string
	for i := 1; i <= workers; i++ {
		p := filepath.Join(dir, fmt.Sprintf("w%d", i))
		if _, err := git.Clone(ctx, origin, p, false, nil); err != nil {
			return err
		}
		clones = append(clones, p)
	}
	maxTime := o.MaxTime
	start := time.Now()
	sim := NewSim(d, lat, o.AgentError, 1)
	wctx, stop := context.WithCancel(ctx)
	var procs []*exec.Cmd
	var stderrs []*strings.Builder
	// The processes are interrupted (they push what they made) and waited
	// for whatever happens.
	defer func() {
		stop()
		for _, x := range procs {
			_ = x.Wait()
		}
	}()
	for i, p := range clones {
		x := exec.CommandContext(wctx, exe, "work", d.Name(), "--worker", fmt.Sprint(i+1), "--remote", "origin", "--jobs", "2", "--interval", "2s",
			"--max-time", maxTime.String(), "--bench-domain", d.Name(), "--bench-latency", latency, "--bench-seed", "1")
		x.Dir = p
		x.Cancel = func() error { return x.Process.Signal(syscall.SIGINT) } // they push what they made
		x.WaitDelay = 30 * time.Second
		stderr := &strings.Builder{}
		x.Stdout, x.Stderr = nil, stderr
		if err := x.Start(); err != nil {
			return err
		}
		procs, stderrs = append(procs, x), append(stderrs, stderr)
	}
	sum, err := evolve.Aggregate(ctx, agg, lib, evolve.AggregateOptions{
		RemoteOptions: evolve.RemoteOptions{Remote: "origin", MaxTime: maxTime, Jobs: 2 * workers, Runner: sim, Proposer: sim, AgentName: sim.Name(), Out: nil, Log: o.Log},
		Watch:         true, Interval: 100 * time.Millisecond, Gates: workers, Batch: workers, Target: d.Target(),
	})
	aggregated := time.Since(start)
	stop()
	var failed error
	for i, x := range procs {
		// Interrupted at the end: exit status 130; anything else failed.
		werr := x.Wait()
		if code := x.ProcessState.ExitCode(); werr != nil && code != 130 && failed == nil {
			failed = fmt.Errorf("work process %d: %v: %s", i+1, werr, strings.TrimSpace(stderrs[i].String()))
		}
	}
	procs = nil // waited for
	if failed != nil {
		return failed
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) || sum == nil {
		return err
	}
	r := Result{Domain: d.Name(), Gate: library.GateCalibrated, Runtime: "work processes", Workers: workers, Latency: lat.String(), Run: 1}
	r.Final, r.Seconds, r.Commits = sum.Final, aggregated.Seconds(), sum.Merges
	offset := aggregated.Seconds() - sum.Seconds // the aggregator's clock started after setup
	for _, p := range sum.History {
		if p.Score >= d.Target()-1e-9 {
			r.Reached, r.ToTarget = true, p.Seconds+offset
			break
		}
	}
	if h := sum.History; len(h) > 1 {
		r.Evolving = h[len(h)-1].Seconds - h[0].Seconds
	}
	r.Proposals, r.Committed = sum.Decided, sum.Outcomes[ledger.Committed]
	bare, err := git.Open(ctx, origin, nil)
	if err != nil {
		return err
	}
	head, err := bare.Head(ctx)
	if err != nil {
		return err
	}
	if err := countTruth(ctx, bare, lib, d, &evolve.Summary{Dev: sum.Dev, Start: head}, &r); err != nil {
		return err
	}
	known, err := ledger.OpenJournal(bare, lib.Name).Known(ctx)
	if err != nil {
		return err
	}
	queued, err := bare.ListRefs(ctx, ledger.Refs{Library: lib.Name}.QueuePrefix())
	if err != nil {
		return err
	}
	out.Decided, out.Queued, out.Pushed = len(known), len(queued), len(known)+len(queued)
	out.Processes = r
	return nil
}
