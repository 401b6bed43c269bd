package aggregate

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// treeSource is an accept.Source over the aggregator's observations: dev
// and the candidate as library trees. Each gate asks for the repeats it has
// not seen, lowest first: a repeat that is still running (rolled out ahead
// of the gate, gateAhead) is joined, one that has finished since the gate
// read what was known is read, rather than a fresh one rolled out.
type treeSource struct {
	obs       *observations
	dev, cand git.Hash
	tasks     []eval.Task
	seen      *seenRepeats
}

// seenRepeats is the repeats a gate has counted or asked for, by version
// and task.
type seenRepeats struct {
	mu sync.Mutex
	by map[obsKey]map[int]bool
}

// mark adds repeat to what the gate has seen of k.
func (s *seenRepeats) mark(k obsKey, repeat int) {
	if s.by[k] == nil {
		s.by[k] = map[int]bool{}
	}
	s.by[k][repeat] = true
}

func (t treeSource) tree(cand bool) git.Hash {
	if cand {
		return t.cand
	}
	return t.dev
}

func (t treeSource) Known(cand bool, i int) []float64 {
	k := obsKey{t.tree(cand), t.tasks[i].ID}
	var known []float64
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	for repeat, x := range t.obs.rewards(k.tree, k.task) {
		if !math.IsNaN(x) {
			t.seen.mark(k, repeat)
			known = append(known, x)
		}
	}
	return known
}

func (t treeSource) Roll(ctx context.Context, cand bool, i int) (float64, bool, accept.Spent, error) {
	k := obsKey{t.tree(cand), t.tasks[i].ID}
	t.seen.mu.Lock()
	repeat := 0
	for t.seen.by[k][repeat] {
		repeat++
	}
	t.seen.mark(k, repeat)
	t.seen.mu.Unlock()
	reward, ok, out, err := t.obs.get(ctx, k.tree, t.tasks[i], repeat)
	return reward, ok, accept.Spent{Tokens: out.Tokens, Cost: out.Cost, Unpriced: out.Unpriced}, err
}

// gate scores a candidate against dev on the tasks held out from its
// members, with δ annealed by the number of dev commits so far.
func (a *Aggregator) gate(ctx context.Context, dev git.Hash, cand *fusion, commits int) (*ledger.Gate, error) {
	devLib, err := a.Repo.TreeOf(ctx, dev, a.Library.Path)
	if err != nil {
		return nil, err
	}
	candLib, err := a.Repo.TreeOf(ctx, cand.tree, a.Library.Path)
	if err != nil {
		return nil, err
	}
	tasks := a.heldOut(cand.members)
	src := treeSource{obs: a.obs, dev: devLib, cand: candLib, tasks: tasks, seen: &seenRepeats{by: map[obsKey]map[int]bool{}}}
	devRuns := make([][]float64, len(tasks))
	recent := make([][]float64, len(tasks))
	ids := make([]string, len(tasks))
	est := make([]time.Duration, len(tasks))
	for i, t := range tasks {
		devRuns[i], recent[i], ids[i], est[i] = src.Known(false, i), a.obs.recentOf(t.ID), t.ID, a.obs.estimate(t.ID)
	}
	lib := a.Library
	spec := accept.Spec{
		Delta: accept.Anneal(lib.Delta, lib.DeltaFloor, lib.HalfLife, commits), MaxRegressions: lib.MaxRegressions,
		MinRepeats: max(lib.Repeats, 1), MaxRepeats: max(lib.MaxRepeats, lib.Repeats, 1),
		Mean: lib.Gate == library.GateMean, Pool: a.obs.pool(a.Validation, devLib, candLib), Window: a.window(), Estimates: est,
	}
	return accept.Run(ctx, spec, ids, accept.Order(devRuns, recent, est), src)
}

// window is how many rollouts one gate keeps in flight.
func (a *Aggregator) window() int { return max(a.Jobs, 1) }

// heldOut is the tasks a candidate is judged on: the validation split, or,
// cross-fitted, every pooled task none of its members' proposers saw.
func (a *Aggregator) heldOut(members []*Submission) []eval.Task {
	held, _ := a.splitValidation(members)
	return held
}

// splitValidation splits Validation into the tasks a candidate is judged
// on (heldOut) and the rest: cross-fitted, those its members' proposers
// saw; otherwise none.
func (a *Aggregator) splitValidation(members []*Submission) (held, rest []eval.Task) {
	if !a.CrossFit {
		return a.Validation, nil
	}
	seen := map[string]bool{}
	for _, m := range members {
		for _, id := range m.Proposal.Tasks {
			seen[id] = true
		}
	}
	for _, t := range a.Validation {
		if seen[t.ID] {
			rest = append(rest, t)
		} else {
			held = append(held, t)
		}
	}
	return held, rest
}
