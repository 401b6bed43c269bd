package evolve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/rollout"
)

// worker turns a dev snapshot into at most one proposal per round. It owns
// its worktree; step is never called concurrently on one worker.
type worker struct {
	seat
	index    int // 0-based position among the workers
	r        *runner
	train    []eval.Task // all train tasks, in the run's fixed order
	last     string      // the report line of the last step, if it made no proposal
	passed   bool        // the last step's minibatch passed entirely
	snapshot git.Hash    // the dev commit it works from
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

// minibatch returns the train tasks of this worker in a round: a window
// that moves across workers and rounds, so together they cover the train
// split before repeating.
func (w *worker) minibatch(round int) []eval.Task {
	n, m := len(w.train), w.r.minibatch()
	if m >= n {
		return w.train
	}
	start := ((round-1)*len(w.r.workers) + w.index) * m
	out := make([]eval.Task, m)
	for i := range out {
		out[i] = w.train[(start+i)%n]
	}
	return out
}

// step rolls out a minibatch on dev, asks the proposer to fix the failures,
// and commits a valid edit as a proposal on the worker's branch. It returns
// the submission, or a decision when the proposer produced nothing usable,
// or neither when every task already passes.
func (w *worker) step(ctx context.Context, dev git.Hash, round int) (*aggregate.Submission, *ledger.Decision, error) {
	start := time.Now()
	dev = w.refresh(dev, round)
	lib := w.r.lib
	if err := w.wt.Reset(ctx, dev); err != nil {
		return nil, nil, err
	}
	devLib, err := w.r.repo.TreeOf(ctx, dev, lib.Path)
	if err != nil {
		return nil, nil, err
	}
	batch := w.minibatch(round)
	before, err := w.r.eval.RolloutAll(ctx, devLib, batch)
	if err != nil {
		return nil, nil, err
	}
	fb := feedback(lib.Name, filepath.Join(w.wt.Dir, filepath.FromSlash(lib.Path)), lib.Frozen, batch, before)
	if len(fb.Failures) == 0 && len(fb.Passed) == 0 {
		w.last, w.passed = fmt.Sprintf("w%-3s every rollout of its minibatch errored; nothing to propose from", w.id), false
		return nil, nil, nil
	}
	if len(fb.Failures) == 0 {
		w.last, w.passed = "", true
		return nil, nil, nil
	}
	w.passed = false
	m, err := w.r.proposeEdit(ctx, &w.seat, dev, fb)
	if err != nil {
		return nil, nil, err
	}
	if m.outcome != "" {
		w.last = fmt.Sprintf("w%-3s %s: %s", w.id, m.outcome, m.reason)
		return nil, &ledger.Decision{ID: fmt.Sprintf("r%d-w%s", round, w.id), Library: lib.Name, Worker: w.id,
			Round: round, Outcome: m.outcome, Reason: m.reason, Base: dev, Train: [2]float64{rollout.Mean(before), 0}}, nil
	}
	edit, rat := m.edit, m.rat
	if rat.Subject == "" {
		rat.Subject = fmt.Sprintf("Edit %s after %d failed tasks", strings.Join(edit.Paths, ", "), len(fb.Failures))
	}
	sub, err := w.r.commitProposal(ctx, w.id, dev, edit, batch, before, rat, start)
	if err != nil {
		return nil, nil, err
	}
	w.last = ""
	return sub, nil, nil
}

// commitProposal re-runs tasks with the edit applied and commits the edit
// as worker's proposal on dev, with its evidence: the tasks' rewards
// before (on dev) and after, and what they and the proposer spent.
func (r *runner) commitProposal(ctx context.Context, worker string, dev git.Hash, edit materialize.Edit, tasks []eval.Task, before []rollout.Record, rat agent.Rationale, start time.Time) (*aggregate.Submission, error) {
	newLib, err := r.repo.TreeOf(ctx, edit.Tree, r.lib.Path)
	if err != nil {
		return nil, err
	}
	after, err := r.eval.RolloutAll(ctx, newLib, tasks)
	if err != nil {
		return nil, err
	}
	p := &ledger.Proposal{
		Subject: rat.Subject, Body: rat.Body,
		Evidence: ledger.Evidence{
			Library: r.lib.Name, Worker: worker, Base: dev, Tasks: ids(tasks),
			RewardBefore: rollout.Mean(before), RewardAfter: rollout.Mean(after),
			Tokens:   rat.Tokens + spent(before).tokens + spent(after).tokens,
			Cost:     rat.Cost + spent(before).cost + spent(after).cost,
			Unpriced: rat.Unpriced + spent(before).unpriced + spent(after).unpriced,
			Seconds:  time.Since(start).Seconds(), Agent: r.agent,
		},
	}
	if err := ledger.WriteProposal(context.WithoutCancel(ctx), r.repo, p, edit.Tree); err != nil {
		return nil, err
	}
	return &aggregate.Submission{Proposal: p, Paths: edit.Paths}, nil
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
