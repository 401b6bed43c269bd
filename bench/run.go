package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Options configure a bench.
type Options struct {
	Domains  []string      // names from Domains; all when empty
	Gates    []string      // library gates to compare; calibrated and mean when empty
	Runtimes []string      // "sync", "async" or both; sync (evolve's default) when empty
	Workers  []int         // evolve --workers, a run each; 4 when empty
	Runs     int           // runs per domain, gate, runtime and worker count
	MaxTime  time.Duration // per run, for domains with a target (routing, graded)
	Rounds   int           // per run: the coin flip's rounds, and a cap for the others
	// Latency, when set ("0", "fixed:50ms", "uniform:10ms-90ms",
	// "lognormal:50ms,1"), replaces the domain's agent and proposer commands
	// by simulated ones in git-descent's process, each call taking that
	// long; the agent answers wrongly with probability AgentError.
	Latency    string
	AgentError float64
	// Hedge is evolve --hedge: start a rollout again once it runs that many
	// times longer than its estimate; 0 never.
	Hedge float64
	// Filler adds that many files outside the library to each repository,
	// for the plumbing's cost in a large one.
	Filler int
	// NoTarget runs every domain for Rounds rounds' worth of steps, without
	// stopping at its target: for throughput.
	NoTarget bool
	Dir      string    // where the throwaway repositories go; the system temp dir when ""
	Keep     bool      // keep the repositories
	Out      io.Writer // a line per run and the tables
	Log      *slog.Logger
}

// Result is one run of one domain under one gate, runtime and worker count.
type Result struct {
	Domain       string  `json:"domain"`
	Gate         string  `json:"gate"`
	Runtime      string  `json:"runtime"`
	Workers      int     `json:"workers"`
	Latency      string  `json:"latency,omitempty"` // the simulated agent's; "" for the domain's commands
	Run          int     `json:"run"`
	Reached      bool    `json:"reached"`   // dev's validation score reached the target
	ToTarget     float64 `json:"to_target"` // seconds until it did
	Final        float64 `json:"final"`     // dev's validation score at the end
	Seconds      float64 `json:"seconds"`
	Evolving     float64 `json:"evolving_seconds"` // from the baseline's end to the last decision
	Proposals    int     `json:"proposals"`        // proposals decided
	Committed    int     `json:"committed"`        // of them, committed
	Commits      int     `json:"commits"`          // dev commits
	FalseCommits int     `json:"false_commits"`    // dev commits whose noise-free score is not above their parent's
	Wrong        int     `json:"wrong"`            // wrong rules in dev at the end
	TrueScore    float64 `json:"true_score"`
	Rollouts     int64   `json:"rollouts"`
	Hedges       int64   `json:"hedges"` // rollouts started again because they ran far beyond their estimate
	Busy         float64 `json:"busy"`   // the share of rollout slots in use, over the run
	// GateTasks is the tasks the gates were over, GateCompared those they
	// compared before deciding: the rest were saved by early decisions.
	GateTasks    int `json:"gate_tasks"`
	GateCompared int `json:"gate_compared"`
}

// Throughput is proposals decided per second of evolution.
func (r Result) Throughput() float64 {
	if r.Evolving <= 0 {
		return 0
	}
	return float64(r.Proposals) / r.Evolving
}

// Run runs every domain, gate, runtime and worker count Runs times and
// prints the results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	o = withDefaults(o)
	var lat *Latency
	if o.Latency != "" {
		l, err := ParseLatency(o.Latency)
		if err != nil {
			return nil, err
		}
		lat = &l
	}
	var all []Result
	for _, name := range o.Domains {
		d, ok := Domains[name]
		if !ok {
			return all, fmt.Errorf("no bench domain %q (domains: %s)", name, strings.Join(Names, ", "))
		}
		var rs []Result
		for run := 1; run <= o.Runs; run++ {
			for _, rt := range o.Runtimes {
				for _, workers := range o.Workers {
					for _, gate := range o.Gates {
						c := config{gate: gate, runtime: rt, workers: workers, latency: lat}
						r, err := runOnce(ctx, o, d, c, run)
						if err != nil {
							return all, fmt.Errorf("bench %s, %s, run %d: %w", name, c, run, err)
						}
						fmt.Fprintf(o.Out, "%-8s %-26s run %d: %s\n", name, c, run, r.line(d))
						rs = append(rs, r)
					}
				}
			}
		}
		printTable(o.Out, d, o, rs)
		all = append(all, rs...)
	}
	return all, nil
}

// config is one column of the bench's comparison.
type config struct {
	gate, runtime string
	workers       int
	latency       *Latency // nil: the domain's commands
}

func (c config) String() string {
	return fmt.Sprintf("%s %s %dw", c.gate, c.runtime, c.workers)
}

func withDefaults(o Options) Options {
	if len(o.Domains) == 0 {
		o.Domains = Names
	}
	if len(o.Gates) == 0 {
		o.Gates = []string{library.GateCalibrated, library.GateMean}
	}
	if len(o.Runtimes) == 0 {
		o.Runtimes = []string{RuntimeSync}
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if len(o.Workers) == 0 {
		o.Workers = []int{4}
	}
	if o.MaxTime <= 0 {
		o.MaxTime = 120 * time.Second
	}
	if o.Rounds <= 0 {
		o.Rounds = 10
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Runtimes evolve can run.
const (
	RuntimeAsync = "async"
	RuntimeSync  = "sync"
)

// runOnce builds a fresh repository for the domain and evolves it.
func runOnce(ctx context.Context, o Options, d Domain, c config, run int) (Result, error) {
	res := Result{Domain: d.Name(), Gate: c.gate, Runtime: c.runtime, Workers: c.workers, Run: run}
	if c.runtime != RuntimeAsync && c.runtime != RuntimeSync {
		return res, fmt.Errorf("no runtime %q (runtimes: %s, %s)", c.runtime, RuntimeAsync, RuntimeSync)
	}
	dir, err := os.MkdirTemp(o.Dir, "descent-bench-"+d.Name()+"-")
	if err != nil {
		return res, err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	repo, lib, err := setupRepo(ctx, dir, d, c.gate, run, o.Filler)
	if err != nil {
		return res, err
	}
	eo := evolve.Options{Workers: c.workers, Rounds: o.Rounds, Async: c.runtime == RuntimeAsync, Hedge: o.Hedge, Out: io.Discard, Log: o.Log}
	if d.Name() != "coinflip" && !o.NoTarget {
		eo.MaxTime, eo.Target, eo.Rounds = o.MaxTime, d.Target(), 1<<20
	}
	if c.latency != nil {
		sim := NewSim(d, *c.latency, o.AgentError, run)
		eo.Runner, eo.Proposer, eo.AgentName = sim, sim, sim.Name()
		res.Latency = c.latency.String()
	}
	sum, err := evolve.Evolve(ctx, repo, lib, eo)
	if err != nil {
		return res, err
	}
	res.Final, res.Seconds, res.Rollouts, res.Hedges, res.Busy = sum.Final, sum.Seconds, sum.Rollouts, sum.Hedges, sum.Busy
	res.Proposals, res.Committed, res.Commits = sum.Proposals, sum.Outcomes[ledger.Committed], sum.Merges
	if h := sum.History; len(h) > 1 {
		res.Evolving = h[len(h)-1].Seconds - h[0].Seconds
	}
	for _, p := range sum.History {
		if p.Score >= d.Target()-1e-9 {
			res.Reached, res.ToTarget = true, p.Seconds
			break
		}
	}
	if err := countGates(ctx, repo, lib, &res); err != nil {
		return res, err
	}
	return res, countTruth(ctx, repo, lib, d, sum, &res)
}

// countGates adds up, over the run's gate decisions, the tasks the gates
// were over and those they compared before deciding.
func countGates(ctx context.Context, repo *git.Repo, lib *library.Library, res *Result) error {
	ds, err := ledger.OpenJournal(repo, lib.Name).Decisions(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{} // the members of one candidate share its gate
	for _, d := range ds {
		if d.Gate == nil {
			continue
		}
		if k := fmt.Sprintf("%d %+v", d.Round, *d.Gate); !seen[k] {
			seen[k] = true
			res.GateTasks += d.Gate.Total
			res.GateCompared += d.Gate.Tasks
		}
	}
	return nil
}

// setupRepo writes the domain's repository, configures the library under
// gate, registers the merge driver and commits.
func setupRepo(ctx context.Context, dir string, d Domain, gate string, run, filler int) (*git.Repo, *library.Library, error) {
	repo, err := git.InitRepo(ctx, dir, nil)
	if err != nil {
		return nil, nil, err
	}
	files := d.Files()
	for i := 0; i < filler; i++ {
		files[fmt.Sprintf("src/m%03d/f%05d.txt", i/100, i)] = fmt.Sprintf("filler %d\n", i)
	}
	for _, p := range sortedKeys(files) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			return nil, nil, err
		}
	}
	cfg := d.Config(run)
	cfg["path"], cfg["gate"] = path(d), gate
	for _, k := range sortedKeys(cfg) {
		if err := repo.ConfigSet(ctx, library.File(repo), "library."+d.Name()+"."+k, cfg[k]); err != nil {
			return nil, nil, err
		}
	}
	if _, err := hooks.InstallMergeDriver(ctx, repo, path(d), false); err != nil {
		return nil, nil, err
	}
	if _, err := repo.CommitAll(ctx, "bench "+d.Name(), git.Signature{Name: "Bench", Email: "bench@example.com"}); err != nil {
		return nil, nil, err
	}
	lib, err := library.Find(ctx, repo, d.Name())
	return repo, lib, err
}

// countTruth scores every dev commit of the run with the domain's
// noise-free truth: commits that did not truly help, and wrong rules left.
func countTruth(ctx context.Context, repo *git.Repo, lib *library.Library, d Domain, sum *evolve.Summary, res *Result) error {
	commits, err := repo.FirstParents(ctx, sum.Dev, sum.Start, 1<<20)
	if err != nil {
		return err
	}
	truth := func(c git.Hash) (float64, int, error) {
		data, err := repo.ReadFile(ctx, c, lib.RepoPath(skillFile))
		if err != nil {
			return 0, 0, err
		}
		s, w := d.Truth(map[string]string{skillFile: string(data)})
		return s, w, nil
	}
	for _, c := range commits {
		if c == sum.Start {
			continue
		}
		parents, err := repo.Parents(ctx, c)
		if err != nil || len(parents) == 0 {
			return err
		}
		after, _, err := truth(c)
		if err != nil {
			return err
		}
		before, _, err := truth(parents[0])
		if err != nil {
			return err
		}
		if after <= before+1e-9 {
			res.FalseCommits++
		}
	}
	res.TrueScore, res.Wrong, err = truth(sum.Dev)
	return err
}

func (r Result) line(d Domain) string {
	reached := "not reached"
	if r.Reached {
		reached = fmt.Sprintf("%.2f at %.1fs", d.Target(), r.ToTarget)
	}
	return fmt.Sprintf("validation %.2f (%s), true %.2f, %d proposals (%.1f/s), %d committed in %d dev commits, %d false, %d wrong kept, %d rollouts (%d hedged, slots %.0f%% busy), %.1fs",
		r.Final, reached, r.TrueScore, r.Proposals, r.Throughput(), r.Committed, r.Commits, r.FalseCommits, r.Wrong, r.Rollouts, r.Hedges, 100*r.Busy, r.Seconds)
}

// printTable prints one domain's runs, a row per configuration (gate,
// runtime, workers), side by side.
func printTable(w io.Writer, d Domain, o Options, rs []Result) {
	fmt.Fprintf(w, "\n%s", d.Name())
	if len(rs) > 0 && rs[0].Latency != "" {
		fmt.Fprintf(w, ", simulated agent (latency %s", rs[0].Latency)
		if o.AgentError > 0 {
			fmt.Fprintf(w, ", wrong %.0f%% of the time", 100*o.AgentError)
		}
		fmt.Fprint(w, ")")
	}
	if o.Filler > 0 {
		fmt.Fprintf(w, ", %d files beside the library", o.Filler)
	}
	switch {
	case d.Name() == "coinflip":
		fmt.Fprintf(w, ", %s (nothing can be learned: every commit is false)\n", words.Count(o.Rounds, "round"))
	case o.NoTarget:
		fmt.Fprintf(w, ", %s worth of steps, no target\n", words.Count(o.Rounds, "round's", "rounds'"))
	default:
		fmt.Fprintf(w, ", target %.2f within %s\n", d.Target(), o.MaxTime)
	}
	fmt.Fprintf(w, "%-24s %-8s %-16s %-15s %-10s %-11s %-11s %-8s %-13s %-11s\n", "gate runtime workers", "reached", "time to target", "final", "proposals", "proposals/s", "committed", "commits", "false commits", "wrong kept")
	var keys []string
	by := map[string][]Result{}
	for _, r := range rs {
		k := config{gate: r.Gate, runtime: r.Runtime, workers: r.Workers}.String()
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	for _, k := range keys {
		runs := by[k]
		reached, times, finals, props, committed, commits, falses, wrong, evolving := 0, []string{}, []string{}, 0, 0, 0, 0, []string{}, 0.0
		for _, r := range runs {
			t := "—"
			if r.Reached {
				reached++
				t = fmt.Sprintf("%.1fs", r.ToTarget)
			}
			times = append(times, t)
			finals = append(finals, fmt.Sprintf("%.2f", r.Final))
			props += r.Proposals
			committed += r.Committed
			commits += r.Commits
			falses += r.FalseCommits
			wrong = append(wrong, fmt.Sprint(r.Wrong))
			evolving += r.Evolving
		}
		falseRate := "—"
		if commits > 0 {
			falseRate = fmt.Sprintf("%d (%.0f%%)", falses, 100*float64(falses)/float64(commits))
		}
		rate := "—"
		if evolving > 0 {
			rate = fmt.Sprintf("%.2f", float64(props)/evolving)
		}
		comm := fmt.Sprintf("%d (%.1f%%)", committed, 100*float64(committed)/float64(max(props, 1)))
		fmt.Fprintf(w, "%-24s %-8s %-16s %-15s %-10d %-11s %-11s %-8d %-13s %-11s\n", k, fmt.Sprintf("%d/%d", reached, len(runs)),
			strings.Join(times, " "), strings.Join(finals, " "), props, rate, comm, commits, falseRate, strings.Join(wrong, " "))
	}
	fmt.Fprintln(w)
}
