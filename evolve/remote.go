package evolve

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Remote runs: workers as processes on other machines (CI jobs) that push
// their proposals to a shared repository, and aggregators that fetch and
// decide them there. Git is the transport: everything travels as refs
// (ledger.Remote), every write to the remote is an atomic push leased
// against what was fetched, so concurrent workers and aggregators never
// overwrite each other, and a process killed at any instant loses at most
// the proposal it had not pushed yet.

// RemoteOptions are what git descent work and aggregate share.
type RemoteOptions struct {
	Remote  string        // a remote's name, URL or path
	MaxTime time.Duration // stop after this long; 0: no limit
	Jobs    int           // rollouts at once
	Hedge   float64
	NoCache bool
	// Runner, Proposer and AgentName replace the library's commands (the
	// bench's simulated agents).
	Runner    agent.Runner
	Proposer  agent.Proposer
	AgentName string
	Out       io.Writer
	Log       *slog.Logger
}

// WorkOptions configure git descent work.
type WorkOptions struct {
	RemoteOptions
	Worker    string // the worker's id: its branch is descent/<lib>/w/<id>
	Proposals int    // stop after pushing this many; 0: no limit
	// Ahead is how many of this worker's proposals may wait in the
	// remote's queue: with that many undecided, it waits for the
	// aggregator (backpressure) rather than propose from a dev the
	// aggregator is about to move. 0: DefaultAhead.
	Ahead int
	// Interval is how often a waiting worker fetches the remote (one on
	// this machine is watched as well). 0: 10 seconds.
	Interval time.Duration
}

// DefaultAhead is how many of a worker's proposals may wait for the
// aggregator before it waits too.
const DefaultAhead = 1

// WorkSummary is what a worker did.
type WorkSummary struct {
	Library  string     `json:"library"`
	Worker   string     `json:"worker"`
	Remote   string     `json:"remote"`
	Steps    int        `json:"steps"`
	Pushed   []git.Hash `json:"pushed"` // proposals pushed, in order
	Rollouts int64      `json:"rollouts"`
	Cached   int64      `json:"cache_hits"`
	Imported int        `json:"imported"` // rollout records taken from other machines' caches
	Seconds  float64    `json:"seconds"`
	Stop     string     `json:"stop"` // proposals, max-time, passed (every train task passes), interrupted
}

// Work runs one worker against remote's dev until it has pushed
// o.Proposals proposals, o.MaxTime is up, or every train task passes: each
// step fetches the newest dev, rolls out a minibatch, asks the proposer,
// and pushes the proposal to descent/<lib>/w/<id> and to the remote's
// queue, with the worker's rollouts for the rollout cache. When the remote
// has no dev yet, the worker creates it from HEAD (a race with another
// worker doing the same is lost cleanly: the other's dev is taken).
func Work(ctx context.Context, repo *git.Repo, lib *library.Library, o WorkOptions) (*WorkSummary, error) {
	start := time.Now()
	if err := ledger.CheckWriter(o.Worker); err != nil {
		return nil, err
	}
	ctx, cancel := withMaxTime(ctx, o.MaxTime)
	defer cancel()
	lk, err := lockLibrary(repo.DescentDir(), lib.Name)
	if err != nil {
		return nil, err
	}
	m, err := joinRemote(ctx, repo, lib, o.RemoteOptions)
	if err != nil {
		lk.release()
		return nil, err
	}
	opts := withDefaults(Options{Workers: 1, Jobs: o.Jobs, Hedge: o.Hedge, NoCache: o.NoCache, Runner: o.Runner, Proposer: o.Proposer, AgentName: o.AgentName, Out: o.Out, Log: o.Log})
	if o.Jobs <= 0 {
		opts.Jobs = 4
	}
	r, err := setupAs(ctx, repo, lib, opts, budget.NewMeter(0, 0, nil), roleWork, lk)
	if err != nil {
		return nil, err
	}
	defer r.close()
	w := r.workers[0]
	w.id = o.Worker
	sum := &WorkSummary{Library: lib.Name, Worker: o.Worker, Remote: o.Remote, Pushed: []git.Hash{}}
	sh := &sharedCache{r: r, m: m, writer: "w" + o.Worker, trusted: func(string) bool { return true }}
	fmt.Fprintf(opts.Out, "worker %s of %s on %s: %d train tasks, minibatch %d\n", o.Worker, lib.Name, o.Remote, len(w.train), r.minibatch())
	h := fnv.New32a()
	h.Write([]byte(o.Worker))
	seq0 := int(h.Sum32() % 4096)
	passes := 0
	if o.Ahead <= 0 {
		o.Ahead = DefaultAhead
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	wake, stopWatch := watchRemote(ctx, repo, m, lib.Name, o.Interval, wakeDecided)
	defer stopWatch()
	said := false                     // the wait for the aggregator was reported
	queuedBy := map[git.Hash]string{} // the worker of each queued proposal read so far
	for k := 0; ; k++ {
		if o.Proposals > 0 && len(sum.Pushed) >= o.Proposals {
			sum.Stop = "proposals"
			break
		}
		if ctx.Err() != nil {
			break
		}
		if err := m.Fetch(ctx); err != nil {
			if ctx.Err() != nil {
				break
			}
			return sum, err
		}
		if _, err := m.Adopt(ctx); err != nil {
			return sum, err
		}
		if waiting, err := ownQueued(ctx, repo, m, o.Worker, queuedBy); err != nil {
			return sum, err
		} else if waiting >= o.Ahead {
			w.doing.Store("waiting for the aggregator")
			if !said {
				fmt.Fprintf(opts.Out, "w%s: waiting for the aggregator: %s of this worker's queued on %s (--ahead %d)\n", o.Worker, words.Count(waiting, "proposal"), o.Remote, o.Ahead)
				said = true
			}
			select {
			case <-wake:
			case <-ctx.Done():
			}
			k--
			continue
		}
		said = false
		sum.Imported += sh.pull(ctx)
		dev, err := repo.ResolveRef(ctx, r.refs.Dev())
		if err != nil {
			return sum, err
		}
		res, err := w.step(ctx, job{dev: dev, seq: seq0 + k, id: fmt.Sprintf("w%s-%d", o.Worker, k)})
		sum.Steps++
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return sum, err
		}
		switch {
		case res.sub != nil:
			passes = 0
			p := res.sub.Proposal
			// A made proposal is pushed even when the time is up: only
			// an unfinished one is lost.
			pctx, done := afterStop(ctx)
			err := m.PushProposal(pctx, p, func() ([]git.PushUpdate, error) { return sh.update(pctx) })
			done()
			if err != nil {
				return sum, err
			}
			sh.published()
			sum.Pushed = append(sum.Pushed, p.Commit)
			fmt.Fprintf(opts.Out, "w%s pushed %s on dev %s: train %.2f→%.2f  %s\n", o.Worker, p.Commit.Short(), p.Base.Short(), p.RewardBefore, p.RewardAfter, clip(p.Subject, 60))
		case res.passed:
			passes++
			fmt.Fprintf(opts.Out, "w%s: every task of its minibatch passes on dev %s\n", o.Worker, dev.Short())
			if passes*r.minibatch() >= len(w.train) {
				sum.Stop = "passed"
			}
		case res.quiet != "":
			passes = 0
			fmt.Fprintf(opts.Out, "%s\n", clip(res.quiet, 200))
		}
		if sum.Stop != "" {
			break
		}
	}
	if sum.Stop == "" {
		sum.Stop = stopOf(ctx, o.MaxTime)
	}
	pctx, done := afterStop(ctx)
	defer done()
	if err := sh.push(pctx, true); err != nil {
		fmt.Fprintf(opts.Out, "warning: could not share the last rollouts: %v\n", err)
	}
	st := r.eval.Stats()
	sum.Rollouts, sum.Cached, sum.Seconds = st.Rollouts, st.Hits, time.Since(start).Seconds()
	fmt.Fprintf(opts.Out, "w%s: %s pushed to %s in %s (%d rollouts, %d from the cache, %d records from other machines); stopped: %s\n",
		o.Worker, words.Count(len(sum.Pushed), "proposal"), o.Remote, words.Count(sum.Steps, "step"), sum.Rollouts, sum.Cached, sum.Imported, sum.Stop)
	if sum.Stop == "interrupted" {
		return sum, fmt.Errorf("interrupted (%w); every proposal made was pushed", context.Canceled)
	}
	return sum, nil
}

// ownQueued counts the proposals of worker waiting in the remote's queue,
// whichever process of it pushed them; workers (a memo of queued commits'
// workers) is filled as it reads them.
func ownQueued(ctx context.Context, repo *git.Repo, m *ledger.Remote, worker string, workers map[git.Hash]string) (int, error) {
	qs, err := m.Queued(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range qs {
		w, ok := workers[c]
		if !ok {
			if p, err := ledger.ReadProposal(ctx, repo, c); err == nil {
				w = p.Worker
			}
			workers[c] = w
		}
		if w == worker {
			n++
		}
	}
	return n, nil
}

// AggregateOptions configure git descent aggregate.
type AggregateOptions struct {
	RemoteOptions
	Watch    bool          // keep deciding as proposals arrive
	Interval time.Duration // how often --watch fetches a remote it cannot watch
	Idle     time.Duration // with Watch, stop after this long without a new proposal; 0: never
	Batch    int           // proposals decided per round at most
	Gates    int           // candidates evaluated at once
	Target   float64       // stop once dev's validation score reaches this; 0: no target
	// OnEvent receives the run's round events, as evolve's.
	OnEvent func(Event)
}

// AggregateSummary is what an aggregator did.
type AggregateSummary struct {
	Library  string                 `json:"library"`
	Remote   string                 `json:"remote"`
	Rounds   int                    `json:"rounds"`
	Decided  int                    `json:"decided"` // proposals decided
	Outcomes map[ledger.Outcome]int `json:"outcomes"`
	Merges   int                    `json:"merges"`
	Raced    int                    `json:"raced"` // rounds another aggregator published first
	Dev      git.Hash               `json:"dev"`
	Final    float64                `json:"final"` // dev's validation score
	History  []Point                `json:"history"`
	Seconds  float64                `json:"seconds"`
	Stop     string                 `json:"stop"` // done, nothing, idle, target, max-time, interrupted
}

// Aggregate fetches the proposals queued on remote, decides those the
// journal does not hold yet, and publishes dev, stable, the journal and
// the notes in one atomic push leased against what it fetched. When
// another aggregator publishes first, nothing of this one's round is
// written: it adopts the other's refs and decides again what is left, so
// no proposal is decided twice and none is lost. With Watch it goes on as
// proposals arrive.
func Aggregate(ctx context.Context, repo *git.Repo, lib *library.Library, o AggregateOptions) (*AggregateSummary, error) {
	start := time.Now()
	ctx, cancel := withMaxTime(ctx, o.MaxTime)
	defer cancel()
	lk, err := lockLibrary(repo.DescentDir(), lib.Name)
	if err != nil {
		return nil, err
	}
	locked := true // until the runner owns the lock
	defer func() {
		if locked {
			lk.release()
		}
	}()
	m, err := joinRemote(ctx, repo, lib, o.RemoteOptions)
	if err != nil {
		return nil, err
	}
	if o.Batch <= 0 {
		o.Batch = 8
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	sum := &AggregateSummary{Library: lib.Name, Remote: o.Remote, Outcomes: map[ledger.Outcome]int{}, History: []Point{}}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	pending, err := queued(ctx, repo, m)
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 && !o.Watch {
		pub, err := m.Publish(ctx)
		for races := 1; errors.Is(err, ledger.ErrRaced) && races < maxRaces; races++ {
			// Another process (a killed aggregator's push still running)
			// published first: take its refs and publish what is left.
			if err = m.Fetch(ctx); err == nil {
				if _, err = m.Adopt(ctx); err == nil {
					pub, err = m.Publish(ctx)
				}
			}
		}
		if err != nil {
			return nil, err
		}
		sum.Dev, _ = repo.ResolveRef(ctx, ledger.Refs{Library: lib.Name}.Dev())
		sum.Stop, sum.Seconds = "nothing", time.Since(start).Seconds()
		fmt.Fprintf(out, "nothing to decide: %s has no proposal the journal does not hold", o.Remote)
		if len(pub.Refs) > 0 {
			fmt.Fprintf(out, " (pushed %s, decided here earlier)", strings.Join(pub.Refs, ", "))
		}
		fmt.Fprintln(out)
		return sum, nil
	}
	gates := o.Gates
	if gates <= 0 {
		gates = 4
	}
	opts := withDefaults(Options{Workers: gates, Jobs: o.Jobs, Hedge: o.Hedge, NoCache: o.NoCache, Runner: o.Runner, Proposer: o.Proposer, AgentName: o.AgentName, Out: o.Out, Log: o.Log, OnEvent: o.OnEvent})
	locked = false // setupAs owns it from here, and releases it on failure
	r, err := setupAs(ctx, repo, lib, opts, budget.NewMeter(0, 0, nil), roleAggregate, lk)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.start = start
	// Gates are decided on rollouts this aggregator, or another, ran: a
	// worker's records (which a hostile worker could forge) never decide
	// a gate.
	sh := &sharedCache{r: r, m: m, writer: ledger.AggregatorWriter, trusted: func(w string) bool { return w == ledger.AggregatorWriter }, every: 30 * time.Second}
	sh.pull(ctx)
	err = r.baseline(ctx)
	if err == nil {
		err = aggregateLoop(ctx, r, m, sh, o, sum)
	}
	if sum.Stop == "" || err != nil {
		sum.Stop = stopOf(ctx, o.MaxTime)
	}
	pctx, done := afterStop(ctx)
	defer done()
	if perr := sh.push(pctx, true); perr != nil {
		fmt.Fprintf(out, "warning: could not share the gates' rollouts: %v\n", perr)
	}
	sum.Dev, _ = repo.ResolveRef(pctx, r.refs.Dev())
	sum.Final, sum.History, sum.Seconds = r.summary.Final, r.prog.points(), time.Since(start).Seconds()
	fmt.Fprintf(out, "aggregated %s from %s: %s decided in %s, %s to dev (%.2f on validation); stopped: %s\n",
		lib.Name, o.Remote, words.Count(sum.Decided, "proposal"), words.Count(sum.Rounds, "round"), words.Count(sum.Merges, "commit"), sum.Final, sum.Stop)
	if err != nil && (sum.Stop == "max-time" || sum.Stop == "idle") {
		err = nil
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return sum, fmt.Errorf("interrupted (%w); nothing is lost: what was decided is published, the rest stays queued on %s", err, o.Remote)
	}
	return sum, err
}

// aggregateLoop decides what is queued, publishes it, and with Watch waits
// for more.
func aggregateLoop(ctx context.Context, r *runner, m *ledger.Remote, sh *sharedCache, o AggregateOptions, sum *AggregateSummary) error {
	out := r.opts.Out
	wake, stopWatch := watchRemote(ctx, r.repo, m, r.lib.Name, o.Interval, wakeQueued)
	defer stopWatch()
	lastNew := time.Now()
	skipped := map[git.Hash]bool{}
	races := 0    // publishes refused as races in a row
	refusals := 0 // publishes the remote refused otherwise, in a row
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		began := time.Now()
		if err := m.Fetch(ctx); err != nil {
			return err
		}
		fetched := time.Since(began)
		ad, err := m.Adopt(ctx)
		if err != nil {
			return err
		}
		if ad.Moved {
			r.agg.Forget()
		}
		if !ad.Discarded.IsZero() {
			fmt.Fprintf(out, "another aggregator published first: this repository's journal %s is replaced by %s's; deciding again what is left\n", ad.Discarded.Short(), o.Remote)
		}
		sh.pull(ctx)
		pending, err := queued(ctx, r.repo, m)
		if err != nil {
			return err
		}
		var batch []stepResult
		for _, c := range pending {
			if skipped[c] {
				continue
			}
			s, err := r.agg.Load(ctx, c)
			if err != nil {
				skipped[c] = true
				fmt.Fprintf(out, "warning: queued %s is not a proposal of %s (%v); left queued\n", c.Short(), r.lib.Name, err)
				continue
			}
			batch = append(batch, stepResult{worker: "w" + s.Proposal.Worker, sub: s})
			if len(batch) == o.Batch {
				break
			}
		}
		if len(batch) == 0 {
			if _, err := m.Publish(ctx); errors.Is(err, ledger.ErrRaced) {
				if races++; races == maxRaces {
					return fmt.Errorf("%w; %d times in a row, so it may refuse for another reason: see what it said", err, races)
				}
				continue
			} else if rej := (*git.PushRejectedError)(nil); errors.As(err, &rej) && refusals < 2 {
				refusals++
				fmt.Fprintf(out, "warning: %v\n  fetching and trying again\n", err)
				continue
			} else if err != nil {
				return err
			}
			races, refusals = 0, 0
			if !o.Watch {
				sum.Stop = "done"
				return nil
			}
			if o.Idle > 0 && time.Since(lastNew) >= o.Idle {
				sum.Stop = "idle"
				fmt.Fprintf(out, "no new proposal for %s: stopping\n", o.Idle)
				return nil
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		lastNew = time.Now()
		loaded := time.Since(began)
		res, err := r.aggregate(ctx, batch)
		if err != nil {
			return err
		}
		r.account(res)
		if !decidedAny(res, batch) {
			// Never spin on proposals a round will not take up.
			for _, it := range batch {
				skipped[it.sub.Proposal.Commit] = true
				fmt.Fprintf(out, "warning: round %d did not decide queued %s; left queued\n", res.Round, it.sub.Proposal.Commit.Short())
			}
		}
		decided := time.Since(began)
		pub, err := m.Publish(ctx)
		r.opts.Log.Debug("aggregate cycle", "proposals", len(batch), "fetch", fetched.Seconds(), "load", (loaded - fetched).Seconds(),
			"decide", (decided - loaded).Seconds(), "publish", (time.Since(began) - decided).Seconds())
		if errors.Is(err, ledger.ErrRaced) {
			sum.Raced++
			if races++; races == maxRaces {
				return fmt.Errorf("%w; %d times in a row, so it may refuse for another reason: see what it said", err, races)
			}
			continue // the next fetch adopts the winner's journal
		}
		var rej *git.PushRejectedError
		if errors.As(err, &rej) && refusals < 2 {
			// A guard on the remote reads the refs another push is
			// writing at the same moment, and can see them half written:
			// fetch and try again before believing it.
			refusals++
			fmt.Fprintf(out, "warning: %v\n  fetching and trying again\n", err)
			continue
		}
		races, refusals = 0, 0
		if err != nil {
			return err
		}
		r.lifecycle(ctx, res)
		sum.Rounds++
		sum.Merges += res.Merges()
		if o.Target > 0 && res.DevScore >= o.Target {
			sum.Stop = "target"
			fmt.Fprintf(out, "dev reached the target (%.2f ≥ %.2f)\n", res.DevScore, o.Target)
			return nil
		}
		for _, d := range res.Decisions {
			if !d.Proposal.IsZero() {
				sum.Decided++
				sum.Outcomes[d.Outcome]++
			}
		}
		if len(pub.Refs) > 0 {
			fmt.Fprintf(out, "published %s to %s; %s left the queue\n", strings.Join(pub.Refs, ", "), o.Remote, words.Count(pub.Dequeue, "proposal"))
		}
		if err := sh.push(ctx, false); err != nil && !errors.Is(err, ledger.ErrRaced) {
			return err
		}
	}
}

// maxRaces is how many publishes in a row may lose a race before the
// aggregator stops: a remote that refuses for another reason (a stale lock
// file there) looks like a lost race every time.
const maxRaces = 10

// decidedAny says whether a round decided (or set aside) any proposal of
// batch.
func decidedAny(res *aggregate.RoundResult, batch []stepResult) bool {
	in := map[git.Hash]bool{}
	for _, it := range batch {
		in[it.sub.Proposal.Commit] = true
	}
	for _, d := range res.Decisions {
		if in[d.Proposal] {
			return true
		}
	}
	return false
}

// queued returns the proposals queued on the remote (as last fetched) that
// the local journal does not hold, oldest commit first.
func queued(ctx context.Context, repo *git.Repo, m *ledger.Remote) ([]git.Hash, error) {
	qs, err := m.Queued(ctx)
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	known, err := m.Known(ctx)
	if err != nil {
		return nil, err
	}
	var out []git.Hash
	when := map[git.Hash]time.Time{}
	for _, c := range qs {
		if known[c] {
			continue
		}
		t, err := repo.CommitTime(ctx, c)
		if err != nil {
			return nil, err
		}
		when[c] = t
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !when[out[i]].Equal(when[out[j]]) {
			return when[out[i]].Before(when[out[j]])
		}
		return out[i] < out[j]
	})
	return out, nil
}

// joinRemote checks what a remote run needs (git, a clean library, the
// merge driver, installed when missing), fetches the remote, and brings
// this repository's descent refs up to it; when the remote has none yet,
// it starts dev, stable and the journal from HEAD and pushes them.
func joinRemote(ctx context.Context, repo *git.Repo, lib *library.Library, o RemoteOptions) (*ledger.Remote, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	if o.Remote == "" {
		return nil, errors.New("no remote: name one with --remote (for example --remote origin)")
	}
	if _, err := git.CheckVersion(ctx, o.Log); err != nil {
		return nil, err
	}
	if err := validate(lib); err != nil {
		return nil, err
	}
	head, err := checkClean(ctx, repo, lib)
	if err != nil {
		return nil, err
	}
	if err := hooks.CheckMergeDriver(ctx, repo, lib.Path); errors.Is(err, hooks.ErrDriverMissing) {
		// A fresh clone (a CI job) has no merge driver: its config lives
		// in .git, not in the repository.
		if _, err := hooks.InstallMergeDriver(ctx, repo, lib.Path, false); err != nil {
			return nil, fmt.Errorf("install the merge driver in this clone: %w", err)
		}
		fmt.Fprintf(out, "installed the merge driver for %s in this clone (.git/config, .git/info/attributes)\n", lib.Path)
	} else if err != nil {
		return nil, err
	}
	m := ledger.OpenRemote(repo, o.Remote, lib.Name)
	if err := m.Fetch(ctx); err != nil {
		if msg := err.Error(); strings.Contains(msg, "does not appear to be a git repository") || strings.Contains(msg, "not found") {
			return nil, fmt.Errorf("%w (is %q a remote of this repository? see git remote -v)", err, o.Remote)
		}
		return nil, err
	}
	ad, err := m.Adopt(ctx)
	if err != nil {
		return nil, err
	}
	if !ad.Discarded.IsZero() {
		fmt.Fprintf(out, "this repository's journal of %s (%s) diverged from %s's, holding decisions %s never received: it is replaced by %s's and kept at %s\n",
			lib.Name, ad.Discarded.Short(), o.Remote, o.Remote, o.Remote, ledger.Refs{Library: lib.Name}.Replaced())
	}
	if !ad.Empty {
		return m, nil
	}
	refs := ledger.Refs{Library: lib.Name}
	dev, created, err := ledger.Start(ctx, repo, lib.Name, head)
	if err != nil {
		return nil, err
	}
	err = m.PushRefs(ctx, []string{refs.Dev(), refs.Stable(), refs.Journal()})
	switch {
	case errors.Is(err, ledger.ErrRaced):
		if err := m.Fetch(ctx); err != nil {
			return nil, err
		}
		if _, err := m.Adopt(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "%s got %s from another process first: working from it\n", o.Remote, ledger.Short(refs.Dev()))
	case err != nil:
		return nil, err
	case len(created) > 0:
		fmt.Fprintf(out, "created %s on %s at HEAD (%s)\n", ledger.Short(refs.Dev()), o.Remote, dev.Short())
	default:
		fmt.Fprintf(out, "pushed %s (%s) to %s\n", ledger.Short(refs.Dev()), dev.Short(), o.Remote)
	}
	return m, nil
}

// sharedCache moves rollout records between this process's cache and the
// remote's cache refs: pull imports what the trusted writers' refs gained
// since the last pull; update and push add this process's new records on
// top of its own writer's ref.
type sharedCache struct {
	r       *runner
	m       *ledger.Remote
	writer  string
	trusted func(writer string) bool
	seen    map[string]git.Hash // the cache commit of each writer imported up to
	shared  int                 // bytes of Stored already published
	pending int                 // bytes of Stored in the last update
	every   time.Duration       // push at most this often (0: whenever asked)
	last    time.Time           // the last push
}

// pull imports the records the trusted writers' refs gained since the last
// pull; it returns how many records it added.
func (s *sharedCache) pull(ctx context.Context) int {
	refs, err := s.m.CacheRefs(ctx)
	if err != nil {
		return 0
	}
	if s.seen == nil {
		s.seen = map[string]git.Hash{}
	}
	n := 0
	for w, c := range refs {
		if !s.trusted(w) || s.seen[w] == c {
			continue
		}
		since := s.seen[w]
		if ok, err := s.r.repo.IsAncestor(ctx, since, c); since != "" && (err != nil || !ok) {
			since = "" // rewritten: read it whole
		}
		log, err := ledger.ReadCache(ctx, s.r.repo, c, since)
		if err != nil {
			s.r.opts.Log.Warn("read a shared rollout cache", "writer", w, "err", err)
			continue
		}
		n += s.r.eval.Cache.Import(log)
		s.seen[w] = c
	}
	return n
}

// update returns the push that adds the records this process stored since
// the last push on top of its writer's ref on the remote, or none when
// there are none.
func (s *sharedCache) update(ctx context.Context) ([]git.PushUpdate, error) {
	mine := s.r.eval.Cache.Stored()
	if len(mine) == s.shared {
		return nil, nil
	}
	ref := ledger.Refs{Library: s.r.lib.Name}.Cache(s.writer)
	was, err := s.m.Value(ctx, ref)
	if err != nil {
		return nil, err
	}
	c, err := ledger.CacheCommit(ctx, s.r.repo, was, mine[s.shared:])
	if err != nil {
		return nil, err
	}
	s.pending = len(mine)
	return s.m.CacheUpdate(ctx, s.writer, c)
}

// published marks the records of the last update as shared.
func (s *sharedCache) published() {
	s.shared, s.last = max(s.shared, s.pending), time.Now()
}

// push publishes this writer's new records on their own (at most every
// s.every unless final), on top of whatever another process of the same
// writer pushed first.
func (s *sharedCache) push(ctx context.Context, final bool) error {
	if !final && s.every > 0 && time.Since(s.last) < s.every {
		return nil
	}
	for i := 0; i < 5; i++ {
		ups, err := s.update(ctx)
		if err != nil || len(ups) == 0 {
			return err
		}
		err = s.m.PushUpdates(ctx, ups)
		if err == nil {
			s.published()
			return nil
		}
		if !errors.Is(err, ledger.ErrRaced) {
			return err
		}
		if err := s.m.Fetch(ctx); err != nil {
			return err
		}
	}
	return fmt.Errorf("share rollouts: %w five times", ledger.ErrRaced)
}

// What a watch of a remote on this machine wakes for.
const (
	wakeQueued  = iota // a proposal joins the queue (the aggregator's wait)
	wakeDecided        // one leaves it, or dev moves (a waiting worker's)
)

// watchRemote returns a channel that is signalled when the remote may have
// what the caller waits for (wakeQueued, wakeDecided): on those changes to
// a remote repository on this machine (fsnotify on its refs; any change
// to packed-refs), and every interval whatever the remote is.
func watchRemote(ctx context.Context, repo *git.Repo, m *ledger.Remote, lib string, interval time.Duration, want int) (<-chan struct{}, func()) {
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				signal()
			case <-ctx.Done():
				return
			}
		}
	}()
	dir := repo.RemoteDir(ctx, m.Name)
	if dir == "" {
		return wake, cancel
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return wake, cancel
	}
	// The queue's directory when it exists, and the directories above it
	// (a first queued proposal creates it; packed refs change packed-refs).
	for _, d := range []string{dir, filepath.Join(dir, "refs"), filepath.Join(dir, "refs", "descent"), filepath.Join(dir, "refs", "descent", lib),
		filepath.Join(dir, "refs", "descent", lib, "queue"), filepath.Join(dir, "refs", "heads", "descent", lib)} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			_ = w.Add(d)
		}
	}
	go func() {
		defer w.Close()
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					_ = w.Add(ev.Name) // refs/descent/<lib>/queue appearing
				}
				if wanted(ev, dir, lib, want) {
					signal()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return wake, cancel
}

// wanted says whether a change in a watched remote is one the watch wakes
// for.
func wanted(ev fsnotify.Event, dir, lib string, want int) bool {
	name := filepath.Base(ev.Name)
	if strings.HasSuffix(name, ".lock") {
		return false // the ref is not written yet
	}
	inQueue := filepath.Dir(ev.Name) == filepath.Join(dir, "refs", "descent", lib, "queue")
	switch {
	case name == "packed-refs" && filepath.Dir(ev.Name) == dir:
		return true
	case want == wakeQueued:
		return inQueue && ev.Has(fsnotify.Create) || name == "queue"
	case inQueue:
		return ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	}
	return name == "dev" && filepath.Dir(ev.Name) == filepath.Join(dir, "refs", "heads", "descent", lib)
}

// afterStop is the context of what a remote run still pushes once its own
// context has ended (a proposal made, the last rollouts): a minute more.
func afterStop(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
}

// withMaxTime bounds ctx by d when d is set.
func withMaxTime(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// stopOf names why a remote run whose context may have ended stopped.
func stopOf(ctx context.Context, maxTime time.Duration) string {
	switch {
	case maxTime > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "max-time"
	case ctx.Err() != nil:
		return "interrupted"
	}
	return "done"
}
