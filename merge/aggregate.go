package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Scorer rolls out a library version on tasks and returns one reward per
// task, in order. The aggregator uses it for the gate, for settling
// conflicts and for promotion; implementations cache by version and task.
type Scorer interface {
	Score(ctx context.Context, libTree git.Hash, tasks []eval.Task) (Scores, error)
}

// Scores are a version's rewards on tasks and what producing them spent
// now (cached rollouts spend nothing).
type Scores struct {
	Rewards []float64
	Tokens  int64
	Cost    float64
}

// Submission is a proposal handed to the aggregator, with the files it
// changes (relative to the library root).
type Submission struct {
	Proposal *ledger.Proposal
	Paths    []string
}

// gain is the proposal's own evidence: reward after minus before on its
// train tasks.
func (s *Submission) gain() float64 { return s.Proposal.RewardAfter - s.Proposal.RewardBefore }

// Aggregator decides, round by round, which proposals enter dev. One
// Aggregator owns a library's dev, stable and journal refs while it runs;
// every update it makes is a compare-and-swap, so a second aggregator
// running against the same repository fails loudly instead of overwriting.
type Aggregator struct {
	Repo       *git.Repo
	Library    *library.Library
	Validation []eval.Task
	Scorer     Scorer
	Log        *slog.Logger
	// Meter, when set, is the run's spending; each round adds what was spent
	// since the last one to the journal's totals.
	Meter *budget.Meter

	refs     ledger.Refs
	journal  *ledger.Journal
	recorded struct {
		tokens int64
		cost   float64
	} // Meter's totals when the journal was last written
}

// NewAggregator returns the aggregator of a library.
func NewAggregator(repo *git.Repo, lib *library.Library, validation []eval.Task, scorer Scorer, log *slog.Logger) *Aggregator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Aggregator{Repo: repo, Library: lib, Validation: validation, Scorer: scorer, Log: log,
		refs: ledger.Refs{Library: lib.Name}, journal: ledger.OpenJournal(repo, lib.Name)}
}

// RoundResult is what one aggregator round did.
type RoundResult struct {
	Round     int
	Dev       git.Hash // dev after the round
	Merge     git.Hash // the merge commit made this round, if any
	Gate      *ledger.Gate
	Decisions []ledger.Decision
	Promotion *ledger.Promotion
	DevScore  float64 // dev's mean validation reward after the round
	Stable    float64 // stable's mean validation reward after the round
	Regressed bool    // dev scored below stable this round
}

// Committed counts the proposals merged this round.
func (r *RoundResult) Committed() int {
	n := 0
	for _, d := range r.Decisions {
		if d.Outcome == ledger.Committed {
			n++
		}
	}
	return n
}

// Round decides one batch of proposals against the current dev: it fuses the
// ones that merge together, settles conflicts by validation score, gates the
// candidate against dev, commits it with compare-and-swap, considers
// promotion, and records every decision (others holds decisions the workers
// already made, e.g. invalid edits). A lost compare-and-swap is retried from
// the new dev.
func (a *Aggregator) Round(ctx context.Context, subs []*Submission, others []ledger.Decision) (*RoundResult, error) {
	const attempts = 3
	var err error
	for i := 0; i < attempts; i++ {
		var res *RoundResult
		res, err = a.round(ctx, subs, others)
		var lost *devMovedError
		if !errors.As(err, &lost) {
			return res, err
		}
		a.Log.Warn("dev moved during the round; deciding again on the new dev", "ref", a.refs.Dev())
	}
	return nil, fmt.Errorf("aggregate %s: gave up after %d lost compare-and-swaps: %w", a.Library.Name, attempts, err)
}

func (a *Aggregator) round(ctx context.Context, subs []*Submission, others []ledger.Decision) (*RoundResult, error) {
	head, err := a.journal.Head(ctx)
	if err != nil {
		return nil, err
	}
	state := head.State
	state.Round++
	dev, err := a.Repo.ResolveRef(ctx, a.refs.Dev())
	if err != nil {
		return nil, err
	}
	res := &RoundResult{Round: state.Round, Dev: dev}
	decide, err := newDecider(ctx, a, state.Round, dev, subs)
	if err != nil {
		return nil, err
	}
	for i := range others {
		others[i].Round = state.Round
		decide.add(others[i])
	}

	// Measure first: everything that rolls out may be cancelled.
	cand, err := a.fuse(ctx, decide, dev, subs)
	if err != nil {
		return nil, err
	}
	next := cand
	if len(cand.members) > 0 {
		if res.Gate, err = a.gate(ctx, dev, cand, state.Commits); err != nil {
			return nil, err
		}
	}
	if res.Gate == nil || !res.Gate.Accept {
		next = &fusion{commit: dev, tree: cand.base}
	}
	stable, err := a.Repo.ResolveRef(ctx, a.refs.Stable())
	if err != nil {
		return nil, err
	}
	if res.DevScore, err = a.meanScore(ctx, next.tree); err != nil {
		return nil, err
	}
	if res.Stable, err = a.meanScore(ctx, stable); err != nil {
		return nil, err
	}

	// Then write, without cancellation, so an interrupt never leaves dev
	// moved without its decisions recorded.
	ctx = context.WithoutCancel(ctx)
	if err := a.commit(ctx, decide, &state, dev, cand, res); err != nil {
		return nil, err
	}
	if err := a.promote(ctx, &state, stable, res); err != nil {
		return nil, err
	}
	res.Decisions = decide.list
	state.Dev, state.DevScore, state.StableScore = res.Dev, res.DevScore, res.Stable
	state.Stable = stable
	if res.Promotion != nil {
		state.Stable = res.Promotion.To
	}
	tokens, cost := a.Meter.Total()
	state.Tokens += tokens - a.recorded.tokens
	state.Cost += cost - a.recorded.cost
	if _, err := a.journal.Record(ctx, head, state, res.Decisions, roundMessage(a.Library.Name, res)); err != nil {
		// Not retried: dev may already hold this round's merge.
		return nil, fmt.Errorf("record round %d of %s: %s (another git-descent may be running on this library)", state.Round, a.Library.Name, err)
	}
	a.recorded.tokens, a.recorded.cost = tokens, cost
	return res, nil
}

// devMovedError is dev moving between the start of a round and its commit:
// the round is decided again on the new dev.
type devMovedError struct{ err error }

func (e *devMovedError) Error() string { return e.err.Error() }

// roundMessage is the journal commit's message.
func roundMessage(lib string, r *RoundResult) string {
	counts := map[ledger.Outcome]int{}
	for _, d := range r.Decisions {
		counts[d.Outcome]++
	}
	var parts []string
	for o, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, o))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		parts = []string{"no proposals"}
	}
	return fmt.Sprintf("descent(%s): round %d: %s\n", lib, r.Round, strings.Join(parts, ", "))
}
