package evolve

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/rollout"
)

// baseline scores dev on validation before the first round and refuses to
// go on when no rollout works at all (a wrong run command, say).
func (r *runner) baseline(ctx context.Context) error {
	s := r.summary
	fmt.Fprintf(r.opts.Out, "evolving %s (%s): %d train, %d validation, %d test tasks; %d workers, %d rounds, %d jobs\n",
		r.lib.Name, r.lib.Path, s.Tasks["train"], s.Tasks["validation"], s.Tasks["test"], r.opts.Workers, r.opts.Rounds, r.opts.Jobs)
	if n := s.Tasks["validation"]; n < 4 {
		fmt.Fprintf(r.opts.Out, "warning: only %d validation tasks; the gate can hardly tell a gain from luck (add tasks)\n", n)
	}
	devLib, err := r.repo.TreeOf(ctx, s.Start, r.lib.Path)
	if err != nil {
		return err
	}
	recs, err := r.eval.RolloutAll(ctx, devLib, r.splits[eval.Validation])
	if err != nil {
		return err
	}
	if err := allFailed(recs); err != nil {
		return err
	}
	s.Baseline = rollout.Mean(recs)
	s.Final = s.Baseline
	fmt.Fprintf(r.opts.Out, "baseline: dev %s scores %.2f on validation\n", s.Start.Short(), s.Baseline)
	return nil
}

// allFailed reports the agent's error when every rollout of a batch failed
// to run, which means the setup, not the library, is wrong.
func allFailed(recs []rollout.Record) error {
	for _, r := range recs {
		if r.Error == "" {
			return nil
		}
	}
	if len(recs) == 0 {
		return nil
	}
	return fmt.Errorf("every rollout failed; first error: %s (check library run command and its environment)", recs[0].Error)
}

// pending finds proposals on worker branches that no decision covers (a run
// stopped between proposing and deciding) and resubmits them.
func (r *runner) pending(ctx context.Context) ([]*merge.Submission, error) {
	refs, err := r.repo.ListRefs(ctx, r.refs.WorkerPrefix())
	if err != nil {
		return nil, err
	}
	j := ledger.OpenJournal(r.repo, r.lib.Name)
	decided, err := j.Decisions(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, d := range decided {
		seen[string(d.Proposal)] = true
	}
	var subs []*merge.Submission
	for _, ref := range refs {
		if seen[string(ref.Hash)] {
			continue
		}
		p, err := ledger.ReadProposal(ctx, r.repo, ref.Hash)
		if err != nil || p.Library != r.lib.Name {
			continue
		}
		paths, err := r.repo.ChangedPaths(ctx, p.Base, p.Commit)
		if err != nil {
			return nil, err
		}
		var rel []string
		for _, path := range paths {
			if x, ok := r.lib.Rel(path); ok {
				rel = append(rel, x)
			}
		}
		subs = append(subs, &merge.Submission{Proposal: p, Paths: rel})
	}
	if len(subs) > 0 {
		fmt.Fprintf(r.opts.Out, "resuming: %d proposals from an earlier run await a decision\n", len(subs))
	}
	return subs, nil
}

// report prints one round.
func (r *runner) report(res *merge.RoundResult, quiet []string) {
	out := r.opts.Out
	n := 0
	for _, d := range res.Decisions {
		if !d.Proposal.IsZero() {
			n++
		}
	}
	fmt.Fprintf(out, "round %d: %d proposals\n", res.Round, n)
	ds := append([]ledger.Decision(nil), res.Decisions...)
	sort.SliceStable(ds, func(i, j int) bool { return ledger.WorkerLess(ds[i].Worker, ds[j].Worker) })
	for _, d := range ds {
		if d.Proposal.IsZero() {
			continue
		}
		fmt.Fprintf(out, "  w%-3s %s  train %.2f→%.2f  %-17s %s\n", d.Worker, d.Proposal.Short(), d.Train[0], d.Train[1], d.Outcome, clip(d.Subject, 60))
	}
	for _, l := range quiet {
		fmt.Fprintf(out, "  %s\n", clip(l, 200))
	}
	for _, v := range res.Verdicts {
		what := "alone"
		if len(v.Members) > 1 {
			what = fmt.Sprintf("%d fused", len(v.Members))
		}
		switch {
		case v.Gate == nil:
			fmt.Fprintf(out, "  oracle (%s): %s\n", what, v.Oracle)
		case v.Gate.Accept:
			fmt.Fprintf(out, "  gate (%s): %s: merged as %s\n", what, v.Gate, v.Merge.Short())
		default:
			fmt.Fprintf(out, "  gate (%s): %s: rejected\n", what, v.Gate)
		}
	}
	if p := res.Promotion; p != nil {
		fmt.Fprintf(out, "  stable ← %s (validation %.2f ≥ %.2f)\n", p.To.Short(), p.Dev, p.Stable)
	} else if res.Regressed {
		fmt.Fprintf(out, "  regression: dev %.2f < stable %.2f; promotion clock restarted\n", res.DevScore, res.Stable)
	}
}

// finish fills in the final refs and, with scoreTest, scores the sealed
// test split (reported only, never used to decide): the version the run
// started from, dev and stable, and with --baseline none the agent without
// the library; lifts come with 95% intervals over the paired tasks.
func (r *runner) finish(ctx context.Context, scoreTest bool) error {
	s := r.summary
	dev, err := r.repo.ResolveRef(ctx, r.refs.Dev())
	if err != nil {
		return err
	}
	stable, err := r.repo.ResolveRef(ctx, r.refs.Stable())
	if err != nil {
		return err
	}
	s.Dev, s.Stable = dev, stable
	test := r.splits[eval.Test]
	if len(test) == 0 || !scoreTest {
		return nil
	}
	score := func(commit git.Hash) ([]rollout.Record, error) {
		lib, err := r.repo.TreeOf(ctx, commit, r.lib.Path)
		if err != nil {
			return nil, err
		}
		return r.eval.RolloutAll(ctx, lib, test)
	}
	start, err := score(s.Start)
	if err != nil {
		return err
	}
	final, err := score(dev)
	if err != nil {
		return err
	}
	st, err := score(stable)
	if err != nil {
		return err
	}
	s.TestStart, s.TestFinal, s.TestStable = rollout.Mean(start), rollout.Mean(final), rollout.Mean(st)
	s.LiftStart = lift(rewards(final), rewards(start))
	s.TestScored = true
	if r.opts.BaselineNone {
		none, err := r.eval.RolloutAll(ctx, git.EmptyTree, test)
		if err != nil {
			return err
		}
		s.TestNone = ptr(rollout.Mean(none))
		s.LiftNone = lift(rewards(final), rewards(none))
	}
	return nil
}

// Interval is a mean difference with its 95% interval.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// lift is the paired per-task gain of a over b with its 95% interval; nil
// with fewer than two tasks.
func lift(a, b []float64) *Interval {
	if len(a) < 2 || len(a) != len(b) {
		return nil
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	lo, hi := merge.MeanInterval(d, 0.95)
	return &Interval{Mean: (lo + hi) / 2, Lo: lo, Hi: hi}
}

func ptr(f float64) *float64 { return &f }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
