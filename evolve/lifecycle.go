package evolve

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/ledger"
)

// lifecycle runs the library's on-commit hook for each dev commit a round
// made, then its on-promote hook for the round's promotion, each with the
// event as JSON on its standard input. They run once the moves are
// recorded (and, for a remote's aggregator, published): a hook that fails
// is reported and changes nothing.
func (r *runner) lifecycle(ctx context.Context, res *aggregate.RoundResult) {
	if r.lib.OnCommit == "" && r.lib.OnPromote == "" {
		return
	}
	var events []hooks.Event
	for _, v := range res.Verdicts {
		if v.Merge.IsZero() || r.lib.OnCommit == "" {
			continue
		}
		ev := hooks.CommitEvent{Library: r.lib.Name, Dev: v.Merge, Decisions: []ledger.Decision{}}
		if ps, err := r.repo.Parents(ctx, v.Merge); err == nil && len(ps) > 0 {
			ev.Parent = ps[0]
		}
		members := map[string]bool{}
		for _, m := range v.Members {
			members[string(m.Proposal.Commit)] = true
		}
		for _, d := range res.Decisions {
			if d.Outcome == ledger.Committed && members[string(d.Proposal)] {
				ev.Decisions = append(ev.Decisions, d)
			}
		}
		events = append(events, ev)
	}
	if p := res.Promotion; p != nil && r.lib.OnPromote != "" {
		events = append(events, hooks.PromoteEvent{Library: r.lib.Name, Stable: p.To, From: p.From, Promotion: *p})
	}
	for _, ev := range events {
		if err := hooks.RunLifecycle(ctx, hooks.Lifecycle{Library: r.lib, Top: r.repo.Top(), Event: ev}); err != nil {
			fmt.Fprintf(r.opts.Out, "warning: %v (the change it reports stands)\n", err)
		}
	}
}
