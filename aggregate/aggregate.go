package aggregate

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// Submission is a proposal handed to the aggregator, with the files it
// changes (relative to the library root).
type Submission struct {
	Proposal *ledger.Proposal
	Paths    []string

	rebased bool // stale within α: merged onto the current dev and re-verified
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
	// Train finds the train tasks a proposal's evidence names, to re-verify
	// it on the current dev (rebases, passengers).
	Train map[string]eval.Task
	// Repairer re-makes stale or conflicting proposals on the current dev
	// under the reflective policy; nil treats them as under guarded.
	Repairer Repairer
	// Oracle checks changes to guarded (L1) files; nil vetoes them all.
	Oracle Oracle
	// Test is the sealed test split: scored at promotions for the report,
	// never used to decide. May be empty.
	Test []eval.Task
	// Jobs is how many rollouts one gate keeps in flight (the evaluator's
	// limit bounds them all together).
	Jobs int
	// Gates is how many candidates are evaluated at once, each against the
	// dev of the moment; in order, the first accepted is committed and the
	// others are evaluated again on the new dev. 0 or 1: one at a time.
	Gates int
	// OnCommit, when set, is called with dev's new commit each time the
	// aggregator has merged into dev and recorded it (from the goroutine
	// that runs the round).
	OnCommit func(dev git.Hash)
	// CrossFit judges each candidate on every task in Validation that none
	// of its members' proposers saw (Validation then holds the train and
	// validation splits together), instead of on all of Validation.
	CrossFit bool
	// Upcoming, when set, returns the proposals that have arrived for the
	// next round and are not in this one (the asynchronous runtime's
	// queue); while a candidate's gate runs, their split evidence is
	// rolled out on it in advance, as is that of those that arrive
	// meanwhile (see warmNext and Arrived). It is called from the
	// goroutines that evaluate candidates.
	Upcoming func() []*Submission

	obs  *observations
	spec speculations
	// jmu serializes the journal's writes, a round's records and Hold,
	// which may run during a round (from another goroutine), and guards
	// decided and live.
	jmu     sync.Mutex
	decided map[git.Hash]bool // proposals the journal holds a decision on; nil until first needed
	// live is the round in progress: the journal as it last wrote it, and
	// what Hold queued since it began. nil between rounds.
	live *liveRound
	// refused holds the changes the gate rejected alone in this run, each
	// against the dev it was gated on (see refuse); only rounds, one at a
	// time, write it.
	refused  map[refusedKey]refusal
	refs     ledger.Refs
	journal  *ledger.Journal
	recorded struct {
		tokens   int64
		cost     float64
		unpriced int64
	} // Meter's totals when the journal was last written
}

// NewAggregator returns the aggregator of a library.
func NewAggregator(repo *git.Repo, lib *library.Library, validation []eval.Task, scorer Scorer, log *slog.Logger) *Aggregator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Aggregator{Repo: repo, Library: lib, Validation: validation, Scorer: scorer, Log: log,
		obs: newObservations(scorer), refs: ledger.Refs{Library: lib.Name}, journal: ledger.OpenJournal(repo, lib.Name)}
}

// RoundResult is what one aggregator round did.
type RoundResult struct {
	Round     int
	Dev       git.Hash  // dev after the round
	Verdicts  []Verdict // every candidate the gate saw, in order
	Decisions []ledger.Decision
	Promotion *ledger.Promotion
	DevScore  float64 // dev's mean validation reward after the round
	Stable    float64 // stable's mean validation reward after the round
	Regressed bool    // dev scored below stable this round
}

// Verdict is the gate's answer on one candidate: a fusion of proposals or
// one proposal alone.
type Verdict struct {
	Members []*Submission
	Gate    *ledger.Gate // nil when the oracle vetoed it first
	Merge   git.Hash     // the dev commit, when accepted
	Oracle  string       // the oracle's finding on an L1 change
	Pooled  bool         // promising proposals pooled into one candidate
}

// Merges counts the dev commits made this round.
func (r *RoundResult) Merges() int {
	n := 0
	for _, v := range r.Verdicts {
		if !v.Merge.IsZero() {
			n++
		}
	}
	return n
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
// ones that merge together, settles conflicts by validation score, gates
// each candidate against dev, commits the accepted ones, considers
// promotion, and records every decision (others holds decisions the workers
// already made, e.g. invalid edits). Each commit to dev is recorded in the
// journal in the same transaction. A dev or stable that something other
// than git-descent moved (not where the journal left it) is never built on:
// the round stops with a *ledger.MovedError. Its rollouts wait for slots
// at sandbox.Critical, ahead of the workers' (every worker ends up waiting
// for its decisions); what it speculates, at sandbox.Speculative.
func (a *Aggregator) Round(ctx context.Context, subs []*Submission, others []ledger.Decision) (*RoundResult, error) {
	return a.round(sandbox.WithPriority(ctx, sandbox.Critical), subs, others)
}

// Hold records subs in the journal's re-file queue for a round to decide:
// the journal then keeps each reachable and queued, so its worker may
// write its next proposal over it (the asynchronous runtime frees a
// worker the moment its proposal is held, not once a round has decided
// it), and a run that stops before deciding them leaves them for the
// next. A round decides them as re-filed proposals (their first attempt);
// passing them to Round as well is harmless. Hold may run while a round
// does (from another goroutine): what it queues then is decided by a
// later round, the round in progress carrying it in each record it
// writes. One journal commit; proposals already queued or decided are
// left out.
func (a *Aggregator) Hold(ctx context.Context, subs []*Submission) error {
	a.jmu.Lock()
	defer a.jmu.Unlock()
	var head ledger.JournalHead
	if a.live != nil {
		// On the journal as the round last wrote it: if another writer
		// moved it since, the compare-and-swap below fails, as the round's
		// next record would, rather than taking that writer's journal
		// for the round's.
		head = a.live.head
	} else {
		var err error
		if head, err = a.journal.Head(ctx); err != nil {
			return err
		}
	}
	if err := ledger.CheckHeads(ctx, a.Repo, a.Library.Name, head); err != nil {
		return err
	}
	queued := map[git.Hash]bool{}
	for _, r := range head.State.Refile {
		queued[r.Proposal] = true
	}
	fresh, err := a.undecidedLocked(ctx, subs)
	if err != nil {
		return err
	}
	var ps []*ledger.Proposal
	for _, s := range fresh {
		if !queued[s.Proposal.Commit] {
			queued[s.Proposal.Commit] = true
			ps = append(ps, s.Proposal)
		}
	}
	head, err = a.journal.Queue(context.WithoutCancel(ctx), head, ps)
	if err != nil {
		return fmt.Errorf("hold %s of %s for the next round: %w", words.Count(len(ps), "proposal"), a.Library.Name, err)
	}
	if a.live != nil {
		a.live.head = head
		for _, p := range ps {
			a.live.held = append(a.live.held, ledger.Refile{Proposal: p.Commit})
		}
	}
	return nil
}

// liveRound is the journal as the round in progress last wrote it (each
// record is a compare-and-swap on it) and the proposals Hold queued since
// the round began, which its records keep queued.
type liveRound struct {
	head ledger.JournalHead
	held []ledger.Refile
}

// begin reads the journal's head for a round and marks the round live,
// in one step: whatever Hold queues from then on, the round's records
// keep. end, called when the round is done, ends that.
func (a *Aggregator) begin(ctx context.Context) (head ledger.JournalHead, end func(), err error) {
	a.jmu.Lock()
	defer a.jmu.Unlock()
	if head, err = a.journal.Head(ctx); err != nil {
		return head, nil, err
	}
	a.live = &liveRound{head: head}
	return head, func() {
		a.jmu.Lock()
		defer a.jmu.Unlock()
		a.live = nil
	}, nil
}

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
	msg := fmt.Sprintf("descent(%s): round %d: %s", lib, r.Round, strings.Join(parts, ", "))
	if p := r.Promotion; p != nil {
		msg += "; promote stable to " + p.To.Short()
	}
	return msg + "\n"
}
