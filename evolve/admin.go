package evolve

import (
	"context"
	"errors"

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
	r, err := adminRunner(ctx, repo, lib, opts, true)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.agg.Promote(ctx, force)
}

// Undo moves a library's stable back to where its latest standing
// promotion found it, recorded in the journal.
func Undo(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*ledger.Promotion, error) {
	r, err := adminRunner(ctx, repo, lib, opts, true)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.agg.Undo(ctx)
}

// Sync merges rev into a library's dev through its merge driver, recorded
// in the journal.
func Sync(ctx context.Context, repo *git.Repo, lib *library.Library, rev git.Hash, opts Options) (*ledger.Sync, error) {
	r, err := adminRunner(ctx, repo, lib, opts, true)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.agg.Sync(ctx, rev)
}

// Rollback resets a library's dev to stable, recorded in the journal.
func Rollback(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options) (*ledger.Rollback, error) {
	r, err := adminRunner(ctx, repo, lib, opts, true)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.agg.Rollback(ctx)
}

// adminRunner sets up what promote, rollback and eval need: the lock, the
// splits, the isolation level, the evaluator and the aggregator; no seats.
// With needDev the library must have been evolved.
func adminRunner(ctx context.Context, repo *git.Repo, lib *library.Library, opts Options, needDev bool) (*runner, error) {
	opts = withDefaults(opts)
	r := &runner{repo: repo, lib: lib, opts: opts, refs: ledger.Refs{Library: lib.Name}, meter: budget.NewMeter(0, 0, nil), models: newModels(lib)}
	r.summary = &Summary{Library: lib.Name, Outcomes: map[ledger.Outcome]int{}, Tasks: map[string]int{}}
	var err error
	if r.lock, err = lockLibrary(repo.DescentDir(), lib.Name); err != nil {
		return nil, err
	}
	fail := func(err error) (*runner, error) {
		r.close()
		return nil, err
	}
	if _, err := repo.ResolveRef(ctx, r.refs.Dev()); err != nil && (needDev || !errors.Is(err, git.ErrRefNotFound)) {
		return fail(err)
	}
	if err := validate(lib); err != nil {
		return fail(err)
	}
	if r.splits, err = loadSplits(repo, lib); err != nil {
		return fail(err)
	}
	if err := r.isolate(); err != nil {
		return fail(err)
	}
	if err := r.newAggregator(ctx); err != nil {
		return fail(err)
	}
	return r, nil
}
