package evolve

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// Status is a snapshot of a run, for a live display: what each worker and
// the aggregator are doing, the rollouts, dev's validation so far, spend
// and time. Its JSON names are part of evolve --json's documented events.
type Status struct {
	Elapsed    float64        `json:"elapsed_seconds"`
	Left       float64        `json:"left_seconds,omitempty"` // until --max-time, when set
	Round      int            `json:"round"`                  // aggregator rounds decided so far
	Doing      string         `json:"doing"`                  // the run's phase, or the aggregator's work
	Workers    []WorkerStatus `json:"workers"`
	Rollouts   RolloutStatus  `json:"rollouts"`
	Validation []Point        `json:"validation"` // dev's score after the baseline and each round
	Tokens     int64          `json:"tokens"`
	Cost       float64        `json:"cost"`
}

// WorkerStatus is what one worker is doing.
type WorkerStatus struct {
	Worker string `json:"worker"`
	Doing  string `json:"doing"`
}

// RolloutStatus counts rollouts: run and from the cache so far, running
// and waiting for a slot now.
type RolloutStatus struct {
	Run     int64 `json:"run"`
	Cached  int64 `json:"cached"`
	Running int64 `json:"running"`
	Waiting int64 `json:"waiting"`
	Errored int64 `json:"errored"`
	Slots   int   `json:"slots"`
}

// Event is one thing that happened in a run. Kind is "start", "baseline",
// "round", "stop"; the other fields are those of its kind.
type Event struct {
	Kind string    `json:"event"`
	Time time.Time `json:"time"`

	// start
	Library   string         `json:"library,omitempty"`
	Tasks     map[string]int `json:"tasks,omitempty"`
	Workers   int            `json:"workers,omitempty"`
	Runtime   string         `json:"runtime,omitempty"` // rounds or async
	Isolation string         `json:"isolation,omitempty"`
	Resumed   bool           `json:"resumed,omitempty"` // dev existed: the run goes on from it

	// baseline, round
	Dev        git.Hash `json:"dev,omitempty"`
	Validation *float64 `json:"validation,omitempty"`

	// round
	Round     int           `json:"round,omitempty"`
	Decisions []EventChoice `json:"decisions,omitempty"`
	Stable    git.Hash      `json:"stable,omitempty"`
	Promoted  bool          `json:"promoted,omitempty"`

	// stop
	Reason string `json:"reason,omitempty"`
}

// EventChoice is one decision of a round event.
type EventChoice struct {
	Worker   string         `json:"worker"`
	Proposal git.Hash       `json:"proposal,omitempty"`
	Outcome  ledger.Outcome `json:"outcome"`
	Subject  string         `json:"subject,omitempty"`
	Reason   string         `json:"reason"`
	Merge    git.Hash       `json:"merge,omitempty"`
}

// progress is the runner's live state behind Status: set by the stages,
// read by the status goroutine.
type progress struct {
	doing atomic.Value // string: the run's phase

	mu      sync.Mutex
	history []Point
}

func (p *progress) set(doing string) { p.doing.Store(doing) }

func (p *progress) point(pt Point) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.history = append(p.history, pt)
}

// points is a copy of dev's points so far, never nil.
func (p *progress) points() []Point {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Point{}, p.history...)
}

// status takes the snapshot.
func (r *runner) status() Status {
	st := Status{Elapsed: time.Since(r.start).Seconds(), Round: int(r.roundsDone.Load())}
	if r.opts.MaxTime > 0 {
		st.Left = max(0, (r.opts.MaxTime - time.Since(r.start)).Seconds())
	}
	st.Doing, _ = r.prog.doing.Load().(string)
	for _, w := range r.workers {
		d, _ := w.doing.Load().(string)
		if d == "" {
			d = "starting"
		}
		st.Workers = append(st.Workers, WorkerStatus{Worker: "w" + w.id, Doing: d})
	}
	if r.eval != nil {
		es := r.eval.Stats()
		st.Rollouts = RolloutStatus{Run: es.Rollouts, Cached: es.Hits, Running: es.Running, Waiting: es.Waiting, Errored: es.Errored, Slots: r.opts.Jobs}
	}
	st.Validation = r.prog.points()
	st.Tokens, st.Cost = r.meter.Total()
	return st
}

// watch calls OnStatus every StatusEvery until ctx ends, then once more.
func (r *runner) watch(ctx context.Context) (stop func()) {
	if r.opts.OnStatus == nil {
		return func() {}
	}
	every := r.opts.StatusEvery
	if every <= 0 {
		every = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.opts.OnStatus(r.status())
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// event sends e when someone listens.
func (r *runner) event(e Event) {
	if r.opts.OnEvent != nil {
		e.Time = time.Now().UTC()
		r.opts.OnEvent(e)
	}
}

// roundEvent is a decided round as an event.
func roundEvent(res *aggregate.RoundResult) Event {
	e := Event{Kind: "round", Round: res.Round, Dev: res.Dev, Validation: ptr(res.DevScore), Promoted: res.Promotion != nil}
	if res.Promotion != nil {
		e.Stable = res.Promotion.To
	}
	for _, d := range res.Decisions {
		e.Decisions = append(e.Decisions, EventChoice{Worker: d.Worker, Proposal: d.Proposal, Outcome: d.Outcome, Subject: d.Subject, Reason: d.Reason, Merge: d.Merge})
	}
	return e
}
