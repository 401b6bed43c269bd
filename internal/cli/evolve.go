package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type evolveOptions struct {
	library string
	evolve.Options
	json        bool
	quiet       bool
	statusEvery time.Duration
	repeats     int
	baseline    string
	tournament  bool
	sync        bool
	provider    map[string]*string // model settings from flags, by .descent key
}

func newEvolveCmd(e *env) *cobra.Command {
	var o evolveOptions
	c := &cobra.Command{
		Use:               "evolve [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Evolve a library: workers propose edits, the gate merges the ones that help",
		Long: `evolve runs rounds until --rounds, --target or --max-time. Each round, every worker
resets its seat (the library alone, outside the repository) to dev, runs the agent
on a minibatch of train tasks, asks the proposer to fix the failures, and commits
the edit to descent/<lib>/w/<worker>. With --async, workers never wait for each
other or for the gate: each step starts from the newest dev, a proposal made on an
older one is rebased onto it before it is written, and the aggregator decides
whatever has arrived, in small rounds, while they go on (--rounds N allows N steps
per worker); a step whose dev gets more than --async-ratio commits ahead before its
proposer runs is made again from the new dev. The aggregator merges proposals onto
descent/<lib>/dev through the descent merge driver, fusing compatible ones and
settling conflicts by validation score, gates several candidates at once, and
commits a candidate only when it beats dev on validation: P(better) > 1-δ under a
model of the agent's noise, measured at the start by rolling dev out twice on some
tasks. With a reproducible agent one fixed task and none broken is enough; with a
noisy one the gate re-rolls the tasks that decide, up to max-repeats. Evidence that
is positive but not yet enough makes a proposal "promising": it waits to be pooled
with later ones. stable is fast-forwarded to dev after promote-after clean rounds.

The first run creates dev and stable at HEAD; later runs resume from them.
Rollouts are cached under .git/descent/cache (keyed by the library version, the
task, the agent's configuration and the content of the scripts it runs), so nothing
is rolled out twice; --no-cache runs everything afresh, and git descent cache clear
empties it. A rollout that cannot run (command not found, killed, timed out, an
endpoint down) is retried, never scored, and counted; most rollouts failing that
way stops the run. Your working tree, index, HEAD and branches are never touched.`,
		Example: `  git descent evolve skills/pdf-audit --workers 8 --rounds 10
  git descent evolve pdf-audit --target 0.9 --max-time 30m
  git descent evolve pdf-audit --async --workers 8 --hedge 4 --max-time 30m`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.library = args[0]
			}
			return runEvolve(c.Context(), e, o)
		},
	}
	f := c.Flags()
	f.IntVar(&o.Workers, "workers", 4, "parallel workers")
	f.IntVar(&o.Rounds, "rounds", 6, "aggregator rounds; with --async, as many steps per worker")
	f.Float64Var(&o.Target, "target", 0, "stop once dev's validation reward reaches this (0: no target)")
	f.DurationVar(&o.MaxTime, "max-time", 0, "stop after this long, e.g. 30m (0: no limit)")
	f.IntVar(&o.Jobs, "jobs", 0, "rollouts at once, workers' and gate's together (default 2 × workers)")
	f.Int64Var(&o.MaxTokens, "max-tokens", 0, "stop once the run has spent this many tokens (0: no limit)")
	f.Float64Var(&o.MaxCost, "max-cost", 0, "stop once the run has spent this many US dollars (0: no limit; needs prices for models that do not report cost)")
	f.BoolVar(&o.json, "json", false, "print the run as JSON lines on stdout: start, baseline, round, status, stop and summary events (see README); the lines for people go to stderr")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only the summary and errors (with --json, only the events)")
	f.DurationVar(&o.statusEvery, "status-every", 0, "how often a status line goes to a log that is not a terminal (default 30s) or a status event to --json (default 5s); negative for never")
	f.IntVar(&o.repeats, "repeats", 0, "rollouts of each validation task per version the gate starts with (overrides library repeats; it re-rolls uncertain tasks up to max-repeats by itself)")
	f.Float64Var(&o.Hedge, "hedge", 0, "start a rollout again on a free slot once it runs this many times longer than its estimate, e.g. 4, keeping the first answer (0: never; a hedge is a second, paid agent run)")
	f.BoolVar(&o.NoCache, "no-cache", false, "neither read nor write the rollout cache: roll everything out afresh")
	f.StringVar(&o.baseline, "baseline", "", "also score the test split without the library: none")
	f.BoolVar(&o.Async, "async", false, "run workers and the gate as stages that never wait for each other, instead of rounds")
	f.BoolVar(&o.sync, "sync", false, "run synchronous rounds: every worker on the same dev, then one aggregation (the default)")
	f.IntVar(&o.AsyncRatio, "async-ratio", evolve.DefaultAsyncRatio, "with --async, the dev commits a worker's snapshot may fall behind before its step is made again from the new dev")
	f.IntVar(&o.Refresh, "refresh", 1, "in rounds, workers take a new dev snapshot every N rounds, staggered (above 1, proposals go stale as asynchronous ones do)")
	f.BoolVar(&o.tournament, "fusion-tournament", false, "score every fusion against its single proposals and keep fusion statistics (git descent log --fusion)")
	o.provider = map[string]*string{}
	for key, usage := range map[string]string{
		"model":           "model for the openai runner, proposer and judge (overrides descent.model)",
		"base-url":        "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (overrides descent.base-url)",
		"api-key-env":     "environment variable holding the API key (overrides descent.api-key-env)",
		"request-timeout": "timeout of one model request, e.g. 90s (overrides descent.request-timeout)",
	} {
		o.provider[key] = f.String(key, "", usage)
	}
	return c
}

func runEvolve(ctx context.Context, e *env, o evolveOptions) error {
	if o.Target < 0 || o.Target > 1 {
		return &UsageError{fmt.Errorf("--target %g: must be between 0 and 1", o.Target)}
	}
	if o.MaxTokens < 0 || o.MaxCost < 0 {
		return &UsageError{fmt.Errorf("--max-tokens and --max-cost must not be negative")}
	}
	if o.Hedge != 0 && o.Hedge <= 1 {
		return &UsageError{fmt.Errorf("--hedge %g: must be above 1 (a rollout can only be hedged once it runs longer than expected), or 0 to never hedge", o.Hedge)}
	}
	if o.AsyncRatio < 1 {
		return &UsageError{fmt.Errorf("--async-ratio %d: must be at least 1 (--sync keeps every worker on the newest dev)", o.AsyncRatio)}
	}
	if o.Async && o.sync {
		return &UsageError{fmt.Errorf("--async and --sync: choose one runtime")}
	}
	if o.Refresh > 1 && o.Async {
		return &UsageError{fmt.Errorf("--refresh %d is for rounds: with --async workers take the newest dev at every step and their proposals go stale by themselves", o.Refresh)}
	}
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	given := map[string]string{}
	for k, v := range o.provider {
		if *v != "" {
			given[k] = *v
		}
	}
	if err := lib.Override(given); err != nil {
		return &UsageError{err}
	}
	if o.repeats < 0 {
		return &UsageError{fmt.Errorf("--repeats %d: must be at least 1", o.repeats)}
	}
	if o.repeats > 0 {
		lib.Repeats = o.repeats
		lib.MaxRepeats = max(lib.MaxRepeats, o.repeats)
	}
	if o.BaselineNone, err = baselineNone(o.baseline); err != nil {
		return err
	}
	lib.Tournament = lib.Tournament || o.tournament
	o.Log = e.logger()
	events, done := e.display(&o.Options, o.json, o.quiet, o.statusEvery)
	sum, err := evolve.Evolve(ctx, repo, lib, o.Options)
	done()
	if err != nil {
		return err
	}
	switch {
	case events != nil:
		events.summary(sum)
		if !o.quiet {
			fmt.Fprintln(e.stderr)
			printSummary(e.stderr, lib, sum) // the people's lines, with the rest
		}
	default:
		if !o.quiet {
			fmt.Fprintln(e.stdout) // after the run's lines
		}
		printSummary(e.stdout, lib, sum)
	}
	return allFailed(lib, sum)
}

// allFailed is the error of a run in which proposals were decided and every
// one failed to be a proposal at all (its proposer failed, or edited what it
// may not): the run did nothing, and a script or CI job should know.
func allFailed(lib *library.Library, s *evolve.Summary) error {
	failed, decided := s.Outcomes[ledger.ProposerFailed]+s.Outcomes[ledger.Invalid], 0
	for _, n := range s.Outcomes {
		decided += n
	}
	if decided == 0 || failed < decided {
		return nil
	}
	return &ExitError{Code: 1, Message: fmt.Sprintf("every proposal of this run failed (%d proposer-failed, %d invalid): the proposer needs fixing; git descent log %s says why",
		s.Outcomes[ledger.ProposerFailed], s.Outcomes[ledger.Invalid], lib.Name)}
}

// printSummary is the end-of-run report with the commands to review and
// adopt the result.
func printSummary(w io.Writer, lib *library.Library, s *evolve.Summary) {
	refs := ledger.Refs{Library: lib.Name}
	val := fmt.Sprintf("on %d tasks", s.Tasks["validation"])
	if s.Validation == library.ValidationCross {
		val = fmt.Sprintf("on %d train and validation tasks, cross-fitted", s.Tasks["validation"]+s.Tasks["train"])
	}
	fmt.Fprintf(w, "done in %s (%s): validation %.2f → %.2f %s\n",
		(time.Duration(s.Seconds * float64(time.Second))).Round(100*time.Millisecond), s.Stop, s.Baseline, s.Final, val)
	fmt.Fprintf(w, "  %s, %s, %s, %s; %s\n", words.Count(s.Rounds, "round"), words.Count(s.Proposals, "proposal"), words.Count(s.Merges, "dev commit"), words.Count(s.Promotions, "promotion"), outcomeList(s.Outcomes))
	fmt.Fprintf(w, "  rollouts: %d run, %d from cache", s.Rollouts, s.CacheHits)
	if s.Hedges > 0 {
		fmt.Fprintf(w, ", %d hedged (started again: they ran far beyond their estimate)", s.Hedges)
	}
	fmt.Fprintln(w)
	if s.Errored > 0 {
		fmt.Fprintf(w, "  %s errored (could not run; not scored, not cached); first: %s\n", words.Count(s.Errored, "rollout"), clipText(s.FirstError, 300))
	}
	if s.Noise != nil {
		fmt.Fprintf(w, "  agent: %s\n", s.Noise)
	}
	if s.Tokens > 0 || s.Cost > 0 || s.Requests > 0 {
		fmt.Fprintf(w, "  spent: %s, %s; %s, %s\n", words.Count(s.Tokens, "token"), budget.Cost(s.Cost, s.Unpriced), words.Count(s.Requests, "model request"), words.Count(s.Retries, "retry", "retries"))
	}
	switch {
	case s.TestScored:
		start := "start"
		if s.Resumed {
			start = "this run's start" // git descent report has the lift since the library began
		}
		fmt.Fprintf(w, "  test split (sealed, never used to decide), %d tasks: %s %.2f, dev %.2f, stable %.2f\n", s.Tasks["test"], start, s.TestStart, s.TestFinal, s.TestStable)
		if l := s.LiftStart; l != nil {
			fmt.Fprintf(w, "    lift over %s: %+.2f (95%% interval %+.2f to %+.2f)\n", map[bool]string{true: "this run's start", false: "the start"}[s.Resumed], l.Mean, l.Lo, l.Hi)
		}
		if s.TestNone != nil {
			fmt.Fprintf(w, "    without the library: %.2f", *s.TestNone)
			if l := s.LiftNone; l != nil {
				fmt.Fprintf(w, "; lift over no library: %+.2f (95%% interval %+.2f to %+.2f)", l.Mean, l.Lo, l.Hi)
			}
			fmt.Fprintln(w)
		}
	case s.Tasks["test"] > 0:
		fmt.Fprintf(w, "  test split not scored: the run stopped on --%s\n", s.Stop)
	}
	fmt.Fprintf(w, "  %s = %s (validation %.2f), %s = %s (validation %.2f)\n",
		ledger.Short(refs.Dev()), s.Dev.Short(), s.Final, ledger.Short(refs.Stable()), s.Stable.Short(), s.StableVal)
	fmt.Fprintf(w, "\nreview:\n")
	fmt.Fprintf(w, "  git log --graph --oneline %s\n", ledger.Short(refs.Dev()))
	fmt.Fprintf(w, "  git descent log %s\n", lib.Name)
	fmt.Fprintf(w, "  git diff HEAD...%s -- %s\n", ledger.Short(refs.Stable()), lib.Path)
	fmt.Fprintf(w, "adopt:\n  git merge %s\n", ledger.Short(refs.Stable()))
}

func outcomeList(m map[ledger.Outcome]int) string {
	var parts []string
	for o, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, o))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "no decisions"
	}
	return strings.Join(parts, ", ")
}
