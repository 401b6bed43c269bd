package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
)

type exportOptions struct {
	library   string
	benchmark bool
	out       string
	rev       string
	split     string
}

func newExportCmd(e *env) *cobra.Command {
	var o exportOptions
	c := &cobra.Command{
		Use:               "export [<library>] --benchmark",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Write a version's results for other tools: skill-creator's benchmark.json",
		Long: `export --benchmark scores a version of the library (--rev, default descent/<lib>/stable)
and the agent without it on the tasks of a split, as git descent eval --baseline none
does (from the cache where possible), and writes them as skill-creator's benchmark.json
(-o, default benchmark.json): runs with_skill and without_skill per eval, their
expectations where a judge graded them, and the run summary with the delta, which its
eval viewer shows. The split is test by default, the one evolve never decided on; train
and validation tasks shaped the version, so --split all reads optimistic.`,
		Example: `  git descent export pdf-audit --benchmark
  git descent export pdf-audit --benchmark --split all -o /tmp/pdf-audit/benchmark.json`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			if !o.benchmark {
				return &UsageError{errors.New("say what to export: --benchmark (skill-creator's benchmark.json)")}
			}
			return runExport(c.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.benchmark, "benchmark", false, "write skill-creator's benchmark.json")
	c.Flags().StringVarP(&o.out, "output", "o", "benchmark.json", "the `file` to write (- for standard output)")
	c.Flags().StringVar(&o.rev, "rev", "", "the `revision` to score (default descent/<lib>/stable)")
	c.Flags().StringVar(&o.split, "split", "test", "the tasks: test, validation, train or all")
	return c
}

// The benchmark.json of skill-creator, as its eval viewer reads it: the
// field names and the order of run_summary's keys are its contract.
type benchmark struct {
	Metadata   benchMetadata `json:"metadata"`
	Runs       []benchRun    `json:"runs"`
	RunSummary benchSummary  `json:"run_summary"`
	Notes      []string      `json:"notes"`
}

type benchMetadata struct {
	SkillName            string   `json:"skill_name"`
	SkillPath            string   `json:"skill_path"`
	ExecutorModel        string   `json:"executor_model"`
	AnalyzerModel        string   `json:"analyzer_model"`
	Timestamp            string   `json:"timestamp"`
	EvalsRun             []any    `json:"evals_run"`
	RunsPerConfiguration int      `json:"runs_per_configuration"`
	Revision             git.Hash `json:"revision"`
}

type benchRun struct {
	EvalID        any            `json:"eval_id"`
	EvalName      string         `json:"eval_name"`
	Configuration string         `json:"configuration"`
	RunNumber     int            `json:"run_number"`
	Result        benchResult    `json:"result"`
	Expectations  []eval.Verdict `json:"expectations"`
	Notes         []string       `json:"notes"`
}

type benchResult struct {
	PassRate    float64 `json:"pass_rate"`
	Passed      int     `json:"passed"`
	Failed      int     `json:"failed"`
	Total       int     `json:"total"`
	TimeSeconds float64 `json:"time_seconds"`
	Tokens      *int64  `json:"tokens"` // null when not measured
	ToolCalls   int     `json:"tool_calls"`
	Errors      int     `json:"errors"`
}

type benchSummary struct {
	WithSkill    benchConfig `json:"with_skill"` // first: the viewer's column A
	WithoutSkill benchConfig `json:"without_skill"`
	Delta        benchDelta  `json:"delta"`
}

type benchConfig struct {
	PassRate    benchStat  `json:"pass_rate"`
	TimeSeconds benchStat  `json:"time_seconds"`
	Tokens      *benchStat `json:"tokens"`
}

type benchStat struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

type benchDelta struct {
	PassRate    string `json:"pass_rate"`
	TimeSeconds string `json:"time_seconds"`
	Tokens      string `json:"tokens"`
}

func runExport(ctx context.Context, e *env, o exportOptions) error {
	splits, err := splitsNamed(o.split)
	if err != nil {
		return err
	}
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	name := o.rev
	if name == "" {
		name = ledger.Short(ledger.Refs{Library: lib.Name}.Stable())
	}
	commit, err := resolveCommit(ctx, repo, name)
	if err != nil {
		return err
	}
	s, err := evolve.Score(ctx, repo, lib, evolve.ScoreRequest{Commit: commit, Splits: splits, BaselineNone: true}, evolve.Options{Log: e.logger()})
	if err != nil {
		return err
	}
	b := benchmark{
		Metadata: benchMetadata{SkillName: lib.Name, SkillPath: lib.Path, ExecutorModel: executor(lib.Run, lib.Provider.ModelFor("run")), AnalyzerModel: "none",
			Timestamp: time.Now().UTC().Format(time.RFC3339), EvalsRun: []any{}, RunsPerConfiguration: 1, Revision: commit},
		Notes: []string{fmt.Sprintf("git descent export: %s (%s) on the %s split, one rollout per task and configuration; without_skill is the same agent with no library", name, commit.Short(), o.split)},
	}
	if o.split != "test" {
		b.Notes = append(b.Notes, "train and validation tasks were used to evolve this version, so their pass rates read optimistic; the test split's were held out")
	}
	var with, without []evolve.TaskScore
	for _, t := range s.Tasks {
		id := any(t.Task)
		if n, err := strconv.Atoi(t.Task); err == nil {
			id = n
		}
		b.Metadata.EvalsRun = append(b.Metadata.EvalsRun, id)
		b.Runs = append(b.Runs, benchRunOf(id, t, "with_skill"))
		with = append(with, t)
		if t.NoneRun != nil {
			b.Runs = append(b.Runs, benchRunOf(id, *t.NoneRun, "without_skill"))
			without = append(without, *t.NoneRun)
		}
	}
	b.RunSummary.WithSkill, b.RunSummary.WithoutSkill = summarize(with), summarize(without)
	a, c := b.RunSummary.WithSkill, b.RunSummary.WithoutSkill
	b.RunSummary.Delta = benchDelta{PassRate: fmt.Sprintf("%+.2f", a.PassRate.Mean-c.PassRate.Mean), TimeSeconds: fmt.Sprintf("%+.1f", a.TimeSeconds.Mean-c.TimeSeconds.Mean), Tokens: "n/a"}
	if a.Tokens != nil && c.Tokens != nil {
		b.RunSummary.Delta.Tokens = fmt.Sprintf("%+.0f", a.Tokens.Mean-c.Tokens.Mean)
	}
	if o.out == "-" {
		return writeJSON(e.stdout, b)
	}
	f, err := os.Create(o.out)
	if err != nil {
		return err
	}
	if err := writeJSON(f, b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s on %s, with the library %.2f, without %.2f (%s); %s run, %d from the cache\n",
		o.out, name, words.Count(len(with), "task"), a.PassRate.Mean, c.PassRate.Mean, b.RunSummary.Delta.PassRate, words.Count(s.Rollouts, "rollout"), s.CacheHits)
	return nil
}

// executor names the agent for the metadata.
func executor(run, model string) string {
	switch {
	case run != "openai" && run != "claude" && run != "codex":
		return "command (library run)"
	case model != "":
		return run + " " + model
	}
	return run
}

// benchRunOf is one rollout as a run of the viewer's: graded expectations
// count one each; without them the task is one check, passed when its
// reward is 1.
func benchRunOf(id any, t evolve.TaskScore, config string) benchRun {
	r := benchRun{EvalID: id, EvalName: t.Task, Configuration: config, RunNumber: 1, Expectations: t.Grading, Notes: []string{}}
	if r.Expectations == nil {
		r.Expectations = []eval.Verdict{}
	}
	res := benchResult{PassRate: t.Reward, TimeSeconds: t.Seconds}
	if t.Tokens > 0 {
		res.Tokens = &t.Tokens
	}
	switch {
	case t.Errored != "":
		res.Errors, res.PassRate = 1, 0
		r.Notes = append(r.Notes, "could not run: "+t.Errored)
	case len(t.Grading) > 0:
		for _, v := range t.Grading {
			if v.Passed {
				res.Passed++
			}
		}
		res.Total = len(t.Grading)
	default:
		res.Total = 1
		if t.Reward >= 1 {
			res.Passed = 1
		}
	}
	res.Failed = res.Total - res.Passed
	r.Result = res
	return r
}

// summarize is a configuration's statistics over its runs that ran.
func summarize(ts []evolve.TaskScore) benchConfig {
	var rates, secs, toks []float64
	measured := true
	for _, t := range ts {
		if t.Errored != "" {
			continue
		}
		rates, secs = append(rates, t.Reward), append(secs, t.Seconds)
		if t.Tokens <= 0 {
			measured = false
		}
		toks = append(toks, float64(t.Tokens))
	}
	c := benchConfig{PassRate: stat(rates), TimeSeconds: stat(secs)}
	if measured && len(toks) > 0 {
		s := stat(toks)
		c.Tokens = &s
	}
	return c
}

func stat(xs []float64) benchStat {
	s := benchStat{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	s.Min, s.Max = xs[0], xs[0]
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Stddev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}
