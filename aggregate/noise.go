package aggregate

import (
	"context"

	"github.com/git-descent/git-descent/accept"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Noise is the aggregator's current estimate of how reproducible the agent
// is, from every repeated rollout on validation seen in this run.
func (a *Aggregator) Noise() *ledger.Noise {
	pool, covered := a.obs.poolTasks(a.Validation)
	return accept.NoiseSummary(pool, covered)
}

// MeasureNoise rolls dev out once more (another repeat index) on up to n
// validation tasks that have a single result, so the gate knows how often
// the agent's outcome changes on a second try before the first candidate.
// It returns the estimate.
func (a *Aggregator) MeasureNoise(ctx context.Context, n int) (*ledger.Noise, error) {
	dev, err := a.Repo.ResolveRef(ctx, a.refs.Dev())
	if err != nil {
		return nil, err
	}
	lib, err := a.Repo.TreeOf(ctx, dev, a.Library.Path)
	if err != nil {
		return nil, err
	}
	if _, err := a.obs.ensure(ctx, lib, a.Validation); err != nil {
		return nil, err
	}
	sample := a.Validation[:min(n, len(a.Validation))]
	errs := make(chan error, len(sample))
	for _, t := range sample {
		go func() {
			_, _, _, err := a.obs.get(ctx, lib, t, 1)
			errs <- err
		}()
	}
	for range sample {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return nil, err
	}
	return a.Noise(), nil
}

// SmallestGain is how many validation tasks a candidate must fix (each
// confirmed in every repeat, nothing broken) for the gate to accept it now,
// given the noise seen so far and δ at its start; 0 means no gain could
// pass. n is the number of tasks a candidate is judged on.
func (a *Aggregator) SmallestGain(n int) int {
	lib := a.Library
	if lib.Gate == library.GateMean {
		return 1
	}
	return accept.SmallestGain(n, a.obs.pool(a.Validation), accept.Anneal(lib.Delta, lib.DeltaFloor, lib.HalfLife, 0), max(lib.MaxRepeats, lib.Repeats, 1))
}
