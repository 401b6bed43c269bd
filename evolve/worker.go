package evolve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/rollout"
)

// worker turns a dev snapshot into at most one proposal per round. It owns
// its seat; step is never called concurrently on one worker.
type worker struct {
	seat
	index    int // 0-based position among the workers
	r        *runner
	train    []eval.Task // all train tasks, in the run's fixed order
	snapshot git.Hash    // the dev commit it works from (synchronous rounds)
	// doing says what the worker is doing now, for Status.
	doing atomic.Value
}

// job is one step of a worker: the dev snapshot to work from, the step's
// number in the run (which moves the minibatch window), the round it
// belongs to, and, in the asynchronous runtime, how to tell that dev has
// moved too far under it.
type job struct {
	dev   git.Hash
	seq   int
	round int
	id    string      // the decision id of a step that makes no proposal
	stale func() bool // nil: never
	// newest, in the asynchronous runtime, returns dev as it is now: a
	// proposal made on an older dev is rebased onto it before it is
	// written. nil in rounds.
	newest func() git.Hash
	// claimed, in the asynchronous runtime, says whether a train task that
	// failed on j.dev is already fixed by a proposal in flight or by one
	// committed since (pipeline.claimed). nil in rounds.
	claimed func(task string) bool
	// stake, in the asynchronous runtime, claims the train tasks the
	// step's proposal fixes; false when another's proposal claimed them
	// all first (claims.stake). nil in rounds.
	stake func(fixed []string) bool
	// hold, in the asynchronous runtime, waits for the run's baseline, then
	// has the journal hold the worker's last proposal if no round has
	// taken it yet: its branch holds one proposal, which the next would
	// otherwise replace (pipeline.hold). nil in rounds.
	hold func(context.Context) error
}

// stepResult is what a step made: a submission, or a decision when the
// proposer produced nothing usable, or neither (every task passed, every
// rollout errored, or the step was abandoned as too stale); quiet is the
// report line of a step that made no proposal, passed says its minibatch
// passed entirely.
type stepResult struct {
	worker    string // "w<id>"
	sub       *aggregate.Submission
	fixed     []string // the train tasks sub was measured to fix (failing before, solved after)
	dec       *ledger.Decision
	quiet     string
	passed    bool
	abandoned bool // dev moved too far under it (asynchronous runtime)
	claimed   bool // every failure it found is claimed (asynchronous runtime)
}

// refresh takes dev as the worker's snapshot every Options.Refresh rounds,
// staggered across workers; in between it keeps working from an older dev,
// as an asynchronous worker would, and its proposals are stale.
func (w *worker) refresh(dev git.Hash, round int) git.Hash {
	k := max(w.r.opts.Refresh, 1)
	if w.snapshot.IsZero() || (round+w.index)%k == 0 {
		w.snapshot = dev
	}
	return w.snapshot
}

// minibatch returns the train tasks of the seq-th step of the run: a
// window that moves with each step, so the workers together cover the
// train split before repeating.
func (w *worker) minibatch(seq int) []eval.Task {
	n, m := len(w.train), w.r.minibatch()
	if m >= n {
		return w.train
	}
	start := seq * m
	out := make([]eval.Task, m)
	for i := range out {
		out[i] = w.train[(start+i)%n]
	}
	return out
}

// step rolls out a minibatch on j.dev, asks the proposer to fix the
// failures, and commits a valid edit as a proposal on the worker's branch.
func (w *worker) step(ctx context.Context, j job) (res stepResult, err error) {
	defer func() {
		res.worker = "w" + w.id
		w.doing.Store("waiting for the next step")
	}()
	start := time.Now()
	lib, dev := w.r.lib, j.dev
	if err := w.dir.Reset(ctx, dev); err != nil {
		return stepResult{}, err
	}
	devLib, err := w.r.repo.TreeOf(ctx, dev, lib.Path)
	if err != nil {
		return stepResult{}, err
	}
	batch := w.minibatch(j.seq)
	w.doing.Store(fmt.Sprintf("rolling out %s on dev %s", words.Count(len(batch), "train task"), dev.Short()))
	before, err := w.r.eval.RolloutAll(ctx, devLib, batch)
	if err != nil {
		return stepResult{}, err
	}
	rolled := time.Since(start)
	fb := feedback(lib.Name, w.dir.SkillDir(), lib.Frozen, batch, before)
	if len(fb.Failures) == 0 && len(fb.Passed) == 0 {
		return stepResult{quiet: fmt.Sprintf("w%-3s every rollout of its minibatch errored; nothing to propose from", w.id)}, nil
	}
	if len(fb.Failures) == 0 {
		return stepResult{passed: true}, nil
	}
	if j.stale != nil && j.stale() {
		return stepResult{abandoned: true}, nil
	}
	if j.claimed != nil {
		// Failures a proposal in flight (or committed since j.dev) fixes
		// are left to it: the proposer is shown the others, and with none
		// left the step ends without asking it.
		fb.Failures = slices.DeleteFunc(fb.Failures, func(a agent.Attempt) bool { return j.claimed(a.TaskID) })
		if len(fb.Failures) == 0 {
			return stepResult{claimed: true}, nil
		}
	}
	w.doing.Store(fmt.Sprintf("proposing an edit for %s", words.Count(len(fb.Failures), "failed task")))
	m, err := w.r.proposeEdit(ctx, &w.seat, dev, fb)
	if err != nil {
		return stepResult{}, err
	}
	proposed := time.Since(start) - rolled
	if m.outcome != "" {
		return stepResult{quiet: fmt.Sprintf("w%-3s %s: %s", w.id, m.outcome, m.reason),
			dec: &ledger.Decision{ID: j.id, Library: lib.Name, Worker: w.id, Round: j.round, Outcome: m.outcome, Reason: m.reason,
				Base: dev, Train: [2]float64{rollout.Mean(before), 0},
				Seconds: time.Since(start).Seconds(), Started: start, RolloutSeconds: rolled.Seconds(), ProposeSeconds: proposed.Seconds()}}, nil
	}
	edit, rat := m.edit, m.rat
	if rat.Subject == "" {
		rat.Subject = fmt.Sprintf("Edit %s after %d failed tasks", strings.Join(edit.Paths, ", "), len(fb.Failures))
	}
	w.doing.Store("measuring its edit on the same tasks")
	p, fixed, err := w.r.measureProposal(ctx, w.id, dev, edit, batch, before, rat, start)
	if err != nil {
		return stepResult{}, err
	}
	if j.stake != nil && !j.stake(fixed) {
		return stepResult{claimed: true}, nil // another worker's proposal fixes the same tasks
	}
	p.Started, p.RolloutSeconds, p.ProposeSeconds = start, rolled.Seconds(), proposed.Seconds()
	if j.newest != nil {
		w.doing.Store("rebasing its edit onto the newest dev")
		if p, edit, fixed, err = w.r.rebase(ctx, p, edit, fixed, j.newest(), batch, rat, start); err != nil {
			return stepResult{}, err
		}
		p.Started, p.RolloutSeconds, p.ProposeSeconds = start, rolled.Seconds(), proposed.Seconds()
	}
	if j.hold != nil {
		w.doing.Store("holding its last proposal for the aggregator")
		if err := j.hold(ctx); err != nil {
			return stepResult{}, err
		}
	}
	sub, err := w.r.writeProposal(ctx, p, edit)
	return stepResult{sub: sub, fixed: fixed}, err
}

// commitProposal measures an edit (measureProposal) and commits it as
// worker's proposal on dev.
func (r *runner) commitProposal(ctx context.Context, worker string, dev git.Hash, edit materialize.Edit, tasks []eval.Task, before []rollout.Record, rat agent.Rationale, start time.Time) (*aggregate.Submission, error) {
	p, _, err := r.measureProposal(ctx, worker, dev, edit, tasks, before, rat, start)
	if err != nil {
		return nil, err
	}
	return r.writeProposal(ctx, p, edit)
}

// writeProposal commits p, the proposal edit makes, on its worker's branch
// (whatever the context: a measured proposal is never half-written).
func (r *runner) writeProposal(ctx context.Context, p *ledger.Proposal, edit materialize.Edit) (*aggregate.Submission, error) {
	if err := ledger.WriteProposal(context.WithoutCancel(ctx), r.repo, p, edit.Tree); err != nil {
		return nil, err
	}
	return &aggregate.Submission{Proposal: p, Paths: edit.Paths}, nil
}

// rebase re-makes proposal p, made on an older dev, on dev as it is now:
// its edit merged onto the new dev (through git and the merge driver) and
// measured there on the same tasks, so that it reaches the gate fresh
// instead of stale. An edit that does not merge cleanly, or a dev that has
// not moved, leaves p as it is (the staleness policy then handles it).
// fixed is the tasks p fixes, and it returns those the rebased one fixes.
func (r *runner) rebase(ctx context.Context, p *ledger.Proposal, edit materialize.Edit, fixed []string, dev git.Hash, tasks []eval.Task, rat agent.Rationale, start time.Time) (*ledger.Proposal, materialize.Edit, []string, error) {
	if dev.IsZero() || dev == p.Base {
		return p, edit, fixed, nil
	}
	own, err := r.repo.CommitTree(ctx, git.CommitTreeRequest{Tree: edit.Tree, Parents: []git.Hash{p.Base}, Message: "git-descent: proposal to rebase\n"})
	if err != nil {
		return nil, edit, nil, err
	}
	tree, err := r.repo.MergeTree(ctx, merge.TreeRequest(dev, own))
	var conflict *git.MergeConflictError
	if errors.As(err, &conflict) {
		return p, edit, fixed, nil
	}
	if err != nil {
		return nil, edit, nil, err
	}
	devLib, err := r.repo.TreeOf(ctx, dev, r.lib.Path)
	if err != nil {
		return nil, edit, nil, err
	}
	before, err := r.eval.RolloutAll(ctx, devLib, tasks)
	if err != nil {
		return nil, edit, nil, err
	}
	rebased := materialize.Edit{Tree: tree, Paths: edit.Paths}
	q, fixed, err := r.measureProposal(ctx, p.Worker, dev, rebased, tasks, before, rat, start)
	if err != nil {
		return nil, edit, nil, err
	}
	q.Tokens += p.Tokens - rat.Tokens // what the first measurement's rollouts spent
	q.Cost += p.Cost - rat.Cost
	q.Unpriced += p.Unpriced - rat.Unpriced
	return q, rebased, fixed, nil
}

// measureProposal re-runs tasks with the edit applied and returns the
// proposal it makes on dev, with its evidence: the tasks' rewards before
// (on dev) and after, and what they and the proposer spent; and the tasks
// it fixes (failing before, solved after).
func (r *runner) measureProposal(ctx context.Context, worker string, dev git.Hash, edit materialize.Edit, tasks []eval.Task, before []rollout.Record, rat agent.Rationale, start time.Time) (*ledger.Proposal, []string, error) {
	newLib, err := r.repo.TreeOf(ctx, edit.Tree, r.lib.Path)
	if err != nil {
		return nil, nil, err
	}
	after, err := r.eval.RolloutAll(ctx, newLib, tasks)
	if err != nil {
		return nil, nil, err
	}
	var fixed []string
	for i, t := range tasks {
		if before[i].Errored == "" && after[i].Errored == "" && before[i].Reward < eval.Solved && after[i].Reward >= eval.Solved {
			fixed = append(fixed, t.ID)
		}
	}
	return &ledger.Proposal{
		Subject: rat.Subject, Body: rat.Body,
		Evidence: ledger.Evidence{
			Library: r.lib.Name, Worker: worker, Base: dev, Tasks: ids(tasks),
			RewardBefore: rollout.Mean(before), RewardAfter: rollout.Mean(after),
			Tokens:   rat.Tokens + spent(before).tokens + spent(after).tokens,
			Cost:     rat.Cost + spent(before).cost + spent(after).cost,
			Unpriced: rat.Unpriced + spent(before).unpriced + spent(after).unpriced,
			Seconds:  time.Since(start).Seconds(), Agent: r.agent,
		},
	}, fixed, nil
}

// feedback sorts a minibatch's rollouts into failures and passes; rollouts
// that errored (could not run) are neither.
func feedback(lib, skillDir string, frozen []string, tasks []eval.Task, recs []rollout.Record) agent.Feedback {
	fb := agent.Feedback{Library: lib, SkillDir: skillDir, Frozen: frozen, Failures: []agent.Attempt{}, Passed: []agent.Attempt{}}
	for i, t := range tasks {
		if recs[i].Errored != "" {
			continue
		}
		a := agent.Attempt{TaskID: t.ID, Prompt: t.Prompt, Output: recs[i].Output, Expected: t.Expected,
			Expectations: t.Expectations, Score: recs[i].Reward, Error: recs[i].Error}
		if recs[i].Reward >= eval.Solved {
			fb.Passed = append(fb.Passed, a)
		} else {
			fb.Failures = append(fb.Failures, a)
		}
	}
	return fb
}

func ids(ts []eval.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

type spending struct {
	tokens   int64
	cost     float64
	unpriced int64
}

// spent is what the fresh (not cached) rollouts among recs cost.
func spent(recs []rollout.Record) spending {
	var s spending
	for _, r := range recs {
		if !r.Cached {
			s.tokens += r.Tokens
			s.cost += r.Cost
			s.unpriced += r.Unpriced
		}
	}
	return s
}

// shuffled orders tasks by a hash of the seed and their id: a fixed order
// that does not follow the file's.
func shuffled(tasks []eval.Task, seed string) []eval.Task {
	out := append([]eval.Task(nil), tasks...)
	key := func(t eval.Task) string {
		h := sha256.Sum256([]byte(seed + "\x00order\x00" + t.ID))
		return string(h[:])
	}
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}
