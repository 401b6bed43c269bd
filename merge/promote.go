package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// ErrNotPromotable is a promotion the check refuses.
var ErrNotPromotable = errors.New("not promoted")

// promote applies the promotion rule to scores already measured this round
// (res.DevScore, res.Stable). A round where dev scores below stable is a
// regression and restarts the clock; after Library.PromoteAfter clean
// rounds, stable is fast-forwarded to dev when dev is at least as good and
// stable is its ancestor (stable never moves any other way).
func (a *Aggregator) promote(ctx context.Context, state *ledger.State, stable git.Hash, res *RoundResult) error {
	if res.DevScore < res.Stable {
		res.Regressed = true
		state.CleanRounds = 0
		return nil
	}
	state.CleanRounds++
	if state.CleanRounds < a.Library.PromoteAfter || stable == res.Dev {
		return nil
	}
	ok, err := a.Repo.IsAncestor(ctx, stable, res.Dev)
	if err != nil {
		return err
	}
	if !ok {
		a.Log.Warn("stable is not an ancestor of dev; not promoting", "stable", stable.Short(), "dev", res.Dev.Short())
		return nil
	}
	p, err := a.fastForward(ctx, state, stable, res.Dev, res.Stable, res.DevScore, false)
	if err != nil || p == nil {
		return err
	}
	res.Promotion = p
	res.Stable = res.DevScore
	return nil
}

// fastForward moves stable to dev (compare-and-swap) and records the
// promotion in state, with both versions' scores on the sealed test split
// for the report. It returns nil when someone moved stable meanwhile.
func (a *Aggregator) fastForward(ctx context.Context, state *ledger.State, stable, dev git.Hash, stableScore, devScore float64, forced bool) (*ledger.Promotion, error) {
	p := ledger.Promotion{Round: state.Round, From: stable, To: dev, Stable: stableScore, Dev: devScore, Forced: forced}
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
	reason := fmt.Sprintf("git-descent: promote round %d", state.Round)
	if forced {
		reason += " (forced)"
	}
	err := a.Repo.SetRef(context.WithoutCancel(ctx), git.SetRefRequest{Ref: a.refs.Stable(), Hash: dev, OldHash: stable, Reason: reason})
	var lost *git.RefChangedError
	if errors.As(err, &lost) {
		// Someone moved stable since it was read: theirs stands.
		a.Log.Warn("stable moved meanwhile; not promoting", "ref", a.refs.Stable())
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	state.Promotions = append(state.Promotions, p)
	state.CleanRounds = 0
	state.Stable, state.StableScore = dev, devScore
	return &p, nil
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
		return nil, fmt.Errorf("%w: stable is already at dev (%s)", ErrNotPromotable, dev.Short())
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
	state := head.State
	p, err := a.fastForward(ctx, &state, stable, dev, stableScore, devScore, force)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("%w: stable moved while checking; try again", ErrNotPromotable)
	}
	msg := fmt.Sprintf("descent(%s): promote stable to %s\n", a.Library.Name, dev.Short())
	if _, err := a.journal.Record(context.WithoutCancel(ctx), head, state, nil, msg); err != nil {
		return nil, err
	}
	return p, nil
}

// Rollback resets dev to stable, recorded in the journal, whose commit keeps
// the old dev reachable. Proposals merged since stable are not lost: they
// stay in the journal and can be merged by hand.
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
		return nil, fmt.Errorf("dev is already at stable (%s): nothing to roll back", dev.Short())
	}
	wctx := context.WithoutCancel(ctx)
	if err := a.Repo.SetRef(wctx, git.SetRefRequest{Ref: a.refs.Dev(), Hash: stable, OldHash: dev, Reason: "git-descent: rollback to stable"}); err != nil {
		return nil, err
	}
	state := head.State
	rb := ledger.Rollback{Round: state.Round, From: dev, To: stable}
	state.Rollbacks = append(state.Rollbacks, rb)
	state.Dev, state.DevScore, state.CleanRounds = stable, state.StableScore, 0
	msg := fmt.Sprintf("descent(%s): roll dev back from %s to stable %s\n", a.Library.Name, dev.Short(), stable.Short())
	if _, err := a.journal.Record(wctx, head, state, nil, msg, dev); err != nil {
		return nil, err
	}
	return &rb, nil
}

// heads reads dev and stable.
func (a *Aggregator) heads(ctx context.Context) (dev, stable git.Hash, err error) {
	if dev, err = a.Repo.ResolveRef(ctx, a.refs.Dev()); err != nil {
		return "", "", err
	}
	stable, err = a.Repo.ResolveRef(ctx, a.refs.Stable())
	return dev, stable, err
}
