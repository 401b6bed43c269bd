package aggregate

import (
	"context"
	"sync"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/sandbox"
)

// speculations are the speculative rollouts still running, which may
// outlive the round that started them.
type speculations struct {
	mu    sync.Mutex
	stops []context.CancelFunc
	wg    sync.WaitGroup
}

// speculated is what speculate needs of an upcoming proposal, read before
// it starts: the round that decides the proposal may be running by the
// time its rollouts are.
type speculated struct {
	commit git.Hash
	tasks  []eval.Task
}

// warmNext is speculative stage completion (FlashEvolve): while c's gate
// runs against dev, each proposal that has arrived for the next round is
// merged onto c as dev would be were c committed (a dangling commit with
// the real one's parents, mergeParents, so the merge is the one the next
// round makes), and both are rolled out on the proposal's own train
// tasks: the evidence the next round's split re-runs, then read from the
// cache. No decision rests on these rollouts. stop cancels them (c was
// rejected: dev stays, and the merges were for nothing); otherwise they
// run on into the next round, which waits for any it asks for (the cache
// shares a rollout in flight), and StopSpeculating ends what is left.
func (a *Aggregator) warmNext(ctx context.Context, dev git.Hash, c *fusion) (stop func()) {
	if a.Upcoming == nil {
		return func() {}
	}
	var next []speculated
	for _, s := range a.Upcoming() {
		if tasks := a.ownTasks(s); len(tasks) > 0 && !a.touchesGuarded([]*Submission{s}) {
			next = append(next, speculated{s.Proposal.Commit, tasks})
		}
	}
	if len(next) == 0 {
		return func() {}
	}
	parents := mergeParents(dev, c.members)
	ctx, stop = context.WithCancel(sandbox.WithPriority(ctx, sandbox.Speculative))
	a.spec.mu.Lock()
	a.spec.stops = append(a.spec.stops, stop)
	a.spec.wg.Add(1)
	a.spec.mu.Unlock()
	go func() {
		defer a.spec.wg.Done()
		defer stop()
		commit, err := a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: c.tree, Parents: parents, Message: "git-descent: speculative dev\n"})
		if err != nil {
			return
		}
		var jobs []scoring
		for _, s := range next {
			tree, err := a.Repo.MergeTree(ctx, merge.TreeRequest(commit, s.commit))
			if err != nil {
				continue // a conflict the next round decides
			}
			jobs = append(jobs, scoring{c.tree, s.tasks}, scoring{tree, s.tasks})
		}
		a.Log.Debug("speculating", "candidate", c.tree.Short(), "proposals", len(next), "rollouts", len(jobs))
		a.warm(ctx, jobs)
	}()
	return stop
}

// StopSpeculating cancels the speculative rollouts still running and waits
// for them to end. A runtime that sets Upcoming calls it when it is done.
func (a *Aggregator) StopSpeculating() {
	a.spec.mu.Lock()
	stops := a.spec.stops
	a.spec.stops = nil
	a.spec.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	a.spec.wg.Wait()
}
