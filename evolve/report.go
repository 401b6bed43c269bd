package evolve

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/rollout"
	"github.com/git-descent/git-descent/sandbox"
)

// baseline scores dev on validation before the first round and refuses to
// go on when no rollout works at all (a wrong run command, say). It then
// measures how reproducible the agent is and says what the smallest gain
// the gate can accept is.
func (r *runner) baseline(ctx context.Context) error {
	ctx = sandbox.WithPriority(ctx, sandbox.Critical) // everything after waits for it
	s, out := r.summary, r.opts.Out
	if r.role == roleAggregate {
		fmt.Fprintf(out, "aggregating %s (%s): %d train, %d validation, %d test tasks; %s at once, %s\n",
			r.lib.Name, r.lib.Path, s.Tasks["train"], s.Tasks["validation"], s.Tasks["test"], words.Count(r.opts.Workers, "candidate"), words.Count(r.opts.Jobs, "job"))
	} else {
		fmt.Fprintf(out, "evolving %s (%s): %d train, %d validation, %d test tasks; %s, %s, %s\n",
			r.lib.Name, r.lib.Path, s.Tasks["train"], s.Tasks["validation"], s.Tasks["test"], words.Count(r.opts.Workers, "worker"), words.Count(r.opts.Rounds, "round"), words.Count(r.opts.Jobs, "job"))
	}
	fmt.Fprintln(out, r.isolation)
	runtime := "rounds"
	if r.opts.Async {
		runtime = "async"
	}
	r.event(Event{Kind: "start", Library: r.lib.Name, Tasks: s.Tasks, Workers: r.opts.Workers, Runtime: runtime, Isolation: r.level, Resumed: r.resumed})
	val := r.validation()
	if r.crossFit() {
		fmt.Fprintf(out, "validation: cross-fitted (the validation split has only %s): each candidate is judged on those of the %d train and validation tasks its proposers did not see; library.%s.validation = split keeps the split\n",
			words.Count(s.Tasks["validation"], "task"), len(val), r.lib.Name)
	}
	devLib, err := r.repo.TreeOf(ctx, s.Start, r.lib.Path)
	if err != nil {
		return err
	}
	r.prog.set(fmt.Sprintf("measuring the baseline: dev %s on %s", s.Start.Short(), words.Count(len(val), "validation task")))
	recs, err := r.eval.RolloutAll(ctx, devLib, val)
	if err != nil {
		return err
	}
	if err := allFailed(recs); err != nil {
		return err
	}
	s.Baseline = rollout.Mean(recs)
	s.Final = s.Baseline
	r.prog.point(Point{Seconds: time.Since(r.start).Seconds(), Dev: s.Start, Score: s.Baseline})
	fmt.Fprintf(out, "baseline: dev %s scores %.2f on validation\n", s.Start.Short(), s.Baseline)
	r.event(Event{Kind: "baseline", Dev: s.Start, Validation: ptr(s.Baseline)})
	r.prog.set("measuring how reproducible the agent is")
	if s.Noise, err = r.agg.MeasureNoise(ctx, noiseSample); err != nil {
		return err
	}
	fmt.Fprintf(out, "agent: %s\n", s.Noise)
	r.power(len(val))
	return nil
}

// noiseSample is how many validation tasks dev is rolled out on twice at the
// start, to measure how reproducible the agent is.
const noiseSample = 12

// power says what the smallest gain the gate can accept is, and warns with
// the fix when a one-task gain could never pass.
func (r *runner) power(n int) {
	out, lib := r.opts.Out, r.lib
	if r.crossFit() {
		n -= min(r.minibatch(), n)
		if m := r.minibatch(); m < lib.Minibatch {
			fmt.Fprintf(out, "minibatch: %d train tasks per worker, not %d, to leave some of the %d pooled tasks to judge each proposal on\n", m, lib.Minibatch, len(r.train()))
		}
	}
	k := r.agg.SmallestGain(n)
	switch {
	case lib.Gate == library.GateMean:
		fmt.Fprintf(out, "gate: mean difference (baseline): any rise of the validation mean is accepted\n")
	case k == 1:
		fmt.Fprintf(out, "gate: a one-task gain on %s can pass (δ %.2f, up to %d rollouts per task)\n", words.Count(n, "task"), math.Max(lib.Delta, lib.DeltaFloor), max(lib.MaxRepeats, lib.Repeats))
	case k == 0:
		fmt.Fprintf(out, "warning: with this agent's noise no gain on %s can pass the gate, even confirmed %d times: raise library.%s.max-repeats, make the agent more reproducible (temperature 0), or add evals\n",
			words.Count(n, "task"), max(lib.MaxRepeats, lib.Repeats), lib.Name)
	default:
		fmt.Fprintf(out, "warning: with this agent's noise the gate needs a gain of %d of %d tasks; a one-task gain can never pass: raise library.%s.max-repeats (now %d) or add evals\n",
			k, n, lib.Name, max(lib.MaxRepeats, lib.Repeats))
	}
	if n < 5 {
		fmt.Fprintf(out, "warning: candidates are judged on only %s, so a single task decides: add evals (the split is %s train/validation/test: library.%s.split)\n",
			words.Count(n, "task"), lib.Split, lib.Name)
	}
}

// allFailed reports the agent's error when every rollout of a batch failed
// to run, which means the setup, not the library, is wrong.
func allFailed(recs []rollout.Record) error {
	for _, r := range recs {
		if r.Error == "" && r.Errored == "" {
			return nil
		}
	}
	if len(recs) == 0 {
		return nil
	}
	first := recs[0].Error
	if first == "" {
		first = recs[0].Errored
	}
	return fmt.Errorf("every rollout failed; first error: %s (check library run command and its environment)", first)
}

// queuePending queues, in the journal, the proposals on worker branches
// that no decision covers (a run stopped between proposing and deciding),
// before any worker can replace them: the first round decides them.
func (r *runner) queuePending(ctx context.Context) (int, error) {
	j := ledger.OpenJournal(r.repo, r.lib.Name)
	head, err := j.Head(ctx)
	if err != nil {
		return 0, err
	}
	ps, err := j.Undecided(ctx, head)
	if err != nil || len(ps) == 0 {
		return 0, err
	}
	if _, err := j.Queue(context.WithoutCancel(ctx), head, ps); err != nil {
		return 0, fmt.Errorf("queue undecided proposals of %s: %w", r.lib.Name, err)
	}
	return len(ps), nil
}

// resuming says how many proposals of an earlier run queuePending queued.
func (r *runner) resuming(n int) {
	if n == 0 {
		return
	}
	verb := "await"
	if n == 1 {
		verb = "awaits"
	}
	fmt.Fprintf(r.opts.Out, "resuming: %s from an earlier run %s a decision\n", words.Count(n, "proposal"), verb)
}

// report prints one round.
func (r *runner) report(res *aggregate.RoundResult, quiet []string) {
	out := r.opts.Out
	n := 0
	for _, d := range res.Decisions {
		if !d.Proposal.IsZero() {
			n++
		}
	}
	fmt.Fprintf(out, "round %d: %s\n", res.Round, words.Count(n, "proposal"))
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
		switch {
		case v.Pooled:
			what = fmt.Sprintf("%d promising pooled", len(v.Members))
		case len(v.Members) > 1:
			what = fmt.Sprintf("%d fused", len(v.Members))
		}
		switch {
		case v.Gate == nil:
			fmt.Fprintf(out, "  oracle (%s): %s\n", what, v.Oracle)
		case v.Gate.Accept:
			fmt.Fprintf(out, "  gate (%s): %s: merged as %s\n", what, v.Gate, v.Merge.Short())
		case len(v.Members) > 1 && !v.Pooled:
			fmt.Fprintf(out, "  gate (%s): %s: not accepted; each is gated alone\n", what, v.Gate)
		case v.Pooled:
			fmt.Fprintf(out, "  gate (%s): %s: not yet; they keep waiting\n", what, v.Gate)
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
	if s.Rounds == 0 {
		// No round measured stable: it is dev, measured by the baseline, or
		// where the journal's last measurement left it.
		head, err := ledger.OpenJournal(r.repo, r.lib.Name).Head(ctx)
		if err != nil {
			return err
		}
		switch {
		case stable == dev:
			s.StableVal = s.Final
		case head.State.Stable == stable:
			s.StableVal = head.State.StableScore
		}
	}
	test := r.splits[eval.Test]
	if len(test) == 0 || !scoreTest {
		return nil
	}
	r.prog.set("scoring the sealed test split")
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
	s.LiftStart = lift(final, start)
	s.TestScored = true
	if r.opts.BaselineNone {
		none, err := r.eval.RolloutAll(ctx, git.EmptyTree, test)
		if err != nil {
			return err
		}
		s.TestNone = ptr(rollout.Mean(none))
		s.LiftNone = lift(final, none)
	}
	return nil
}

// Interval is a mean difference with its 95% interval.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// lift is the paired per-task gain of a over b with its 95% interval (see
// accept.LiftInterval: always within what is possible), over the tasks
// neither rollout errored on; nil with fewer than two such tasks.
func lift(ra, rb []rollout.Record) *Interval {
	var a, b []float64
	for i := range ra {
		if i < len(rb) && ra[i].Errored == "" && rb[i].Errored == "" {
			a, b = append(a, ra[i].Reward), append(b, rb[i].Reward)
		}
	}
	if len(a) < 2 {
		return nil
	}
	var m float64
	for i := range a {
		m += a[i] - b[i]
	}
	lo, hi := accept.LiftInterval(a, b, 0.95)
	return &Interval{Mean: m / float64(len(a)), Lo: lo, Hi: hi}
}

func ptr(f float64) *float64 { return &f }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
