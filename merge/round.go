package merge

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
//  7. promotion, then every decision in the journal.
//
// Measurements may be cancelled; writes are not. When the context ends
// between candidates, the decisions made so far are recorded and the
// proposals not yet decided stay on their worker branches for the next run.
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
	state.Refile = nil
	subs = append(append([]*Submission(nil), refiled...), subs...)
	res := &RoundResult{Round: state.Round, Dev: dev}
	d, err := newDecider(ctx, a, state.Round, dev, subs, attempts)
	if err != nil {
		return nil, err
	}
	for i := range others {
		others[i].Round = state.Round
		d.add(others[i])
	}

	waiting := state.Promising
	stopped := a.decide(ctx, d, &state, res, subs)
	if stopped == nil {
		waiting, stopped = a.pool(ctx, d, &state, res, waiting)
	} else {
		waiting = append(waiting, d.promising...) // pooled next round
	}
	if stopped != nil && !errors.Is(stopped, context.Canceled) && !errors.Is(stopped, context.DeadlineExceeded) {
		return nil, stopped
	}
	if stopped == nil {
		stopped = a.measureAndPromote(ctx, &state, res)
		if stopped != nil && ctx.Err() == nil {
			return nil, stopped
		}
		state.Noise = a.Noise()
	}
	state.Promising = waiting
	wctx := context.WithoutCancel(ctx)
	state.Refile = append(d.refile, unreached(refiled, attempts, d.list)...)
	res.Decisions = d.list
	for _, dec := range d.list {
		if dec.Outcome == ledger.Duplicate {
			state.Fusion.NothingToFuse++
		}
	}
	tokens, cost := a.Meter.Total()
	state.Tokens += tokens - a.recorded.tokens
	state.Cost += cost - a.recorded.cost
	unpriced := a.Meter.Unpriced()
	state.Unpriced += unpriced - a.recorded.unpriced
	if _, err := a.journal.Record(wctx, head, state, res.Decisions, roundMessage(a.Library.Name, res)); err != nil {
		// Not retried: dev may already hold this round's merges.
		return nil, fmt.Errorf("record round %d of %s: %s (another git-descent may be running on this library)", state.Round, a.Library.Name, err)
	}
	a.recorded.tokens, a.recorded.cost, a.recorded.unpriced = tokens, cost, unpriced
	return res, stopped
}

// decide runs steps 2 to 5 of a round. It returns the context's error when
// the round was cut short (what was decided stands), or another error.
func (a *Aggregator) decide(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, subs []*Submission) error {
	ready, err := a.admit(ctx, d, res.Dev, subs)
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
		alone, err := a.candidate(ctx, d, state, res, c)
		if err != nil {
			return err
		}
		var next []*fusion
		for _, m := range alone {
			next = append(next, &fusion{members: []*Submission{m}})
		}
		queue = append(next, queue...)
	}
	return nil
}

// measureAndPromote scores dev and stable on validation after the round's
// merges and applies the promotion rule, keeping the scores in state.
func (a *Aggregator) measureAndPromote(ctx context.Context, state *ledger.State, res *RoundResult) error {
	stable, err := a.Repo.ResolveRef(ctx, a.refs.Stable())
	if err != nil {
		return err
	}
	if res.DevScore, err = a.scoreTree(ctx, res.Dev, a.Validation); err != nil {
		return err
	}
	if res.Stable, err = a.scoreTree(ctx, stable, a.Validation); err != nil {
		return err
	}
	state.Dev, state.Stable = res.Dev, stable
	err = a.promote(ctx, state, stable, res)
	state.DevScore, state.StableScore = res.DevScore, res.Stable
	return err
}

// candidate merges c's members onto the current dev (reusing c when it was
// built on it), runs the oracle when they touch L1 files, gates the result,
// and commits it when accepted. A fusion of several that the gate rejects
// is not decided: its members are returned, to be gated alone.
func (a *Aggregator) candidate(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, c *fusion) ([]*Submission, error) {
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
		return members, nil
	}
	wctx := context.WithoutCancel(ctx)
	if v.Merge, err = a.commit(wctx, d, state, dev, f, v.Gate, v.Oracle); err != nil {
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
