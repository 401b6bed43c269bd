package aggregate

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// decider collects the decisions of one round and the proposals it
// re-files, and knows what of them the journal holds already.
type decider struct {
	a        *Aggregator
	round    int
	dev      git.Hash
	eta      map[*Submission]staleness
	attempts map[git.Hash]int // rounds each proposal was already re-filed
	list     []ledger.Decision
	refile   []ledger.Refile
	built    map[*Submission]*fusion // each submission merged alone onto dev
	// waiting are the promising proposals pooled in later rounds; promising
	// are this round's proposals whose gate found positive but insufficient
	// evidence, to pool with the waiting ones.
	waiting   []ledger.Pending
	promising []ledger.Pending
	gated     map[git.Hash]bool // candidate trees gated this round

	refiled []*Submission              // the round's re-filed and repaired proposals, queued until decided
	written map[string]ledger.Decision // decisions the journal holds, by ID
}

// decisions is what a round has decided: its list and queues, saved
// before a write that may fail and restored when it does.
type decisions struct {
	list      []ledger.Decision
	refile    []ledger.Refile
	promising []ledger.Pending
	waiting   []ledger.Pending
}

func (d *decider) save() decisions {
	return decisions{slices.Clone(d.list), slices.Clone(d.refile), slices.Clone(d.promising), slices.Clone(d.waiting)}
}

func (d *decider) restore(s decisions) {
	d.list, d.refile, d.promising, d.waiting = s.list, s.refile, s.promising, s.waiting
}

// checkpoint is state with the queues as the round's decisions so far
// leave them: the proposals re-filed, the re-filed ones not reached yet,
// and the promising ones, waiting and new.
func (d *decider) checkpoint(state ledger.State) ledger.State {
	state.Refile = append(slices.Clone(d.refile), unreached(d.refiled, d.attempts, d.list)...)
	state.Promising = append(slices.Clone(d.waiting), d.promising...)
	return state
}

// unwritten returns the decisions the journal does not hold yet.
func (d *decider) unwritten() []ledger.Decision {
	var out []ledger.Decision
	for _, dec := range d.list {
		if w, ok := d.written[dec.ID]; !ok || !reflect.DeepEqual(w, dec) {
			out = append(out, dec)
		}
	}
	return out
}

// alone returns s merged alone onto the round's dev, merging it once
// however many steps ask (evidence, conflicts, ranking).
func (d *decider) alone(ctx context.Context, s *Submission) (*fusion, error) {
	if f, ok := d.built[s]; ok {
		return f, nil
	}
	f, err := d.a.build(ctx, d.dev, []*Submission{s})
	if err == nil {
		d.built[s] = f
	}
	return f, err
}

// bestAlone scores each of subs merged alone onto the round's dev on tasks
// and returns the best (the first of equals) with its score. The versions
// in also are rolled out in the same wave, for the caller to score next.
func (d *decider) bestAlone(ctx context.Context, subs []*Submission, tasks []eval.Task, also ...scoring) (*fusion, float64, error) {
	var alone []*fusion
	jobs := also
	for _, s := range subs {
		f, err := d.alone(ctx, s)
		if err != nil {
			return nil, 0, err
		}
		alone = append(alone, f)
		jobs = append(jobs, scoring{f.tree, tasks})
	}
	d.a.warm(ctx, jobs)
	return d.a.bestOf(ctx, alone, tasks)
}

// bestOf scores versions on tasks and returns the best (the first of
// equals) with its score.
func (a *Aggregator) bestOf(ctx context.Context, fs []*fusion, tasks []eval.Task) (*fusion, float64, error) {
	var best *fusion
	bestScore := -1.0
	for _, f := range fs {
		sc, err := a.scoreTree(ctx, f.tree, tasks)
		if err != nil {
			return nil, 0, err
		}
		if sc > bestScore {
			best, bestScore = f, sc
		}
	}
	return best, bestScore, nil
}

// scoring is a library version (a whole-repository tree) to score on tasks.
type scoring struct {
	tree  git.Hash
	tasks []eval.Task
}

// warm scores versions concurrently, so that a stage that then reads them
// one by one finds them known: its candidates are rolled out together
// (under the evaluator's limit) rather than one after the other. Errors
// are left for the stage to meet again.
func (a *Aggregator) warm(ctx context.Context, jobs []scoring) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = a.scoreTree(ctx, j.tree, j.tasks)
		}()
	}
	wg.Wait()
}

// staleness is how far dev moved under a proposal: η, the largest number of
// dev commits that changed one of its files since its base, and α, the
// most it tolerates (by layer, halved for hot files).
type staleness struct {
	eta, alpha int
}

// newDecider starts a round's decisions, reading each submission's
// staleness against dev from the ledger.
func newDecider(ctx context.Context, a *Aggregator, round int, dev git.Hash, subs []*Submission, attempts map[git.Hash]int) (*decider, error) {
	d := &decider{a: a, round: round, dev: dev, eta: map[*Submission]staleness{}, attempts: attempts, built: map[*Submission]*fusion{},
		gated: map[git.Hash]bool{}, written: map[string]ledger.Decision{}}
	for _, s := range subs {
		st, err := a.staleness(ctx, s, dev)
		if err != nil {
			return nil, fmt.Errorf("staleness of %s: %w", s.Proposal.Commit.Short(), err)
		}
		d.eta[s] = st
	}
	return d, nil
}

// add records a decision. A proposal whose outcome is re-filed goes back in
// the queue for the next round, until it has been re-filed RefileLimit
// times: then it expires. A proposal has one decision per round: a later
// one (a promising proposal pooled and committed) replaces the earlier.
func (d *decider) add(dec ledger.Decision) {
	if !dec.Proposal.IsZero() {
		for i := range d.list {
			if d.list[i].Proposal == dec.Proposal {
				d.list = append(d.list[:i], d.list[i+1:]...)
				break
			}
		}
		for i := range d.refile {
			if d.refile[i].Proposal == dec.Proposal {
				d.refile = append(d.refile[:i], d.refile[i+1:]...)
				break
			}
		}
	}
	if dec.Outcome.Refiled() && !dec.Proposal.IsZero() {
		n := d.attempts[dec.Proposal]
		if n >= d.a.Library.RefileLimit {
			dec.Outcome = ledger.Expired
			dec.Reason += fmt.Sprintf("; re-filed %s already, so it expires", times(n))
		} else {
			d.refile = append(d.refile, ledger.Refile{Proposal: dec.Proposal, Attempts: n + 1})
			dec.Attempts = n + 1
			dec.Reason += "; re-filed for the next round"
		}
	}
	d.list = append(d.list, dec)
}

// decision starts the record of a submission's verdict.
func (d *decider) decision(s *Submission, o ledger.Outcome, reason string) ledger.Decision {
	p := s.Proposal
	st := d.eta[s]
	return ledger.Decision{
		ID: string(p.Commit), Proposal: p.Commit, Library: p.Library, Worker: p.Worker, Round: d.round,
		Subject: p.Subject, Outcome: o, Reason: reason, Base: p.Base, Paths: s.Paths,
		Train: [2]float64{p.RewardBefore, p.RewardAfter}, Staleness: st.eta, Alpha: st.alpha,
		Rebased: s.rebased, Attempts: d.attempts[p.Commit], Seconds: p.Seconds,
		Started: p.Started, RolloutSeconds: p.RolloutSeconds, ProposeSeconds: p.ProposeSeconds,
	}
}
