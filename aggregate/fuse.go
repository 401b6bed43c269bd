package aggregate

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/merge"
)

// fusion is a candidate under construction: dev with some proposals merged
// in, as a chain of throwaway merge commits (never referenced by a ref).
type fusion struct {
	dev     git.Hash // the dev commit it is built on
	commit  git.Hash
	tree    git.Hash
	base    git.Hash // dev's tree
	members []*Submission
	// rank: the round's fusion, scored against its members alone while
	// its gate runs (gateRanked).
	rank bool
}

// fuse merges the submissions, best train gain first, into one candidate.
// A submission that adds nothing is a duplicate; one that does not merge
// onto dev at all conflicts with dev; one that conflicts only with other
// members is settled by validation score: the better keeps its place, the
// other loses. Cross-fitted, a submission that would leave the fusion too
// few tasks to be judged on (roomFor) is left out, to be gated alone. It returns the
// final candidate and those left out; every other submission not in it
// has its decision in d.
func (a *Aggregator) fuse(ctx context.Context, d *decider, dev git.Hash, subs []*Submission) (*fusion, []*Submission, error) {
	order := append([]*Submission(nil), subs...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].gain() > order[j].gain() })
	cur, err := a.build(ctx, dev, nil)
	if err != nil {
		return nil, nil, err
	}
	var alone []*Submission
	for _, s := range order {
		if len(cur.members) > 0 && !a.roomFor(cur.members, s) {
			alone = append(alone, s)
			continue
		}
		next, err := a.extend(ctx, cur, s)
		var conflict *MemberConflictError
		switch {
		case errors.As(err, &conflict):
			if cur, err = a.settle(ctx, d, dev, cur.members, s); err != nil {
				return nil, nil, err
			}
		case err != nil:
			return nil, nil, err
		case next.tree == cur.tree:
			d.add(d.decision(s, ledger.Duplicate, "dev, or a better proposal this round, already makes this change"))
		default:
			cur = next
		}
	}
	return cur, alone, nil
}

// roomFor reports whether a candidate of members and s still has enough
// tasks to be judged on: always with a validation split; cross-fitted, a
// third of the pool and at least 3 of the tasks none of their proposers
// saw.
func (a *Aggregator) roomFor(members []*Submission, s *Submission) bool {
	n := len(a.heldOut(append(append([]*Submission(nil), members...), s)))
	return !a.CrossFit || n >= 3 && 3*n >= len(a.Validation)
}

// MemberConflictError is a proposal that does not merge with the ones
// before it.
type MemberConflictError struct {
	Member *Submission
	Paths  []string
}

func (e *MemberConflictError) Error() string {
	return fmt.Sprintf("proposal %s conflicts in %v", e.Member.Proposal.Commit.Short(), e.Paths)
}

// build merges members onto dev in order through the descent merge driver.
func (a *Aggregator) build(ctx context.Context, dev git.Hash, members []*Submission) (*fusion, error) {
	tree, err := a.Repo.TreeOf(ctx, dev, "")
	if err != nil {
		return nil, err
	}
	f := &fusion{dev: dev, commit: dev, tree: tree, base: tree}
	for _, m := range members {
		if f, err = a.extend(ctx, f, m); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// extend merges one more proposal into a fusion, returning a new one.
func (a *Aggregator) extend(ctx context.Context, f *fusion, m *Submission) (*fusion, error) {
	tree, err := a.Repo.MergeTree(ctx, merge.TreeRequest(f.commit, m.Proposal.Commit))
	var mc *git.MergeConflictError
	if errors.As(err, &mc) {
		return nil, &MemberConflictError{Member: m, Paths: mc.Paths}
	}
	if err != nil {
		return nil, fmt.Errorf("merge %s: %w", m.Proposal.Commit.Short(), err)
	}
	c, err := a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: []git.Hash{f.commit, m.Proposal.Commit}, Message: "git-descent: candidate\n"})
	if err != nil {
		return nil, err
	}
	return &fusion{dev: f.dev, commit: c, tree: tree, base: f.base, members: append(append([]*Submission(nil), f.members...), m)}, nil
}

// settle handles s conflicting with the current members: when s does not
// merge onto dev alone it is decided as such; otherwise s and the members it
// clashes with are scored alone on validation, and the best stays.
func (a *Aggregator) settle(ctx context.Context, d *decider, dev git.Hash, members []*Submission, s *Submission) (*fusion, error) {
	alone, err := d.alone(ctx, s)
	var conflict *MemberConflictError
	if errors.As(err, &conflict) {
		d.add(d.decision(s, ledger.ConflictDev, fmt.Sprintf("does not merge onto dev %s: conflict in %v", dev.Short(), conflict.Paths)))
		return a.build(ctx, dev, members)
	}
	if err != nil {
		return nil, err
	}
	rivals := overlapping(members, s)
	tasks := a.heldOut(append([]*Submission{s}, rivals...))
	best, bestScore, err := d.bestAlone(ctx, rivals, tasks, scoring{alone.tree, tasks})
	if err != nil {
		return nil, err
	}
	sScore, err := a.scoreTree(ctx, alone.tree, tasks)
	if err != nil {
		return nil, err
	}
	if sScore <= bestScore {
		d.add(d.decision(s, ledger.ConflictLost, fmt.Sprintf("conflicts with %s, which scores better alone on validation (%.2f vs %.2f)", best.members[0].Proposal.Commit.Short(), bestScore, sScore)))
		return a.build(ctx, dev, members)
	}
	var kept []*Submission
	for _, m := range members {
		if contains(rivals, m) {
			d.add(d.decision(m, ledger.ConflictLost, fmt.Sprintf("conflicts with %s, which scores better alone on validation (%.2f vs %.2f)", s.Proposal.Commit.Short(), sScore, bestScore)))
			continue
		}
		kept = append(kept, m)
	}
	// The survivors merged together before and s merges onto dev alone; if
	// they still clash as a whole, s is the one that proved better.
	f, err := a.build(ctx, dev, append(kept, s))
	var mc *MemberConflictError
	if errors.As(err, &mc) {
		for _, m := range kept {
			d.add(d.decision(m, ledger.ConflictLost, fmt.Sprintf("conflicts with %s, which scores better alone on validation", s.Proposal.Commit.Short())))
		}
		return alone, nil
	}
	return f, err
}

// overlapping returns the members that change a file s changes; when none
// do (a conflict in a file added by both under different names cannot
// happen, but be safe), all members.
func overlapping(members []*Submission, s *Submission) []*Submission {
	var out []*Submission
	for _, m := range members {
		if intersects(m.Paths, s.Paths) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return members
	}
	return out
}

func intersects(a, b []string) bool {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	for _, y := range b {
		if set[y] {
			return true
		}
	}
	return false
}

func contains(ss []*Submission, s *Submission) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
