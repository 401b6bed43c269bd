package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/bench"
)

// benchOptions is a bench run; runBench sets Out and Log.
type benchOptions struct {
	bench.Options
	json       bool
	suite      bool
	remote     bool
	workersSet bool // --workers was given
}

func newBenchCmd(e *env) *cobra.Command {
	var o benchOptions
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the optimizer on generated domains, calibrated gate against the mean-difference baseline",
		Long: `bench evolves throwaway repositories of generated domains whose truth is known,
each under the calibrated gate and under a strict mean-difference gate (accept any
rise of the validation mean), in the same run, and prints for each: the time to
reach the validation target, the final validation score, proposals, committed
proposals, dev commits, false commits (dev commits whose noise-free score did not
rise) and wrong rules kept in dev.

  routing   20 keywords, 60 tickets; a reproducible agent; a proposer that adds one
            rule per call, right three times in four, not always for a ticket it
            was shown failing (so it sometimes rewrites a right rule); target 0.95
  coinflip  an agent answering yes or no at random: every commit is false
  graded    partial credit (3 facts per topic), an agent that forgets a listed fact
            one time in ten; target 0.80 (the best skill averages 0.90)

The agents, proposers and scorers are the hidden commands bench-agent, bench-propose
and bench-score, run like any agent. A full bench (3 runs, 2 minutes each for routing
and graded) takes about half an hour on two cores.`,
		Example: `  git descent bench
  git descent bench --domain routing --runs 1 --max-time 60s`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			o.workersSet = c.Flags().Changed("workers")
			return runBench(c.Context(), e, o)
		},
	}
	f := c.Flags()
	f.StringSliceVar(&o.Domains, "domain", nil, "domains to run: "+strings.Join(bench.Names, ", ")+" (default all)")
	f.StringSliceVar(&o.Gates, "gate", nil, "gates to compare: calibrated, mean (default both)")
	f.IntVar(&o.Runs, "runs", 3, "runs per domain and gate")
	f.StringSliceVar(&o.Runtimes, "runtime", nil, "runtimes to compare: sync, async (default sync, evolve's default)")
	f.IntSliceVar(&o.Workers, "workers", []int{4}, "evolve --workers; several (1,2,4,8) run each")
	f.StringVar(&o.Latency, "latency", "", "replace the domain's agent and proposer commands by simulated ones in process, each call taking: 0, fixed:50ms, uniform:10ms-90ms or lognormal:50ms,1 (median, σ)")
	f.Float64Var(&o.AgentError, "agent-error", 0, "with --latency, the probability that the simulated agent answers wrongly")
	f.Float64Var(&o.Hedge, "hedge", 0, "evolve --hedge: start a rollout again once it runs this many times longer than its estimate (0: never)")
	f.IntVar(&o.Filler, "filler", 0, "add this many files outside the library to each repository")
	f.BoolVar(&o.NoTarget, "no-target", false, "run --rounds rounds' worth of steps without stopping at the target (for throughput)")
	f.BoolVar(&o.json, "json", false, "print the results as JSON on stdout (the tables go to stderr)")
	f.BoolVar(&o.remote, "remote-workers", false, "time to target on routing with --workers (default 8) in-process workers against as many git descent work processes, each in its own clone of a bare repository, and an aggregator")
	f.BoolVar(&o.suite, "runtime-suite", false, "measure the runtime: workers 1 to 16 (50 ms calls), sync against async (lognormal σ 1, 8 workers, --hedge 4 unless given, at least 5 runs), the wall time per proposal with a zero-latency agent beside 10,000 files")
	f.DurationVar(&o.MaxTime, "max-time", 120*time.Second, "the most one run of routing or graded takes")
	f.IntVar(&o.Rounds, "rounds", 10, "rounds of a coinflip run")
	f.StringVar(&o.Dir, "dir", "", "create the throwaway repositories here (default the system temp dir)")
	f.BoolVar(&o.Keep, "keep", false, "keep the repositories to look at afterwards")
	return c
}

func runBench(ctx context.Context, e *env, o benchOptions) error {
	o.Out, o.Log = e.stdout, e.logger()
	if o.json {
		o.Out = e.stderr
	}
	var res any
	var err error
	switch {
	case o.remote:
		exe, xerr := os.Executable()
		if xerr != nil {
			return xerr
		}
		if !o.workersSet {
			o.Workers = []int{8}
		}
		res, err = bench.Remote(ctx, o.Options, exe)
	case o.suite:
		res, err = bench.RuntimeSuite(ctx, o.Options)
	default:
		res, err = bench.Run(ctx, o.Options)
	}
	if err != nil || !o.json {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// benchDomain is the domain a hidden bench command was started for.
func benchDomain(name string) (bench.Domain, error) {
	d, ok := bench.Domains[name]
	if !ok {
		return nil, fmt.Errorf("no bench domain %q (domains: %s)", name, strings.Join(bench.Names, ", "))
	}
	return d, nil
}

// benchAgentOptions is one rollout of a bench domain's agent.
type benchAgentOptions struct {
	domain   string
	skillDir string // DESCENT_SKILL_DIR
	prompt   string // DESCENT_PROMPT; "" reads the prompt from standard input
}

func newBenchAgentCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "bench-agent <domain>",
		Short:  "A bench domain's agent (reads DESCENT_SKILL_DIR and the prompt)",
		Hidden: true,
		Args:   argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runBenchAgent(c.Context(), e, benchAgentOptions{domain: args[0], skillDir: os.Getenv("DESCENT_SKILL_DIR"), prompt: os.Getenv("DESCENT_PROMPT")})
		},
	}
}

func runBenchAgent(_ context.Context, e *env, o benchAgentOptions) error {
	d, err := benchDomain(o.domain)
	if err != nil {
		return err
	}
	prompt, err := rolloutPrompt(e, o.prompt)
	if err != nil {
		return err
	}
	skill, err := os.ReadFile(filepath.Join(o.skillDir, "SKILL.md"))
	if err != nil {
		return fmt.Errorf("bench-agent: %w (git-descent sets DESCENT_SKILL_DIR for rollouts)", err)
	}
	fmt.Fprintln(e.stdout, d.Answer(map[string]string{"SKILL.md": string(skill)}, prompt))
	return nil
}

// benchProposeOptions is one call of a bench domain's proposer.
type benchProposeOptions struct {
	domain    string
	seed      int    // --seed
	failures  string // DESCENT_FAILURES, the feedback file
	worker    string // DESCENT_WORKER
	rationale string // DESCENT_RATIONALE_FILE; only its name is used, to vary the choices
}

func newBenchProposeCmd(e *env) *cobra.Command {
	var o benchProposeOptions
	c := &cobra.Command{
		Use:    "bench-propose <domain>",
		Short:  "A bench domain's proposer (reads DESCENT_FAILURES, edits SKILL.md)",
		Hidden: true,
		Args:   argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.domain = args[0]
			o.failures, o.worker, o.rationale = os.Getenv("DESCENT_FAILURES"), os.Getenv("DESCENT_WORKER"), os.Getenv("DESCENT_RATIONALE_FILE")
			return runBenchPropose(c.Context(), e, o)
		},
	}
	c.Flags().IntVar(&o.seed, "seed", 0, "varies the proposer's choices between runs")
	return c
}

func runBenchPropose(_ context.Context, e *env, o benchProposeOptions) error {
	d, err := benchDomain(o.domain)
	if err != nil {
		return err
	}
	fb, data, err := proposerFeedback("bench-propose", o.failures)
	if err != nil {
		return err
	}
	file := filepath.Join(fb.SkillDir, "SKILL.md")
	text, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("bench-propose: %w", err)
	}
	skill := map[string]string{"SKILL.md": string(text)}
	rng := bench.NewRand(o.seed, o.worker, o.rationale, string(text), string(data))
	subject := d.Propose(rng, skill, fb)
	if subject == "" {
		return nil
	}
	if err := os.WriteFile(file, []byte(skill["SKILL.md"]), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, subject)
	return nil
}

// benchScoreOptions is one scoring by a bench domain's scorer; the output
// to score is on standard input.
type benchScoreOptions struct {
	domain   string
	expected string // DESCENT_EXPECTED
}

func newBenchScoreCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "bench-score <domain>",
		Short:  "A bench domain's scorer (reads the output on stdin and DESCENT_EXPECTED)",
		Hidden: true,
		Args:   argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runBenchScore(c.Context(), e, benchScoreOptions{domain: args[0], expected: os.Getenv("DESCENT_EXPECTED")})
		},
	}
}

func runBenchScore(_ context.Context, e *env, o benchScoreOptions) error {
	d, err := benchDomain(o.domain)
	if err != nil {
		return err
	}
	out, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%g\n", d.Score(o.expected, string(out)))
	return nil
}
