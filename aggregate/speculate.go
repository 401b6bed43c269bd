package aggregate

import (
	"context"
	"slices"
	"sync"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/merge"
	"github.com/git-descent/git-descent/sandbox"
)

// speculations are the speculative rollouts still running, which may
// outlive the round that started them, and the candidates being gated
// that proposals arriving meanwhile are speculated onto (live).
type speculations struct {
	mu    sync.Mutex
	stops []context.CancelFunc
	wg    sync.WaitGroup
	live  []*speculation
}

// speculation is a candidate being gated, as dev would be were it
// committed: a dangling commit with the real one's parents (mergeParents),
// made when first needed, so that a proposal merged onto it makes the
// merge the next round makes.
type speculation struct {
	ctx    context.Context // speculative priority; cancelled with the speculation
	tree   git.Hash        // the candidate's tree
	commit func() (git.Hash, error)
}

// warmNext is speculative stage completion (FlashEvolve): while c's gate
// runs against dev, each proposal that has arrived for the next round, or
// arrives before the gate ends (Arrived), is merged onto c as dev would be
// were c committed and both are rolled out on the proposal's own train
// tasks: the evidence the next round's split re-runs, then read from the
// cache. No decision rests on these rollouts. stop cancels them (c was
// rejected: dev stays, and the merges were for nothing); otherwise they
// run on into the next round, which waits for any it asks for (the cache
// shares a rollout in flight), and StopSpeculating ends what is left.
// closed, called once the gate has decided, stops speculating arrivals.
func (a *Aggregator) warmNext(ctx context.Context, dev git.Hash, c *fusion) (stop, closed func()) {
	if a.Upcoming == nil {
		return func() {}, func() {}
	}
	parents := mergeParents(dev, c.members)
	ctx, stop = context.WithCancel(sandbox.WithPriority(ctx, sandbox.Speculative))
	sp := &speculation{ctx: ctx, tree: c.tree, commit: sync.OnceValues(func() (git.Hash, error) {
		return a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: c.tree, Parents: parents, Message: "git-descent: speculative dev\n"})
	})}
	a.spec.mu.Lock()
	a.spec.stops = append(a.spec.stops, stop)
	a.spec.live = append(a.spec.live, sp)
	upcoming := a.Upcoming()
	for _, s := range upcoming {
		a.speculateLocked(sp, s)
	}
	a.spec.mu.Unlock()
	a.Log.Debug("speculating", "candidate", c.tree.Short(), "proposals", len(upcoming))
	closed = func() {
		a.spec.mu.Lock()
		defer a.spec.mu.Unlock()
		a.spec.live = slices.DeleteFunc(a.spec.live, func(x *speculation) bool { return x == sp })
	}
	return stop, closed
}

// Arrived tells the aggregator of a proposal on its way to the next round
// (the asynchronous runtime's queue): it is speculated onto every
// candidate being gated (warmNext). Safe for concurrent use.
func (a *Aggregator) Arrived(s *Submission) {
	a.spec.mu.Lock()
	defer a.spec.mu.Unlock()
	for _, sp := range a.spec.live {
		a.speculateLocked(sp, s)
	}
}

// speculateLocked merges s onto sp and rolls both out on s's own train
// tasks, in the background; spec.mu is held. What it needs of s is read
// now: the round that decides s may be running by the time the rollouts
// are.
func (a *Aggregator) speculateLocked(sp *speculation, s *Submission) {
	tasks, proposal := a.ownTasks(s), s.Proposal.Commit
	if len(tasks) == 0 || a.touchesGuarded([]*Submission{s}) || sp.ctx.Err() != nil {
		return
	}
	a.spec.wg.Add(1)
	go func() {
		defer a.spec.wg.Done()
		commit, err := sp.commit()
		if err != nil {
			return
		}
		tree, err := a.Repo.MergeTree(sp.ctx, merge.TreeRequest(commit, proposal))
		if err != nil {
			return // a conflict the next round decides
		}
		a.warm(sp.ctx, []scoring{{sp.tree, tasks}, {tree, tasks}})
	}()
}

// StopSpeculating cancels the speculative rollouts still running and waits
// for them to end. A runtime that sets Upcoming calls it when it is done.
func (a *Aggregator) StopSpeculating() {
	a.spec.mu.Lock()
	stops := a.spec.stops
	a.spec.stops, a.spec.live = nil, nil
	a.spec.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	a.spec.wg.Wait()
}
