package aggregate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/merge"
)

// ErrNotPromotable is a promotion the check refuses.
var ErrNotPromotable = errors.New("not promoted")

// ErrNothingToDo is a promotion, undo or rollback that would not move
// anything: stable already at dev, dev already at stable, no promotion to
// undo.
var ErrNothingToDo = errors.New("nothing to do")

// promote applies the promotion rule to scores already measured this round
// (res.DevScore, res.Stable). The clock counts the rounds dev has held up
// since it last moved, the round that moved it (moved) being the first: a
// round where dev scores below stable is a regression and stops it; once
// it reaches Library.PromoteAfter, stable is fast-forwarded to dev when dev
// is at least as good and stable is its ancestor (stable never moves any
// other way). It returns the promotion, for the round to record.
func (a *Aggregator) promote(ctx context.Context, state *ledger.State, stable git.Hash, res *RoundResult, moved bool) (*promotion, error) {
	if moved {
		state.CleanRounds = 0
	}
	if res.DevScore < res.Stable {
		res.Regressed = true
		state.CleanRounds = 0
		return nil, nil
	}
	state.CleanRounds++
	if state.CleanRounds < a.Library.PromoteAfter || stable == res.Dev || undone(state.Promotions, res.Dev) {
		return nil, nil
	}
	ok, err := a.Repo.IsAncestor(ctx, stable, res.Dev)
	if err != nil {
		return nil, err
	}
	if !ok {
		a.Log.Warn("stable is not an ancestor of dev; not promoting", "stable", stable.Short(), "dev", res.Dev.Short())
		return nil, nil
	}
	p, err := a.fastForward(ctx, state.Round, stable, res.Dev, res.Stable, res.DevScore, false)
	if err != nil {
		return nil, err
	}
	res.Promotion = &p.Promotion
	res.Stable = res.DevScore
	return p, nil
}

// undone reports whether the user undid a promotion to dev: rounds do not
// promote to that dev again, from wherever stable now is, until dev moves
// on (git descent promote still can).
func undone(ps []ledger.Promotion, dev git.Hash) bool {
	for _, p := range ps {
		if p.UndoneIn > 0 && p.To == dev {
			return true
		}
	}
	return false
}

// promotion is a fast-forward of stable to dev, measured and not yet
// recorded: its record and the move of stable are one transaction.
type promotion struct {
	ledger.Promotion
	move ledger.Move
}

// apply returns state as it stands once the promotion is recorded.
func (p *promotion) apply(s ledger.State) ledger.State {
	s.Promotions = append(slices.Clone(s.Promotions), p.Promotion)
	s.CleanRounds = 0
	s.Stable, s.StableScore = p.To, p.Dev
	return s
}

// fastForward prepares moving stable to dev, with both versions' scores on
// the sealed test split for the report.
func (a *Aggregator) fastForward(ctx context.Context, round int, stable, dev git.Hash, stableScore, devScore float64, forced bool) (*promotion, error) {
	p := ledger.Promotion{Round: round, From: stable, To: dev, Stable: stableScore, Dev: devScore, Forced: forced}
	if len(a.Test) > 0 {
		st, err := a.scoreTree(ctx, stable, a.Test)
		if err != nil {
			return nil, err
		}
		dt, err := a.scoreTree(ctx, dev, a.Test)
		if err != nil {
			return nil, err
		}
		p.StableTest, p.DevTest = &st, &dt
	}
	return &promotion{Promotion: p, move: ledger.Move{Ref: a.refs.Stable(), From: stable, To: dev}}, nil
}

// Promote fast-forwards stable to dev now, with the check a round applies:
// stable must be an ancestor of dev, and dev at least as good on
// validation. With force the score check is skipped and the promotion is
// recorded as forced; a non-fast-forward is refused either way.
func (a *Aggregator) Promote(ctx context.Context, force bool) (*ledger.Promotion, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	dev, stable, err := a.heads(ctx)
	if err != nil {
		return nil, err
	}
	if dev == stable {
		return nil, fmt.Errorf("%w: stable is already at dev (%s)", ErrNothingToDo, dev.Short())
	}
	if ok, err := a.Repo.IsAncestor(ctx, stable, dev); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: stable %s is not an ancestor of dev %s, so stable cannot fast-forward (roll dev back with git descent rollback, or reset stable yourself)", ErrNotPromotable, stable.Short(), dev.Short())
	}
	devScore, err := a.scoreTree(ctx, dev, a.Validation)
	if err != nil {
		return nil, err
	}
	stableScore, err := a.scoreTree(ctx, stable, a.Validation)
	if err != nil {
		return nil, err
	}
	if devScore < stableScore && !force {
		return nil, fmt.Errorf("%w: dev scores %.2f on validation, below stable's %.2f (use --force to promote anyway; it is recorded)", ErrNotPromotable, devScore, stableScore)
	}
	p, err := a.fastForward(ctx, head.State.Round, stable, dev, stableScore, devScore, force)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("descent(%s): promote stable to %s\n", a.Library.Name, dev.Short())
	if force {
		msg = fmt.Sprintf("descent(%s): promote stable to %s (forced)\n", a.Library.Name, dev.Short())
	}
	_, err = a.journal.Record(context.WithoutCancel(ctx), head, ledger.Entry{State: p.apply(head.State), Message: msg, Moves: []ledger.Move{p.move}})
	if lostRef(err, a.refs.Stable()) {
		return nil, fmt.Errorf("%w: stable moved while checking; try again", ErrNotPromotable)
	}
	if err != nil {
		return nil, err
	}
	return &p.Promotion, nil
}

// Undo moves stable back to where the latest promotion that stands found
// it, recorded in the journal in the same transaction. Stable must still be
// where that promotion put it. The promotion is marked undone, so rounds do
// not make it again until dev moves on. It returns the undone promotion.
func (a *Aggregator) Undo(ctx context.Context) (*ledger.Promotion, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	_, stable, err := a.heads(ctx)
	if err != nil {
		return nil, err
	}
	state := head.State
	state.Promotions = slices.Clone(state.Promotions)
	i := len(state.Promotions) - 1
	for i >= 0 && state.Promotions[i].UndoneIn > 0 {
		i--
	}
	if i < 0 {
		return nil, fmt.Errorf("%w: no promotion to undo", ErrNothingToDo)
	}
	p := &state.Promotions[i]
	if p.To != stable {
		return nil, fmt.Errorf("stable is at %s, not at %s where the last promotion put it; move it yourself (git update-ref) and run git descent keep", stable.Short(), p.To.Short())
	}
	p.UndoneIn = max(state.Round, 1)
	state.Stable, state.StableScore = p.From, p.Stable
	msg := fmt.Sprintf("descent(%s): undo the promotion of round %d: stable back from %s to %s\n", a.Library.Name, p.Round, p.To.Short(), p.From.Short())
	e := ledger.Entry{State: state, Message: msg, Moves: []ledger.Move{{Ref: a.refs.Stable(), From: p.To, To: p.From}}}
	if _, err := a.journal.Record(context.WithoutCancel(ctx), head, e); err != nil {
		return nil, err
	}
	undone := *p
	return &undone, nil
}

// Rollback resets dev to stable, recorded in the journal in the same
// transaction; the journal commit keeps the old dev reachable. Proposals
// merged since stable are not lost: they stay in the journal and can be
// merged by hand.
func (a *Aggregator) Rollback(ctx context.Context) (*ledger.Rollback, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	dev, stable, err := a.heads(ctx)
	if err != nil {
		return nil, err
	}
	if dev == stable {
		return nil, fmt.Errorf("%w: dev is already at stable (%s)", ErrNothingToDo, dev.Short())
	}
	state := head.State
	rb := ledger.Rollback{Round: state.Round, From: dev, To: stable}
	state.Rollbacks = append(state.Rollbacks, rb)
	state.Dev, state.DevScore, state.CleanRounds = stable, state.StableScore, 0
	msg := fmt.Sprintf("descent(%s): roll dev back from %s to stable %s\n", a.Library.Name, dev.Short(), stable.Short())
	e := ledger.Entry{State: state, Message: msg, Moves: []ledger.Move{{Ref: a.refs.Dev(), From: dev, To: stable}}, Keep: []git.Hash{dev}}
	if _, err := a.journal.Record(context.WithoutCancel(ctx), head, e); err != nil {
		return nil, err
	}
	return &rb, nil
}

// heads reads dev and stable, which must be where the journal left them.
func (a *Aggregator) heads(ctx context.Context) (dev, stable git.Hash, err error) {
	if err := a.movedOutside(ctx); err != nil {
		return "", "", err
	}
	if dev, err = a.Repo.ResolveRef(ctx, a.refs.Dev()); err != nil {
		return "", "", err
	}
	stable, err = a.Repo.ResolveRef(ctx, a.refs.Stable())
	return dev, stable, err
}

// Sync merges rev (the user's branch, typically) into dev through the
// library's merge driver, as a merge commit recorded in the journal in the
// same transaction: changes made outside git-descent reach dev without a
// gate, since they are the user's. It refuses a merge that conflicts,
// naming the files and how to merge by hand.
func (a *Aggregator) Sync(ctx context.Context, rev git.Hash) (*ledger.Sync, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	dev, _, err := a.heads(ctx)
	if err != nil {
		return nil, err
	}
	if ok, err := a.Repo.IsAncestor(ctx, rev, dev); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: dev already has %s", ErrNothingToDo, rev.Short())
	}
	tree, err := a.Repo.MergeTree(ctx, merge.TreeRequest(dev, rev))
	var conflict *git.MergeConflictError
	if errors.As(err, &conflict) {
		return nil, fmt.Errorf("%s does not merge into dev %s: conflict in %s; merge by hand and record it:\n  git checkout -b descent-sync %s && git merge %s\n  (resolve, commit) && git update-ref %s descent-sync %s && git descent keep %s",
			rev.Short(), dev.Short(), strings.Join(conflict.Paths, ", "), a.refs.Dev(), rev.Short(), a.refs.Dev(), dev.Short(), a.Library.Name)
	}
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("descent(%s): sync %s into dev\n\nMerges the changes made outside git-descent up to %s (git descent sync).\n\nDescent-Library: %s\nDescent-Sync: %s\n",
		a.Library.Name, rev.Short(), rev, a.Library.Name, rev)
	c, err := a.Repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: []git.Hash{dev, rev}, Message: msg})
	if err != nil {
		return nil, err
	}
	state := head.State
	s := ledger.Sync{Round: state.Round, From: dev, To: c, Rev: rev}
	state.Syncs = append(slices.Clone(state.Syncs), s)
	state.CleanRounds = 0 // dev moved; its score is measured by the next round
	e := ledger.Entry{State: state, Message: fmt.Sprintf("descent(%s): sync %s into dev as %s\n", a.Library.Name, rev.Short(), c.Short()),
		Moves: []ledger.Move{{Ref: a.refs.Dev(), From: dev, To: c}}}
	if _, err := a.journal.Record(context.WithoutCancel(ctx), head, e); err != nil {
		return nil, err
	}
	return &s, nil
}
