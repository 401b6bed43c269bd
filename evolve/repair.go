package evolve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// repairer re-makes stale or conflicting proposals on the current dev
// (the reflective staleness policy) with the library's proposer, in a
// seat of its own. The aggregator calls it from one goroutine.
type repairer struct {
	r *runner
	seat
}

// Repair implements aggregate.Repairer.
func (rp *repairer) Repair(ctx context.Context, s *aggregate.Submission, dev git.Hash) (*aggregate.Submission, error) {
	start := time.Now()
	r, lib, p := rp.r, rp.r.lib, s.Proposal
	if err := rp.dir.Reset(ctx, dev); err != nil {
		return nil, err
	}
	brief, err := rp.brief(ctx, s, dev)
	if err != nil {
		return nil, err
	}
	fb := agent.Feedback{Library: lib.Name, SkillDir: rp.dir.SkillDir(), Frozen: lib.Frozen,
		Failures: []agent.Attempt{}, Passed: []agent.Attempt{}, Repair: brief}
	m, err := r.proposeEdit(ctx, &rp.seat, dev, fb)
	switch {
	case err != nil:
		return nil, err
	case m.outcome == ledger.NoChange:
		return nil, nil
	case m.outcome != "":
		r.opts.Log.Warn("repair made no usable edit; counted as declined", "proposal", p.Commit.Short(), "outcome", m.outcome, "reason", m.reason)
		return nil, nil
	}
	edit, rat := m.edit, m.rat
	tasks := r.trainTasks(p.Tasks)
	devLib, err := r.repo.TreeOf(ctx, dev, lib.Path)
	if err != nil {
		return nil, err
	}
	before, err := r.eval.RolloutAll(ctx, devLib, tasks)
	if err != nil {
		return nil, err
	}
	if rat.Subject == "" {
		rat.Subject = "Re-apply: " + p.Subject
	}
	rat.Body = strings.TrimSpace(rat.Body + fmt.Sprintf("\n\nRepairs %s (%s), made on %s, for dev %s.", p.Commit.Short(), p.Subject, p.Base.Short(), dev.Short()))
	return r.commitProposal(ctx, p.Worker+"r", dev, edit, tasks, before, rat, start)
}

// brief collects what the proposer needs to re-make a proposal: its own
// change, and the commits and changes that reached dev since its base.
func (rp *repairer) brief(ctx context.Context, s *aggregate.Submission, dev git.Hash) (*agent.Repair, error) {
	repo, lib, p := rp.r.repo, rp.r.lib, s.Proposal
	var paths []string
	for _, rel := range s.Paths {
		paths = append(paths, lib.RepoPath(rel))
	}
	own, err := repo.Diff(ctx, p.Base, p.Commit, []string{lib.Path}, false)
	if err != nil {
		return nil, err
	}
	since, err := repo.Diff(ctx, p.Base, dev, paths, false)
	if err != nil {
		return nil, err
	}
	log, err := repo.LogSubjects(ctx, p.Base, dev, paths)
	if err != nil {
		return nil, err
	}
	return &agent.Repair{Proposal: string(p.Commit), Subject: p.Subject, Body: p.Body, Diff: own, DevLog: strings.Join(log, "\n"), DevDiff: since}, nil
}
