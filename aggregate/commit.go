package aggregate

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// record writes what the round has decided that the journal does not hold
// yet, with state and the run's spending since the last record, and the
// ref moves those decisions make, as one transaction (ledger.Journal.Record).
// A merge into dev is recorded this way the moment it is made, so dev never
// holds a proposal the journal does not say was committed. Only a round
// records (a.live is its journal).
func (a *Aggregator) record(ctx context.Context, d *decider, state ledger.State, message string, moves ...ledger.Move) error {
	a.jmu.Lock()
	defer a.jmu.Unlock()
	tokens, cost := a.Meter.Total()
	unpriced := a.Meter.Unpriced()
	live := a.live
	last := live.head.State
	state.Tokens = last.Tokens + tokens - a.recorded.tokens
	state.Cost = last.Cost + cost - a.recorded.cost
	state.Unpriced = last.Unpriced + unpriced - a.recorded.unpriced
	state.Refile = append(slices.Clone(live.held), state.Refile...)
	fresh := d.unwritten()
	head, err := a.journal.Record(ctx, live.head, ledger.Entry{State: state, Decisions: fresh, Message: message, Moves: moves})
	if err != nil {
		return err
	}
	live.head = head
	for _, dec := range fresh {
		d.written[dec.ID] = dec
		if !dec.Proposal.IsZero() && a.decided != nil {
			a.decided[dec.Proposal] = true
		}
	}
	a.recorded.tokens, a.recorded.cost, a.recorded.unpriced = tokens, cost, unpriced
	return nil
}

// lostRef reports whether err is a compare-and-swap lost on ref.
func lostRef(err error, ref string) bool {
	var lost *git.RefChangedError
	return errors.As(err, &lost) && lost.Ref == ref
}

// movedOutside reports dev or stable moved by something other than
// git-descent (a *ledger.MovedError), or the error reading the journal;
// nil when both are where the journal left them.
func (a *Aggregator) movedOutside(ctx context.Context) error {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return err
	}
	return ledger.CheckHeads(ctx, a.Repo, a.Library.Name, head)
}

// commit records the gate's verdict on every member of a candidate and,
// when it accepted, merges them into dev as one commit, recorded in the
// journal with their decisions in the same transaction. It returns the
// merge commit, or zero when the gate rejected; a *ledger.MovedError, with
// nothing decided, when something other than git-descent moved dev since it
// was read. A
// rejected single proposal whose evidence is promising is recorded as such
// and kept for pooling; a rejected fusion of several is left undecided for
// its members to be gated alone (solos).
func (a *Aggregator) commit(ctx context.Context, d *decider, state *ledger.State, dev git.Hash, cand *fusion, g *ledger.Gate, oracle string) (git.Hash, error) {
	if !g.Accept {
		for _, dec := range a.verdicts(d, cand, g, oracle, "") {
			d.add(dec)
		}
		return "", nil
	}
	merge, err := a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: cand.tree, Parents: mergeParents(dev, cand.members), Message: mergeCard(a.Library.Name, state.Round, cand.members, g).Message()})
	if err != nil {
		return "", err
	}
	next := *state
	next.Commits++
	if len(cand.members) > 1 {
		next.Fusion.Fused++
	}
	saved := d.save()
	for _, dec := range a.verdicts(d, cand, g, oracle, merge) {
		d.add(dec)
	}
	msg := fmt.Sprintf("descent(%s): round %d: merge %s into dev\n", a.Library.Name, state.Round, merge.Short())
	err = a.record(ctx, d, d.checkpoint(next), msg, ledger.Move{Ref: a.refs.Dev(), From: dev, To: merge})
	if err != nil {
		d.restore(saved)
		if lostRef(err, a.refs.Dev()) {
			if moved := a.movedOutside(ctx); moved != nil {
				return "", moved
			}
		}
		return "", err
	}
	*state = next
	if a.OnCommit != nil {
		a.OnCommit(merge)
	}
	return merge, nil
}

// mergeParents is the parents of the dev commit that merges members into
// dev: dev first, then each member's proposal.
func mergeParents(dev git.Hash, members []*Submission) []git.Hash {
	parents := []git.Hash{dev}
	for _, m := range members {
		parents = append(parents, m.Proposal.Commit)
	}
	return parents
}

// verdicts are the decisions on a candidate's members: committed as merge
// when the gate accepted, else rejected or promising.
func (a *Aggregator) verdicts(d *decider, cand *fusion, g *ledger.Gate, oracle string, merge git.Hash) []ledger.Decision {
	var out []ledger.Decision
	for _, m := range cand.members {
		dec := d.decision(m, ledger.Rejected, accept.RejectReason(g))
		switch {
		case g.Accept:
			dec = d.decision(m, ledger.Committed, fmt.Sprintf("merged into dev as %s", merge.Short()))
			dec.Merge = merge
		case len(cand.members) == 1 && accept.Promising(g):
			dec = d.decision(m, ledger.Promising, fmt.Sprintf("better with P=%.2f, not yet above %.2f: kept to be pooled with later promising proposals", g.P, 1-g.Delta))
			d.promising = append(d.promising, ledger.Pending{Proposal: m.Proposal.Commit, Since: d.round, P: g.P, Won: g.Won})
		}
		dec.Gate, dec.Oracle = g, oracle
		for _, o := range cand.members {
			if o != m {
				dec.FusedWith = append(dec.FusedWith, o.Proposal.Commit)
			}
		}
		out = append(out, dec)
	}
	return out
}

// mergeCard is the evidence on the merge commit of a candidate.
func mergeCard(lib string, round int, members []*Submission, g *ledger.Gate) ledger.MergeCard {
	c := ledger.MergeCard{Library: lib, Round: round, Gate: g}
	for _, m := range members {
		c.Proposals = append(c.Proposals, m.Proposal)
	}
	return c
}
