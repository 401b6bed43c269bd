package evolve

import (
	"sync"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// claims are the train tasks the asynchronous runtime's proposals were
// measured to fix (failing on their dev, solved with the edit), so that
// workers leave a failure another proposal already fixes to that
// proposal instead of proposing the same fix again: the duplicates a
// lagging snapshot makes, which the aggregator would reject one round
// later. The first step to measure a fix for a task claims it; the claim
// holds while its proposal is undecided (queued, re-filed or promising),
// and once it is committed, for the steps whose snapshot predates the
// commit; any other decision frees the task. Safe for concurrent use.
type claims struct {
	mu sync.Mutex
	// by is task → step id → the dev version (pipeline.version) its
	// proposal was committed at, 0 while undecided.
	by map[string]map[string]int
	// step is each written proposal's step id.
	step map[git.Hash]string
}

func newClaims() *claims {
	return &claims{by: map[string]map[string]int{}, step: map[git.Hash]string{}}
}

// claimed says whether task, failing on a snapshot of dev version
// version, is claimed by a step other than self.
func (c *claims) claimed(self string, version int, task string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claimedLocked(self, version, task)
}

func (c *claims) claimedLocked(self string, version int, task string) bool {
	for s, at := range c.by[task] {
		if s != self && (at == 0 || at > version) {
			return true
		}
	}
	return false
}

// stake claims for step the tasks its proposal fixes that no other step
// has claimed. It returns false when the proposal fixes tasks and every
// one of them is claimed already: the proposal would be a duplicate.
func (c *claims) stake(step string, version int, tasks []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	free := 0
	for _, t := range tasks {
		if !c.claimedLocked(step, version, t) {
			c.add(step, t)
			free++
		}
	}
	return len(tasks) == 0 || free > 0
}

// written replaces step's claims by the tasks its proposal, as written
// (rebased onto the newest dev), fixes, under the proposal's commit.
func (c *claims) written(step string, commit git.Hash, tasks []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(step)
	for _, t := range tasks {
		c.add(step, t)
	}
	c.step[commit] = step
}

// drop removes step's claims: it wrote no proposal.
func (c *claims) drop(step string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(step)
}

// settle applies a round's decisions, version being the dev version the
// round left (an upper bound on each commit's own).
func (c *claims) settle(ds []ledger.Decision, version int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range ds {
		step, ok := c.step[d.Proposal]
		switch {
		case !ok || d.Outcome.Refiled() || d.Outcome == ledger.Promising:
		case d.Outcome == ledger.Committed:
			for _, by := range c.by {
				if _, ok := by[step]; ok {
					by[step] = version
				}
			}
		default:
			c.dropLocked(step)
			delete(c.step, d.Proposal)
		}
	}
}

// forget drops the claims of proposals that will not be decided.
func (c *claims) forget(commits []git.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, commit := range commits {
		if step, ok := c.step[commit]; ok {
			c.dropLocked(step)
			delete(c.step, commit)
		}
	}
}

func (c *claims) add(step, task string) {
	if c.by[task] == nil {
		c.by[task] = map[string]int{}
	}
	c.by[task][step] = 0
}

func (c *claims) dropLocked(step string) {
	for t, by := range c.by {
		if delete(by, step); len(by) == 0 {
			delete(c.by, t)
		}
	}
}
