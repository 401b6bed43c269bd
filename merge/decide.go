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
	eta   map[*Submission]int // staleness of each submission against dev
	list  []ledger.Decision
}

// newDecider starts a round's decisions, reading each submission's
// staleness against dev from the ledger.
func newDecider(ctx context.Context, a *Aggregator, round int, dev git.Hash, subs []*Submission) (*decider, error) {
	d := &decider{a: a, round: round, dev: dev, eta: map[*Submission]int{}}
	for _, s := range subs {
		paths := make([]string, len(s.Paths))
		for i, p := range s.Paths {
			paths[i] = a.Library.RepoPath(p)
		}
		eta, err := ledger.Staleness(ctx, a.Repo, s.Proposal.Base, dev, paths)
		if err != nil {
			return nil, fmt.Errorf("staleness of %s: %w", s.Proposal.Commit.Short(), err)
		}
		d.eta[s] = eta
	}
	return d, nil
}

func (d *decider) add(dec ledger.Decision) { d.list = append(d.list, dec) }

// decision starts the record of a submission's verdict.
func (d *decider) decision(s *Submission, o ledger.Outcome, reason string) ledger.Decision {
	p := s.Proposal
	return ledger.Decision{
		ID: string(p.Commit), Proposal: p.Commit, Library: p.Library, Worker: p.Worker, Round: d.round,
		Subject: p.Subject, Outcome: o, Reason: reason, Base: p.Base, Paths: s.Paths,
		Train: [2]float64{p.RewardBefore, p.RewardAfter}, Staleness: d.eta[s],
	}
}
