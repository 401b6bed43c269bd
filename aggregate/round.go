package aggregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// round is one aggregation:
//
//  1. proposals re-filed by earlier rounds join this round's;
//  2. admission: the trust region, then the staleness policy (stale ones
//     rebased, set aside or repaired);
//  3. changes to guarded (L1) files, and proposals whose own evidence shows
//     no gain on the current dev, each wait for a gate of their own;
//  4. the rest are fused, textual conflicts settled by validation score,
//     semantic ones found by scoring the fusion against its members;
//  5. each candidate (the fusion, then the singles) goes through the
//     oracle when it touches L1 files and then the gate, and is committed
//     to dev when accepted: later candidates merge onto the new dev; a
//     fusion the gate rejects is broken up and its members gated alone;
//  6. promising proposals (evidence positive, not yet enough), this
//     round's and those waiting from earlier rounds, are pooled into one
//     candidate and gated together (pool);
//  7. promotion, then the round's last record in the journal.
//
// Each merge into dev and each repair is recorded the moment it is made
// (record), so the journal holds every decision that moved a ref whatever
// instant the process dies. Measurements may be cancelled; writes are not.
// When the context ends between candidates, the decisions made so far are
// recorded and the proposals not yet decided are decided by the next run.
func (a *Aggregator) round(ctx context.Context, subs []*Submission, others []ledger.Decision) (*RoundResult, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	state := head.State
	state.Round++
	dev, err := a.Repo.ResolveRef(ctx, a.refs.Dev())
	if err != nil {
		return nil, err
	}
	refiled, attempts, err := a.refiled(ctx, state.Refile)
	if err != nil {
		return nil, err
	}
	subs = append(append([]*Submission(nil), refiled...), subs...)
	res := &RoundResult{Round: state.Round, Dev: dev}
	d, err := newDecider(ctx, a, state.Round, dev, subs, attempts)
	if err != nil {
		return nil, err
	}
	d.head, d.refiled, d.waiting = head, refiled, state.Promising
	for i := range others {
		others[i].Round = state.Round
		d.add(others[i])
	}

	stopped := a.decide(ctx, d, &state, res, subs)
	if stopped == nil {
		d.waiting, stopped = a.pool(ctx, d, &state, res, d.waiting)
		d.promising = nil
	}
	if stopped != nil && !errors.Is(stopped, context.Canceled) && !errors.Is(stopped, context.DeadlineExceeded) {
		return nil, stopped
	}
	var promo *promotion
	if stopped == nil {
		promo, stopped = a.measureAndPromote(ctx, &state, res)
		if stopped != nil && ctx.Err() == nil {
			return nil, stopped
		}
		state.Noise = a.Noise()
	}
	res.Decisions = d.list
	for _, dec := range d.list {
		if dec.Outcome == ledger.Duplicate {
			state.Fusion.NothingToFuse++
		}
	}
	if err := a.recordRound(context.WithoutCancel(ctx), d, state, res, promo); err != nil {
		return nil, fmt.Errorf("record round %d of %s: %w (another git-descent may be running on this library)", state.Round, a.Library.Name, err)
	}
	return res, stopped
}

// recordRound writes the round's last record: its remaining decisions, the
// state it leaves and, with promo, stable's fast-forward. When stable moved
// meanwhile, theirs stands and the round is recorded without promoting.
func (a *Aggregator) recordRound(ctx context.Context, d *decider, state ledger.State, res *RoundResult, promo *promotion) error {
	msg := roundMessage(a.Library.Name, res)
	if promo == nil {
		return a.record(ctx, d, d.checkpoint(state), msg)
	}
	err := a.record(ctx, d, promo.apply(d.checkpoint(state)), msg, promo.move)
	if !lostRef(err, a.refs.Stable()) {
		return err
	}
	a.Log.Warn("stable moved meanwhile; not promoting", "ref", a.refs.Stable())
	res.Promotion, res.Stable = nil, state.StableScore
	return a.record(ctx, d, d.checkpoint(state), roundMessage(a.Library.Name, res))
}

// decide runs steps 2 to 5 of a round. It returns the context's error when
// the round was cut short (what was decided stands), or another error.
func (a *Aggregator) decide(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, subs []*Submission) error {
	ready, err := a.admit(ctx, d, state, res.Dev, subs)
	if err != nil {
		return err
	}
	pool, solos, err := a.split(ctx, d, res.Dev, ready)
	if err != nil {
		return err
	}
	cand, alone, err := a.fuse(ctx, d, res.Dev, pool)
	if err != nil {
		return err
	}
	solos = append(alone, solos...)
	if cand, err = a.rank(ctx, d, state, cand); err != nil {
		return err
	}
	var queue []*fusion
	if len(cand.members) > 0 {
		queue = append(queue, cand)
	}
	for _, s := range solos {
		queue = append(queue, &fusion{members: []*Submission{s}})
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		next, err := a.candidate(ctx, d, state, res, c)
		if err != nil {
			return err
		}
		queue = append(next, queue...)
	}
	return nil
}

// measureAndPromote scores dev and stable on validation after the round's
// merges, keeping the scores in state, and applies the promotion rule. It
// returns the promotion to record with the round, if any.
func (a *Aggregator) measureAndPromote(ctx context.Context, state *ledger.State, res *RoundResult) (*promotion, error) {
	stable, err := a.Repo.ResolveRef(ctx, a.refs.Stable())
	if err != nil {
		return nil, err
	}
	if res.DevScore, err = a.scoreTree(ctx, res.Dev, a.Validation); err != nil {
		return nil, err
	}
	if res.Stable, err = a.scoreTree(ctx, stable, a.Validation); err != nil {
		return nil, err
	}
	state.Dev, state.Stable = res.Dev, stable
	state.DevScore, state.StableScore = res.DevScore, res.Stable
	return a.promote(ctx, state, stable, res)
}

// candidate merges c's members onto the current dev (reusing c when it was
// built on it), runs the oracle when they touch L1 files, gates the result,
// and commits it when accepted. It returns the candidates to gate next: a
// fusion of several that the gate rejects is not decided, its members are
// gated alone; one whose commit lost to someone else moving dev is gated
// again on the new dev.
func (a *Aggregator) candidate(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, c *fusion) ([]*fusion, error) {
	dev, members := res.Dev, c.members
	f, err := c, error(nil)
	if c.dev != dev {
		f, err = a.build(ctx, dev, members)
	}
	var conflict *MemberConflictError
	if errors.As(err, &conflict) {
		// An earlier candidate this round took its place.
		for _, m := range members {
			d.add(d.decision(m, ledger.ConflictDev, fmt.Sprintf("does not merge onto dev %s after this round's earlier merge: conflict in %v", dev.Short(), conflict.Paths)))
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if f.tree == f.base {
		for _, m := range members {
			d.add(d.decision(m, ledger.Duplicate, "dev already makes this change"))
		}
		return nil, nil
	}
	v := Verdict{Members: members}
	if a.touchesGuarded(members) {
		finding, err := a.checkOracle(ctx, f)
		if err != nil {
			return nil, err
		}
		v.Oracle = finding
		if finding != oraclePassed {
			res.Verdicts = append(res.Verdicts, v)
			for _, m := range members {
				dec := d.decision(m, ledger.OracleVeto, "changes guarded (L1) files and "+finding)
				dec.Oracle = finding
				d.add(dec)
			}
			return nil, nil
		}
	}
	if v.Gate, err = a.gate(ctx, dev, f, state.Commits); err != nil {
		return nil, err
	}
	d.gated[f.tree] = true
	if !v.Gate.Accept && len(members) > 1 {
		res.Verdicts = append(res.Verdicts, v)
		var alone []*fusion
		for _, m := range members {
			alone = append(alone, &fusion{members: []*Submission{m}})
		}
		return alone, nil
	}
	wctx := context.WithoutCancel(ctx)
	v.Merge, err = a.commit(wctx, d, state, dev, f, v.Gate, v.Oracle)
	var moved *devMovedError
	if errors.As(err, &moved) {
		if err := a.retryOnNewDev(ctx, d, res, err); err != nil {
			return nil, err
		}
		return []*fusion{{members: members}}, nil
	}
	if err != nil {
		return nil, err
	}
	if !v.Merge.IsZero() {
		res.Dev = v.Merge
	}
	res.Verdicts = append(res.Verdicts, v)
	return nil, nil
}

// refiled loads the proposals earlier rounds set aside, with how often each
// was re-filed.
func (a *Aggregator) refiled(ctx context.Context, queue []ledger.Refile) ([]*Submission, map[git.Hash]int, error) {
	attempts := map[git.Hash]int{}
	var subs []*Submission
	for _, r := range queue {
		s, err := a.submission(ctx, r.Proposal)
		if err != nil {
			return nil, nil, fmt.Errorf("re-filed %w", err)
		}
		attempts[r.Proposal] = r.Attempts
		subs = append(subs, s)
	}
	return subs, attempts, nil
}

// unreached returns the re-filed proposals a round cut short never
// decided, to keep them queued as they were (worker branches keep the
// round's fresh proposals for the next run).
func unreached(refiled []*Submission, attempts map[git.Hash]int, ds []ledger.Decision) []ledger.Refile {
	decided := map[git.Hash]bool{}
	for _, d := range ds {
		decided[d.Proposal] = true
	}
	var out []ledger.Refile
	for _, s := range refiled {
		if c := s.Proposal.Commit; !decided[c] {
			out = append(out, ledger.Refile{Proposal: c, Attempts: attempts[c]})
		}
	}
	return out
}
