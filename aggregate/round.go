package aggregate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/sandbox"
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
//     fusion the gate rejects is broken up and its members gated alone.
//     Up to Gates candidates are evaluated at once against the same dev
//     and decided in order; those accepted on a dev that has since moved
//     are fused and gated again on the new one;
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
	head, end, err := a.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := ledger.CheckHeads(ctx, a.Repo, a.Library.Name, head); err != nil {
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
	if subs, err = a.undecided(ctx, subs); err != nil {
		return nil, err
	}
	refiled = given(refiled, subs)
	subs = distinct(append(append([]*Submission(nil), refiled...), subs...))
	res := &RoundResult{Round: state.Round, Dev: dev}
	d, err := newDecider(ctx, a, state.Round, dev, subs, attempts)
	if err != nil {
		return nil, err
	}
	d.refiled, d.waiting = refiled, state.Promising
	for i := range others {
		others[i].Round = state.Round
		d.add(others[i])
	}

	began := time.Now()
	stopped := a.decide(ctx, d, &state, res, subs)
	decided := time.Since(began)
	if stopped == nil {
		d.waiting, stopped = a.pool(ctx, d, &state, res, d.waiting)
		d.promising = nil
	}
	if stopped != nil && !errors.Is(stopped, context.Canceled) && !errors.Is(stopped, context.DeadlineExceeded) {
		return nil, stopped
	}
	pooled := time.Since(began)
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
	measured := time.Since(began)
	if err := a.recordRound(context.WithoutCancel(ctx), d, state, res, promo); err != nil {
		return nil, fmt.Errorf("record round %d of %s: %w (another git-descent may be running on this library)", state.Round, a.Library.Name, err)
	}
	a.Log.Debug("round timings in seconds", "round", state.Round, "decide", decided.Seconds(), "pool", (pooled - decided).Seconds(),
		"measure", (measured - pooled).Seconds(), "record", (time.Since(began) - measured).Seconds())
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
	if moved := a.movedOutside(ctx); moved != nil {
		return moved
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
	var queue []*fusion
	if len(cand.members) > 0 {
		cand.rank = len(cand.members) > 1
		queue = append(queue, cand)
	}
	queue = append(queue, singles(solos)...)
	for len(queue) > 0 {
		batch := a.speculate(queue)
		queue = queue[len(batch):]
		evals := a.evaluateAll(ctx, res.Dev, batch, state.Commits, maps.Clone(a.refused))
		var front []*fusion
		var again []*Submission
		for _, e := range evals {
			switch {
			case e.dev == res.Dev || e.rejectedAlone():
				next, err := a.apply(ctx, d, state, res, e)
				if err != nil {
					return err
				}
				front = append(front, next...)
			case e.accepted() && !a.touchesGuarded(e.queued.members):
				// Accepted, but an earlier candidate of the batch moved dev:
				// those are gated again on the new dev, fused into one
				// candidate (one commit rather than one each).
				again = append(again, e.queued.members...)
			default:
				// What it found on the old dev does not say what it does
				// on the new.
				front = append(front, e.queued)
			}
		}
		if len(again) > 0 {
			front = append([]*fusion{{members: again}}, front...)
		}
		queue = append(front, queue...)
	}
	return nil
}

// speculate returns the candidates at the head of the queue to evaluate at
// once: up to Gates of them, stopping before one that changes guarded (L1)
// files, which is evaluated alone (its oracle runs one at a time).
func (a *Aggregator) speculate(queue []*fusion) []*fusion {
	n := max(a.Gates, 1)
	for i, c := range queue {
		if i == n {
			return queue[:i]
		}
		if a.touchesGuarded(c.members) {
			return queue[:max(i, 1)]
		}
	}
	return queue
}

// evaluation is what one candidate was found to be on one dev: built on it
// (or in conflict with it), through the oracle when it touches L1 files,
// and gated.
type evaluation struct {
	queued   *fusion // the candidate as queued
	dev      git.Hash
	f        *fusion // built on dev
	conflict *MemberConflictError
	rank     *ranking // the fusion against its members alone, when queued.rank
	v        Verdict
	err      error
	// refused is the earlier rejection of the very same change against
	// this dev: the candidate is rejected again without a gate.
	refused *refusal
}

// rejectedAlone says whether the gate rejected a single proposal: a
// decision that stands on the dev it was made against, even once an
// earlier candidate has moved dev (beating the better dev is harder).
func (e evaluation) rejectedAlone() bool {
	return e.err == nil && (e.refused != nil || e.v.Gate != nil && !e.v.Gate.Accept && len(e.v.Members) == 1)
}

// accepted says whether the gate accepted the candidate.
func (e evaluation) accepted() bool {
	return e.err == nil && e.v.Gate != nil && e.v.Gate.Accept
}

// evaluateAll evaluates candidates on dev in parallel (each gate's rollouts
// share the evaluator's limit with everything else) and returns the
// evaluations in the candidates' order.
func (a *Aggregator) evaluateAll(ctx context.Context, dev git.Hash, cs []*fusion, commits int, refused map[refusedKey]refusal) []evaluation {
	out := make([]evaluation, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = a.evaluate(ctx, dev, c, commits, refused)
		}()
	}
	wg.Wait()
	return out
}

// refusedKey is a change against a dev: the candidate's tree on it.
type refusedKey struct{ dev, tree git.Hash }

// refusal is the rejection a refusedKey recalls.
type refusal struct {
	proposal git.Hash
	round    int
}

// refuse remembers a change the gate rejected alone against dev, so that
// the same change proposed again on that dev (by another worker, in other
// words) is rejected without a gate: the same tasks, the same cached
// rollouts, the same verdict. Not a verdict that rested on rollouts that
// could not run (an outage is not the change's fault), nor one judged
// cross-fitted (another proposer's minibatch leaves other tasks out). The
// memory lasts the run: a later run may have changed the agent or the gate.
func (a *Aggregator) refuse(dev, tree git.Hash, g *ledger.Gate, proposal git.Hash, round int) {
	if g.Errored > 0 || a.CrossFit {
		return
	}
	if a.refused == nil {
		a.refused = map[refusedKey]refusal{}
	}
	a.refused[refusedKey{dev, tree}] = refusal{proposal: proposal, round: round}
}

// evaluate merges c's members onto dev (reusing c when it was built on
// it), runs the oracle when they touch L1 files, and gates the result. It
// decides nothing: apply does, in the candidates' order.
func (a *Aggregator) evaluate(ctx context.Context, dev git.Hash, c *fusion, commits int, refused map[refusedKey]refusal) evaluation {
	e := evaluation{queued: c, dev: dev, f: c, v: Verdict{Members: c.members}}
	if c.dev != dev {
		e.f, e.err = a.build(ctx, dev, c.members)
	}
	if errors.As(e.err, &e.conflict) {
		e.err = nil
		return e
	}
	if e.err != nil || e.f.tree == e.f.base {
		return e
	}
	if r, ok := refused[refusedKey{dev, e.f.tree}]; ok && len(c.members) == 1 {
		e.refused = &r
		return e
	}
	if a.touchesGuarded(c.members) {
		if e.v.Oracle, e.err = a.checkOracle(ctx, e.f); e.err != nil || e.v.Oracle != oraclePassed {
			return e
		}
	}
	rest, done := a.warmRest(ctx, e.f)
	spec, closed := a.warmNext(ctx, dev, e.f)
	if c.rank {
		e.rank, e.v.Gate, e.err = a.gateRanked(ctx, dev, e.f, commits)
	} else {
		e.v.Gate, e.err = a.gate(ctx, dev, e.f, commits)
	}
	closed()
	if !e.accepted() {
		rest()
		spec()
	}
	done()
	return e
}

// gateRanked gates fusion f, built on dev, while rank scores it against
// its members alone, in the same wave of rollouts rather than one after
// the other. When a member alone beats the fusion, the gate is cancelled
// and returns nil: apply sends the best member on alone.
func (a *Aggregator) gateRanked(ctx context.Context, dev git.Hash, f *fusion, commits int) (*ranking, *ledger.Gate, error) {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type ranked struct {
		r   *ranking
		err error
	}
	done := make(chan ranked, 1)
	go func() {
		r, err := a.rank(ctx, dev, f)
		if err == nil && r.split() {
			cancel()
		}
		done <- ranked{r, err}
	}()
	g, err := a.gate(gctx, dev, f, commits)
	rk := <-done
	switch {
	case rk.err != nil:
		return nil, nil, rk.err
	case rk.r.split():
		return rk.r, nil, nil
	}
	return rk.r, g, err
}

// warmRest rolls the candidate out, while its gate runs, on the validation
// tasks the gate leaves out (cross-fitted: its members' own), which dev's
// score needs the moment it is committed: a wave of rollouts after the
// commit saved. The rollouts only measure; no decision rests on them. stop
// cancels them (the gate rejected); done waits for them to end.
func (a *Aggregator) warmRest(ctx context.Context, f *fusion) (stop, done func()) {
	_, rest := a.splitValidation(f.members)
	ctx, stop = context.WithCancel(sandbox.WithPriority(ctx, sandbox.Speculative))
	if len(rest) == 0 {
		return stop, stop
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = a.scoreTree(ctx, f.tree, rest)
	}()
	return stop, func() {
		<-ended
		stop()
	}
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
	moved := state.Dev != res.Dev
	state.Dev, state.Stable = res.Dev, stable
	state.DevScore, state.StableScore = res.DevScore, res.Stable
	return a.promote(ctx, state, stable, res, moved)
}

// apply decides an evaluated candidate and commits it when accepted. It
// returns the candidates to evaluate next: a fusion of several that the gate
// rejects is not decided, its members are evaluated alone.
func (a *Aggregator) apply(ctx context.Context, d *decider, state *ledger.State, res *RoundResult, e evaluation) ([]*fusion, error) {
	members, f, v := e.queued.members, e.f, e.v
	switch {
	case e.err != nil:
		return nil, e.err
	case e.conflict != nil && len(members) > 1:
		// Its members do not all merge together onto this dev: each is
		// evaluated alone.
		return singles(members), nil
	case e.conflict != nil:
		// An earlier candidate this round took its place.
		for _, m := range members {
			d.add(d.decision(m, ledger.ConflictDev, fmt.Sprintf("does not merge onto dev %s after this round's earlier merge: conflict in %v", e.dev.Short(), e.conflict.Paths)))
		}
		return nil, nil
	case f.tree == f.base:
		for _, m := range members {
			d.add(d.decision(m, ledger.Duplicate, "dev already makes this change"))
		}
		return nil, nil
	case e.rank != nil && e.rank.split():
		// Its members contradict each other: the best goes on alone.
		return []*fusion{a.ranked(d, state, e.rank, members)}, nil
	case e.refused != nil:
		r := e.refused
		for _, m := range members {
			d.add(d.decision(m, ledger.Rejected, fmt.Sprintf("the same change was rejected against dev %s in round %d (proposal %s): not gated again", e.dev.Short(), r.round, r.proposal.Short())))
		}
		return nil, nil
	case v.Gate == nil:
		res.Verdicts = append(res.Verdicts, v)
		for _, m := range members {
			dec := d.decision(m, ledger.OracleVeto, "changes guarded (L1) files and "+v.Oracle)
			dec.Oracle = v.Oracle
			d.add(dec)
		}
		return nil, nil
	}
	if e.rank != nil {
		a.ranked(d, state, e.rank, members) // the fusion stands: the contest counts
	}
	d.gated[f.tree] = true
	if !v.Gate.Accept && len(members) > 1 {
		res.Verdicts = append(res.Verdicts, v)
		return singles(members), nil
	}
	var err error
	v.Merge, err = a.commit(context.WithoutCancel(ctx), d, state, e.dev, f, v.Gate, v.Oracle)
	if err != nil {
		return nil, err
	}
	if !v.Gate.Accept && len(members) == 1 && !accept.Promising(v.Gate) {
		a.refuse(e.dev, f.tree, v.Gate, members[0].Proposal.Commit, d.round)
	}
	if !v.Merge.IsZero() {
		res.Dev = v.Merge
	}
	res.Verdicts = append(res.Verdicts, v)
	return nil, nil
}

// undecided drops the fresh submissions the journal already holds a
// decision on: a worker that makes the very proposal (the same edit on the
// same dev, so the same commit) an earlier run made and had decided. Each
// proposal is decided once; re-filed ones come back through the queue.
func (a *Aggregator) undecided(ctx context.Context, subs []*Submission) ([]*Submission, error) {
	a.jmu.Lock()
	defer a.jmu.Unlock()
	return a.undecidedLocked(ctx, subs)
}

// undecidedLocked is undecided with jmu held.
func (a *Aggregator) undecidedLocked(ctx context.Context, subs []*Submission) ([]*Submission, error) {
	if a.decided == nil {
		ds, err := a.journal.Decisions(ctx)
		if err != nil {
			return nil, err
		}
		a.decided = map[git.Hash]bool{}
		for _, d := range ds {
			if !d.Proposal.IsZero() {
				a.decided[d.Proposal] = true
			}
		}
	}
	var out []*Submission
	for _, s := range subs {
		if a.decided[s.Proposal.Commit] {
			a.Log.Debug("proposal already decided; not deciding it again", "proposal", s.Proposal.Commit.Short(), "worker", s.Proposal.Worker)
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// singles makes each submission a candidate of its own.
func singles(subs []*Submission) []*fusion {
	out := make([]*fusion, len(subs))
	for i, s := range subs {
		out[i] = &fusion{members: []*Submission{s}}
	}
	return out
}

// distinct keeps the first submission of each proposal commit.
func distinct(subs []*Submission) []*Submission {
	seen := map[git.Hash]bool{}
	var out []*Submission
	for _, s := range subs {
		if !seen[s.Proposal.Commit] {
			seen[s.Proposal.Commit] = true
			out = append(out, s)
		}
	}
	return out
}

// given returns the re-filed submissions with those the caller also
// handed in (held for this round, Aggregator.Hold) in their place: the
// caller's carry what the commit does not, the worker's timings.
func given(refiled, subs []*Submission) []*Submission {
	out := slices.Clone(refiled)
	for i, r := range out {
		for _, s := range subs {
			if s.Proposal.Commit == r.Proposal.Commit {
				out[i] = s
			}
		}
	}
	return out
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
