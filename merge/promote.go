package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

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
	err = a.Repo.SetRef(ctx, git.SetRefRequest{Ref: a.refs.Stable(), Hash: res.Dev, OldHash: stable, Reason: fmt.Sprintf("git-descent: promote round %d", state.Round)})
	var lost *git.RefChangedError
	if errors.As(err, &lost) {
		// Someone moved stable since this round read it: theirs stands.
		a.Log.Warn("stable moved during the round; not promoting", "ref", a.refs.Stable())
		return nil
	}
	if err != nil {
		return err
	}
	p := ledger.Promotion{Round: state.Round, From: stable, To: res.Dev, Stable: res.Stable, Dev: res.DevScore}
	state.Promotions = append(state.Promotions, p)
	state.CleanRounds = 0
	res.Promotion = &p
	res.Stable = res.DevScore
	return nil
}
