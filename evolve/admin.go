package evolve

import (
	"context"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Promote fast-forwards a library's stable to dev outside a run: with the
// check a round applies (dev at least as good on validation, stable its
// ancestor), or forced, which is recorded. It rolls out what the check
// needs (cached like any rollout) and holds the library's lock.
func Promote(ctx context.Context, repo *git.Repo, lib *library.Library, force bool, opts Options) (*ledger.Promotion, error) {
	r, err := adminRunner(ctx, repo, lib, opts)
	if err != nil {
		return nil, err
	}
	defer r.lock.release()
	return r.agg.Promote(ctx, force)
}

// Undo moves a library's stable back to where its latest standing
// promotion found it, recorded in the journal.
func Undo(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*ledger.Promotion, error) {
	r, err := adminRunner(ctx, repo, lib, opts)
	if err != nil {
		return nil, err
	}
	defer r.lock.release()
	return r.agg.Undo(ctx)
}

// Rollback resets a library's dev to stable, recorded in the journal.
func Rollback(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*ledger.Rollback, error) {
	r, err := adminRunner(ctx, repo, lib, opts)
	if err != nil {
		return nil, err
	}
	defer r.lock.release()
	return r.agg.Rollback(ctx)
}

// adminRunner sets up what promote and rollback need: the lock, the
// splits, the evaluator and the aggregator; no seats.
func adminRunner(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*runner, error) {
	opts = withDefaults(opts)
	r := &runner{repo: repo, lib: lib, opts: opts, refs: ledger.Refs{Library: lib.Name}, meter: budget.NewMeter(0, 0, nil), models: newModels(lib)}
	var err error
	if r.lock, err = lockLibrary(repo.DescentDir(), lib.Name); err != nil {
		return nil, err
	}
	fail := func(err error) (*runner, error) {
		r.lock.release()
		return nil, err
	}
	if _, err := repo.ResolveRef(ctx, r.refs.Dev()); err != nil {
		return fail(err)
	}
	if err := validate(lib); err != nil {
		return fail(err)
	}
	if r.splits, err = loadSplits(repo, lib); err != nil {
		return fail(err)
	}
	if err := r.newAggregator(ctx); err != nil {
		return fail(err)
	}
	return r, nil
}
