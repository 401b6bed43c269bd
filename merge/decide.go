package merge

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// decider collects the decisions of one round.
type decider struct {
	a     *Aggregator
	round int
	dev   git.Hash
	list  []ledger.Decision
}

func newDecider(a *Aggregator, round int, dev git.Hash) *decider {
	return &decider{a: a, round: round, dev: dev}
}

func (d *decider) add(dec ledger.Decision) { d.list = append(d.list, dec) }

// decision starts the record of a submission's verdict.
func (d *decider) decision(s *Submission, o ledger.Outcome, reason string) ledger.Decision {
	p := s.Proposal
	return ledger.Decision{
		ID: string(p.Commit), Proposal: p.Commit, Library: p.Library, Worker: p.Worker, Round: d.round,
		Subject: p.Subject, Outcome: o, Reason: reason, Base: p.Base, Paths: s.Paths,
		Train: [2]float64{p.RewardBefore, p.RewardAfter},
	}
}

// staleness fills in η for a submission's decision.
func (d *decider) staleness(ctx context.Context, dec *ledger.Decision) error {
	paths := make([]string, len(dec.Paths))
	for i, p := range dec.Paths {
		paths[i] = d.a.Library.RepoPath(p)
	}
	eta, err := ledger.Staleness(ctx, d.a.Repo, dec.Base, d.dev, paths)
	if err != nil {
		return fmt.Errorf("staleness of %s: %w", dec.Proposal.Short(), err)
	}
	dec.Staleness = eta
	return nil
}
