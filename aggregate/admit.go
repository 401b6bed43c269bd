package aggregate

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Repairer re-makes a stale or conflicting proposal on the current dev,
// shown what dev changed since the proposal's base. It returns the new
// proposal (its base is dev), or nil when the proposer declines because
// nothing is left to re-apply.
type Repairer interface {
	Repair(ctx context.Context, s *Submission, dev git.Hash) (*Submission, error)
}

// staleness measures η and α for a submission (see the staleness type).
func (a *Aggregator) staleness(ctx context.Context, s *Submission, dev git.Hash) (staleness, error) {
	lib := a.Library
	st := staleness{alpha: -1}
	for _, p := range s.Paths {
		n, err := a.Repo.CountCommits(ctx, s.Proposal.Base, dev, []string{lib.RepoPath(p)})
		if err != nil {
			return st, err
		}
		alpha := lib.Alpha
		if lib.LayerOf(p) == library.L1 {
			alpha = lib.AlphaL1
		}
		hot, err := a.hot(ctx, dev, lib.RepoPath(p))
		if err != nil {
			return st, err
		}
		if hot {
			alpha /= 2
		}
		st.eta = max(st.eta, n)
		if st.alpha < 0 || alpha < st.alpha {
			st.alpha = alpha
		}
	}
	st.alpha = max(st.alpha, 0)
	return st, nil
}

// hot reports whether dev's last ten commits changed path at least
// HotChanges times: a file that moves that often narrows α.
func (a *Aggregator) hot(ctx context.Context, dev git.Hash, path string) (bool, error) {
	if a.Library.HotChanges <= 0 {
		return false, nil
	}
	recent, err := a.Repo.FirstParents(ctx, dev, "", 11)
	if err != nil {
		return false, err
	}
	if len(recent) < 2 {
		return false, nil
	}
	n, err := a.Repo.CountCommits(ctx, recent[len(recent)-1], dev, []string{path})
	return n >= a.Library.HotChanges, err
}

// admit applies the trust region and the staleness policy and returns the
// submissions that go on, stale ones marked rebased (merged onto the
// current dev and re-verified by split).
func (a *Aggregator) admit(ctx context.Context, d *decider, state *ledger.State, dev git.Hash, subs []*Submission) ([]*Submission, error) {
	lib := a.Library
	var ready []*Submission
	for _, s := range subs {
		if reason, err := a.oversized(ctx, s); err != nil {
			return nil, err
		} else if reason != "" {
			d.add(d.decision(s, ledger.Oversized, reason))
			continue
		}
		st := d.eta[s]
		switch {
		case st.eta == 0 || lib.Staleness == library.StalenessFull:
			ready = append(ready, s)
		case lib.Staleness == library.StalenessReflective && a.Repairer != nil:
			fixed, err := a.repair(ctx, d, state, s, dev)
			if err != nil {
				return nil, err
			}
			if fixed != nil {
				ready = append(ready, fixed)
			}
		case st.eta <= st.alpha:
			s.rebased = true
			ready = append(ready, s)
		default:
			d.add(d.decision(s, ledger.Stale, fmt.Sprintf("dev changed its files %s since its base %s (α = %d)", times(st.eta), s.Proposal.Base.Short(), st.alpha)))
		}
	}
	return ready, nil
}

// oversized returns why a submission is outside the trust region, or "".
func (a *Aggregator) oversized(ctx context.Context, s *Submission) (string, error) {
	lib := a.Library
	if lib.MaxFiles > 0 && len(s.Paths) > lib.MaxFiles {
		return fmt.Sprintf("changes %d files; the trust region allows %d (max-changed-files)", len(s.Paths), lib.MaxFiles), nil
	}
	if lib.MaxLines <= 0 {
		return "", nil
	}
	lines, over, err := a.Repo.ChangedLinesOver(ctx, s.Proposal.Base, s.Proposal.Commit, lib.Path, lib.MaxLines)
	if err != nil {
		return "", err
	}
	if over {
		return fmt.Sprintf("changes %d lines; the trust region allows %d (max-changed-lines)", lines, lib.MaxLines), nil
	}
	return "", nil
}

// repair asks the Repairer to re-make a stale proposal on dev and records
// what happened to the original. A repair is recorded, and the proposal it
// made queued, at once: a later repair on the same branch can then never
// make it unreachable before its decision.
func (a *Aggregator) repair(ctx context.Context, d *decider, state *ledger.State, s *Submission, dev git.Hash) (*Submission, error) {
	fixed, err := a.Repairer.Repair(ctx, s, dev)
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", s.Proposal.Commit.Short(), err)
	}
	st := d.eta[s]
	if fixed == nil {
		d.add(d.decision(s, ledger.RepairDeclined, fmt.Sprintf("dev changed its files %s since its base; the proposer found nothing left to re-apply", times(st.eta))))
		return nil, nil
	}
	dec := d.decision(s, ledger.Repaired, fmt.Sprintf("dev changed its files %s since its base; re-made on dev %s as %s", times(st.eta), dev.Short(), fixed.Proposal.Commit.Short()))
	dec.RepairedAs = fixed.Proposal.Commit
	d.add(dec)
	d.eta[fixed] = staleness{alpha: st.alpha}
	// Queued until decided: a round cut short leaves it for the next.
	d.refiled = append(d.refiled, fixed)
	msg := fmt.Sprintf("descent(%s): round %d: repair %s as %s\n", a.Library.Name, state.Round, s.Proposal.Commit.Short(), fixed.Proposal.Commit.Short())
	if err := a.record(context.WithoutCancel(ctx), d, d.checkpoint(*state), msg); err != nil {
		return nil, err
	}
	return fixed, nil
}

// times is "once" or "3 times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
