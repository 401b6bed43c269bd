package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/git-descent/git-descent/bench"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

type workOptions struct {
	library string
	evolve.WorkOptions
	json bool
	sim  simOptions
}

// simOptions put the bench's simulated agent and proposer in place of the
// library's commands (hidden flags, for git descent bench's remote part).
type simOptions struct {
	domain, latency string
	seed            int
}

func (s *simOptions) flags(f *pflag.FlagSet) {
	f.StringVar(&s.domain, "bench-domain", "", "use the bench domain's simulated agent and proposer")
	f.StringVar(&s.latency, "bench-latency", "fixed:50ms", "the simulated calls' latency")
	f.IntVar(&s.seed, "bench-seed", 1, "the simulated proposer's seed")
	for _, n := range []string{"bench-domain", "bench-latency", "bench-seed"} {
		_ = f.MarkHidden(n)
	}
}

// apply sets the simulated agents in o when a bench domain is given.
func (s *simOptions) apply(o *evolve.RemoteOptions) error {
	if s.domain == "" {
		return nil
	}
	d, ok := bench.Domains[s.domain]
	if !ok {
		return &UsageError{fmt.Errorf("--bench-domain %q: no such domain", s.domain)}
	}
	lat, err := bench.ParseLatency(s.latency)
	if err != nil {
		return &UsageError{err}
	}
	sim := bench.NewSim(d, lat, 0, s.seed)
	o.Runner, o.Proposer, o.AgentName = sim, sim, sim.Name()
	return nil
}

func newWorkCmd(e *env) *cobra.Command {
	var o workOptions
	c := &cobra.Command{
		Use:               "work <library> --worker <id> --remote <name>",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Be one worker on another machine: propose edits and push them to a shared repository",
		Long: `work is one worker of many, each on its own machine (a CI job), against a shared
repository: the cluster is the CI system, git the transport. Each step fetches the
remote's descent/<lib>/dev, rolls out a minibatch of train tasks, asks the proposer
to fix the failures, and pushes the proposal with its evidence to the remote at once:
to descent/<lib>/w/<id>, for review, and to refs/descent/<lib>/queue/<commit>, where
it waits for git descent aggregate. Every push is atomic and leased against what
was fetched: workers never overwrite each other's proposals, a worker whose push
races another process of the same id fetches and tries again, and a worker killed at
any instant loses at most the proposal it was making.

The worker's rollouts travel too, in refs/descent/<lib>/cache/w<id>, and it takes
other machines' from theirs, so no machine repeats a rollout another already did
(the aggregator trusts only aggregators' records for its gates).

When the remote has no dev yet, the first worker (or aggregator) to get there creates
it from HEAD. The clone needs the library committed, git's user.name and user.email,
and push access to the remote; the merge driver is installed in it when missing.`,
		Example: `  git descent work pdf-audit --worker 3 --remote origin --max-time 30m
  git descent work pdf-audit --worker "$CI_NODE_INDEX" --remote origin --proposals 10`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = args[0]
			return runWork(c.Context(), e, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Worker, "worker", "", "this worker's id (letters, digits, '.', '_', '-'): its branch is descent/<lib>/w/<id>; give each machine its own")
	f.StringVar(&o.Remote, "remote", "origin", "the shared repository: a remote's name, a URL or a path")
	f.IntVar(&o.Proposals, "proposals", 0, "stop after pushing this many proposals (0: no limit)")
	f.DurationVar(&o.MaxTime, "max-time", 0, "stop after this long, e.g. 30m (0: no limit); a proposal already made is still pushed")
	f.IntVar(&o.Ahead, "ahead", evolve.DefaultAhead, "how many of this worker's proposals may wait for the aggregator before it waits too")
	f.DurationVar(&o.Interval, "interval", 10*time.Second, "while waiting for the aggregator, how often to fetch the remote")
	f.IntVar(&o.Jobs, "jobs", 4, "rollouts at once")
	f.Float64Var(&o.Hedge, "hedge", 0, "start a rollout again once it runs this many times longer than its estimate (0: never)")
	f.BoolVar(&o.NoCache, "no-cache", false, "neither read nor write the local rollout cache")
	f.BoolVar(&o.json, "json", false, "print a summary as JSON on stdout at the end (the lines for people go to stderr)")
	o.sim.flags(f)
	return c
}

func runWork(ctx context.Context, e *env, o workOptions) error {
	if o.Worker == "" {
		return &UsageError{fmt.Errorf("--worker is required: give each machine its own id, e.g. --worker 3 or --worker \"$CI_NODE_INDEX\"")}
	}
	if o.Proposals < 0 || o.MaxTime < 0 {
		return &UsageError{fmt.Errorf("--proposals and --max-time must not be negative")}
	}
	if o.Ahead < 1 || o.Interval <= 0 {
		return &UsageError{fmt.Errorf("--ahead must be at least 1 and --interval positive")}
	}
	if o.Hedge != 0 && o.Hedge <= 1 {
		return &UsageError{fmt.Errorf("--hedge %g: must be above 1, or 0 to never hedge", o.Hedge)}
	}
	return runRemote(ctx, e, o.library, o.json, &o.sim, &o.RemoteOptions, func(repo *git.Repo, lib *library.Library) (*evolve.WorkSummary, error) {
		return evolve.Work(ctx, repo, lib, o.WorkOptions)
	})
}

type aggregateOptions struct {
	library string
	evolve.AggregateOptions
	json bool
	sim  simOptions
}

func newAggregateCmd(e *env) *cobra.Command {
	var o aggregateOptions
	c := &cobra.Command{
		Use:               "aggregate <library> --remote <name> [--watch]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Decide the proposals workers pushed to a shared repository, and publish dev",
		Long: `aggregate is the aggregator of workers on other machines (git descent work). It
fetches the proposals queued on the remote (refs/descent/<lib>/queue/*), decides
those the journal does not hold yet exactly as evolve's aggregator does (merge
driver, fusion, the calibrated gate on validation, promotion), and publishes dev,
stable, the journal and the notes in one atomic push leased against what it fetched
(git push --atomic --force-with-lease), removing the decided proposals from the
queue in the same push. When another aggregator publishes first, nothing of this
one's round is written: it takes the other's journal and decides again what is left,
so no proposal is decided twice and none is lost.

Without --watch it decides what is queued and stops. With --watch it goes on as
proposals arrive: it watches the refs of a remote on this machine (a path), and
fetches any remote every --interval; --idle stops it after a while without a new
proposal. With nothing queued, it only brings this repository's descent refs up
to the remote's, to look at them with git log.`,
		Example: `  git descent aggregate pdf-audit --remote origin
  git descent aggregate pdf-audit --remote origin --watch --idle 10m --max-time 2h`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = args[0]
			return runAggregate(c.Context(), e, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Remote, "remote", "origin", "the shared repository: a remote's name, a URL or a path")
	f.BoolVar(&o.Watch, "watch", false, "keep deciding as proposals arrive")
	f.DurationVar(&o.Interval, "interval", 30*time.Second, "with --watch, how often to fetch the remote")
	f.DurationVar(&o.Idle, "idle", 0, "with --watch, stop after this long without a new proposal (0: never)")
	f.DurationVar(&o.MaxTime, "max-time", 0, "stop after this long, e.g. 2h (0: no limit)")
	f.IntVar(&o.Batch, "batch", 8, "proposals decided together in one round at most")
	f.IntVar(&o.Gates, "gates", 4, "candidates evaluated at once")
	f.IntVar(&o.Jobs, "jobs", 0, "rollouts at once (default 2 × --gates)")
	f.Float64Var(&o.Hedge, "hedge", 0, "start a rollout again once it runs this many times longer than its estimate (0: never)")
	f.BoolVar(&o.NoCache, "no-cache", false, "neither read nor write the local rollout cache")
	f.Float64Var(&o.Target, "target", 0, "stop once dev's validation score reaches this (0: no target)")
	f.BoolVar(&o.json, "json", false, "print a summary as JSON on stdout at the end (the lines for people go to stderr)")
	o.sim.flags(f)
	return c
}

func runAggregate(ctx context.Context, e *env, o aggregateOptions) error {
	if o.Interval <= 0 || o.Idle < 0 || o.MaxTime < 0 {
		return &UsageError{fmt.Errorf("--interval must be positive, --idle and --max-time not negative")}
	}
	if o.Batch < 1 || o.Gates < 1 {
		return &UsageError{fmt.Errorf("--batch and --gates must be at least 1")}
	}
	if o.Idle > 0 && !o.Watch {
		return &UsageError{fmt.Errorf("--idle is for --watch: without it, aggregate stops once the queue is decided")}
	}
	if o.Target < 0 || o.Target > 1 {
		return &UsageError{fmt.Errorf("--target %g: must be between 0 and 1", o.Target)}
	}
	return runRemote(ctx, e, o.library, o.json, &o.sim, &o.RemoteOptions, func(repo *git.Repo, lib *library.Library) (*evolve.AggregateSummary, error) {
		return evolve.Aggregate(ctx, repo, lib, o.AggregateOptions)
	})
}

// runRemote runs work or aggregate: the simulated agents when asked, the
// library, the run's lines on stdout (stderr with --json, the summary then
// going to stdout as JSON).
func runRemote[S any](ctx context.Context, e *env, name string, asJSON bool, sim *simOptions, ro *evolve.RemoteOptions, run func(*git.Repo, *library.Library) (*S, error)) error {
	if err := sim.apply(ro); err != nil {
		return err
	}
	repo, lib, err := e.library(ctx, name)
	if err != nil {
		return err
	}
	ro.Out, ro.Log = e.stdout, e.logger()
	if asJSON {
		ro.Out = e.stderr
	}
	sum, err := run(repo, lib)
	if asJSON && sum != nil {
		if jerr := writeJSON(e.stdout, sum); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}
