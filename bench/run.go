package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Options configure a bench.
type Options struct {
	Domains []string      // names from Domains; all when empty
	Gates   []string      // library gates to compare; calibrated and mean when empty
	Runs    int           // runs per domain and gate
	Workers int           // evolve --workers
	MaxTime time.Duration // per run, for domains with a target (routing, graded)
	Rounds  int           // per run: the coin flip's rounds, and a cap for the others
	Dir     string        // where the throwaway repositories go; the system temp dir when ""
	Keep    bool          // keep the repositories
	Out     io.Writer     // a line per run and the tables
	Log     *slog.Logger
}

// Result is one run of one domain under one gate.
type Result struct {
	Domain, Gate string
	Run          int
	Reached      bool    // dev's validation score reached the target
	ToTarget     float64 // seconds until it did
	Final        float64 // dev's validation score at the end
	Seconds      float64
	Proposals    int // proposals decided
	Committed    int // of them, committed
	Commits      int // dev commits
	FalseCommits int // dev commits whose noise-free score is not above their parent's
	Wrong        int // wrong rules in dev at the end
	TrueScore    float64
	Rollouts     int64
}

// Run runs every domain and gate Runs times and prints the results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	o = withDefaults(o)
	var all []Result
	for _, name := range o.Domains {
		d, ok := Domains[name]
		if !ok {
			return all, fmt.Errorf("no bench domain %q (domains: %s)", name, strings.Join(Names, ", "))
		}
		var rs []Result
		for run := 1; run <= o.Runs; run++ {
			for _, gate := range o.Gates {
				r, err := runOnce(ctx, o, d, gate, run)
				if err != nil {
					return all, fmt.Errorf("bench %s, gate %s, run %d: %w", name, gate, run, err)
				}
				fmt.Fprintf(o.Out, "%-8s %-10s run %d: %s\n", name, gate, run, r.line(d))
				rs = append(rs, r)
			}
		}
		printTable(o.Out, d, o, rs)
		all = append(all, rs...)
	}
	return all, nil
}

func withDefaults(o Options) Options {
	if len(o.Domains) == 0 {
		o.Domains = Names
	}
	if len(o.Gates) == 0 {
		o.Gates = []string{library.GateCalibrated, library.GateMean}
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Workers <= 0 {
		o.Workers = 4
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

// runOnce builds a fresh repository for the domain and evolves it.
func runOnce(ctx context.Context, o Options, d Domain, gate string, run int) (Result, error) {
	res := Result{Domain: d.Name(), Gate: gate, Run: run}
	dir, err := os.MkdirTemp(o.Dir, "descent-bench-"+d.Name()+"-")
	if err != nil {
		return res, err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	repo, lib, err := setupRepo(ctx, dir, d, gate, run)
	if err != nil {
		return res, err
	}
	eo := evolve.Options{Workers: o.Workers, Rounds: o.Rounds, Out: io.Discard, Log: o.Log}
	if d.Name() != "coinflip" {
		eo.MaxTime, eo.Target, eo.Rounds = o.MaxTime, d.Target(), 1<<20
	}
	sum, err := evolve.Evolve(ctx, repo, lib, eo)
	if err != nil {
		return res, err
	}
	res.Final, res.Seconds, res.Rollouts = sum.Final, sum.Seconds, sum.Rollouts
	res.Proposals, res.Committed, res.Commits = sum.Proposals, sum.Outcomes[ledger.Committed], sum.Merges
	for _, p := range sum.History {
		if p.Score >= d.Target()-1e-9 {
			res.Reached, res.ToTarget = true, p.Seconds
			break
		}
	}
	return res, countTruth(ctx, repo, lib, d, sum, &res)
}

// setupRepo writes the domain's repository, configures the library under
// gate, registers the merge driver and commits.
func setupRepo(ctx context.Context, dir string, d Domain, gate string, run int) (*git.Repo, *library.Library, error) {
	repo, err := git.InitRepo(ctx, dir, nil)
	if err != nil {
		return nil, nil, err
	}
	files := d.Files()
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
	return fmt.Sprintf("validation %.2f (%s), true %.2f, %d proposals, %d committed in %d dev commits, %d false, %d wrong kept, %d rollouts, %.1fs",
		r.Final, reached, r.TrueScore, r.Proposals, r.Committed, r.Commits, r.FalseCommits, r.Wrong, r.Rollouts, r.Seconds)
}

// printTable prints one domain's runs, a row per gate, gates side by side.
func printTable(w io.Writer, d Domain, o Options, rs []Result) {
	fmt.Fprintf(w, "\n%s, %d workers", d.Name(), o.Workers)
	if d.Name() == "coinflip" {
		fmt.Fprintf(w, ", %d rounds (nothing can be learned: every commit is false)\n", o.Rounds)
	} else {
		fmt.Fprintf(w, ", target %.2f within %s\n", d.Target(), o.MaxTime)
	}
	fmt.Fprintf(w, "%-11s %-8s %-22s %-16s %-10s %-10s %-8s %-13s %-11s\n", "gate", "reached", "time to target", "final", "proposals", "committed", "commits", "false commits", "wrong kept")
	by := map[string][]Result{}
	for _, r := range rs {
		by[r.Gate] = append(by[r.Gate], r)
	}
	gates := sortedKeys(by)
	sort.SliceStable(gates, func(i, j int) bool { return gates[i] == library.GateCalibrated })
	for _, g := range gates {
		runs := by[g]
		reached, times, finals, props, committed, commits, falses, wrong := 0, []string{}, []string{}, 0, 0, 0, 0, []string{}
		for _, r := range runs {
			t := "—"
			if r.Reached {
				reached++
				t = fmt.Sprintf("%.0fs", r.ToTarget)
			}
			times = append(times, t)
			finals = append(finals, fmt.Sprintf("%.2f", r.Final))
			props += r.Proposals
			committed += r.Committed
			commits += r.Commits
			falses += r.FalseCommits
			wrong = append(wrong, fmt.Sprint(r.Wrong))
		}
		falseRate := "—"
		if commits > 0 {
			falseRate = fmt.Sprintf("%d (%.0f%%)", falses, 100*float64(falses)/float64(commits))
		}
		comm := fmt.Sprintf("%d (%.1f%%)", committed, 100*float64(committed)/float64(max(props, 1)))
		fmt.Fprintf(w, "%-11s %-8s %-22s %-16s %-10d %-10s %-8d %-13s %-11s\n", g, fmt.Sprintf("%d/%d", reached, len(runs)),
			strings.Join(times, " "), strings.Join(finals, " "), props, comm, commits, falseRate, strings.Join(wrong, " "))
	}
	fmt.Fprintln(w)
}
