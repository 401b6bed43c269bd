package aggregate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// keywordScorer scores a library version by its SKILL.md: a task passes
// when the file has a line equal to the task's Expected text. It counts
// how often each version is scored and can run a hook on first use.
type keywordScorer struct {
	repo *git.Repo

	mu     sync.Mutex
	calls  int
	before func()
	every  func() // runs before every rollout
	est    map[string]time.Duration
	rolled map[git.Hash][]string // the tasks rolled out on each version, in the order they started
}

func (s *keywordScorer) Estimate(task string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.est[task]
}

func (s *keywordScorer) Rollout(ctx context.Context, libTree git.Hash, t eval.Task, repeat int) (Outcome, error) {
	s.mu.Lock()
	s.calls++
	if s.rolled == nil {
		s.rolled = map[git.Hash][]string{}
	}
	s.rolled[libTree] = append(s.rolled[libTree], t.ID)
	hook, every := s.before, s.every
	s.before = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	if every != nil {
		every()
	}
	data, err := s.repo.ReadFile(ctx, libTree, "SKILL.md")
	if err != nil {
		return Outcome{}, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[l] = true
	}
	if have["POISON"] {
		have["A"] = false // contradicts A: merges cleanly, scores worse
	}
	out := Outcome{Tokens: 1, Cost: 0.001}
	if have[t.Expected] {
		out.Reward = 1
	}
	return out, nil
}

// fixture is a repository with a library at skills/s and its aggregator.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	repo   *git.Repo
	lib    *library.Library
	agg    *Aggregator
	scorer *keywordScorer
	start  git.Hash
}

func newFixture(t *testing.T, skill string, validation ...string) *fixture {
	t.Helper()
	ctx, repo := gittest.NewRepo(t)
	f := &fixture{t: t, ctx: ctx, repo: repo}
	// The test binary stands in for `git-descent merge-driver` (see
	// TestDriverProcess), routed to the library's files as init does. git
	// gets only the environment it needs, so the driver's command sets the
	// variable that makes the binary a driver.
	driver := driverEnv + "=1 " + os.Args[0] + " -test.run=^TestDriverProcess$ -- %O %A %B %L %P"
	if err := repo.ConfigSet(ctx, "", "merge.descent.driver", driver); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo.GitDir(), "info", "attributes"), []byte("/skills/s/** merge=descent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.start = f.commit("", skill)
	if _, _, err := ledger.Start(ctx, repo, "s", f.start); err != nil {
		t.Fatal(err)
	}
	f.lib = library.New("skills/s")
	f.lib.PromoteAfter = 2
	var tasks []eval.Task
	for i, v := range validation {
		tasks = append(tasks, eval.Task{ID: string(rune('a' + i)), Prompt: "p", Expected: v})
	}
	f.scorer = &keywordScorer{repo: repo}
	f.agg = NewAggregator(repo, f.lib, tasks, f.scorer, nil)
	f.agg.Train = map[string]eval.Task{}
	return f
}

// commit writes SKILL.md with content on top of parent (none when "").
func (f *fixture) commit(parent git.Hash, content string) git.Hash {
	f.t.Helper()
	blob, err := f.repo.HashObject(f.ctx, []byte(content))
	if err != nil {
		f.t.Fatal(err)
	}
	var base git.Hash
	var parents []git.Hash
	if parent != "" {
		base, _ = f.repo.TreeOf(f.ctx, parent, "")
		parents = []git.Hash{parent}
	}
	tree, err := f.repo.EditTree(f.ctx, base, []git.TreeEdit{{Path: "skills/s/SKILL.md", Hash: blob}})
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := f.repo.CommitTree(f.ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: "c\n"})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// propose makes worker's proposal: SKILL.md = content on top of dev. Its
// evidence names one train task per line it expects (registered in the
// aggregator), so the passenger check can re-run it.
func (f *fixture) propose(worker, content string, before, after float64, evidence ...string) *Submission {
	f.t.Helper()
	dev, err := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	if err != nil {
		f.t.Fatal(err)
	}
	c := f.commit(dev, content)
	tree, _ := f.repo.TreeOf(f.ctx, c, "")
	var ids []string
	for i, want := range evidence {
		id := fmt.Sprintf("w%s-%d", worker, i)
		f.agg.Train[id] = eval.Task{ID: id, Prompt: "p", Expected: want}
		ids = append(ids, id)
	}
	p := &ledger.Proposal{Subject: "edit by " + worker, Evidence: ledger.Evidence{
		Library: "s", Worker: worker, Base: dev, Tasks: ids, RewardBefore: before, RewardAfter: after,
	}}
	if err := ledger.WriteProposal(f.ctx, f.repo, p, tree); err != nil {
		f.t.Fatal(err)
	}
	return &Submission{Proposal: p, Paths: []string{"SKILL.md"}}
}

func (f *fixture) round(subs ...*Submission) *RoundResult {
	f.t.Helper()
	res, err := f.agg.Round(f.ctx, subs, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// moveDev moves dev from one commit to another as git-descent does: with a
// journal record (another aggregator's, say).
func (f *fixture) moveDev(from, to git.Hash) {
	f.t.Helper()
	j := ledger.OpenJournal(f.repo, "s")
	head, err := j.Head(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := j.Record(f.ctx, head, ledger.Entry{State: head.State, Message: "test: move dev\n",
		Moves: []ledger.Move{{Ref: "refs/heads/descent/s/dev", From: from, To: to}}}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) skill(rev string) string {
	f.t.Helper()
	data, err := f.repo.ReadFile(f.ctx, git.Hash(rev), "skills/s/SKILL.md")
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

func outcomes(res *RoundResult) map[string]ledger.Outcome {
	m := map[string]ledger.Outcome{}
	for _, d := range res.Decisions {
		m[d.Worker] = d.Outcome
	}
	return m
}

func TestRoundFusesCompatibleProposals(t *testing.T) {
	f := newFixture(t, "# S\n\nrules:\nend\n", "A", "B", "C")
	a := f.propose("1", "# S\n\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "# S\n\nrules:\nB\nend\n", 0, 1, "B")
	res := f.round(a, b)
	if got := outcomes(res); got["1"] != ledger.Committed || got["2"] != ledger.Committed {
		t.Fatalf("outcomes = %v", got)
	}
	if len(res.Verdicts) != 1 {
		t.Fatalf("verdicts = %+v", res.Verdicts)
	}
	v := res.Verdicts[0]
	// Tokens: dev on 3 tasks, then both again on the 2 won tasks, since no
	// repeat had yet shown how reproducible the agent is; and the fusion
	// on those of its 3 tasks that rank, which rolls them out at the same
	// time against its members alone, did not get to first.
	if v.Gate == nil || v.Gate.Wins != 2 || v.Gate.Losses != 0 || !v.Gate.Accept || v.Gate.Tokens < 7 || v.Gate.Tokens > 10 || v.Gate.Rerolls != 4 {
		t.Fatalf("gate = %+v (tokens %d)", v.Gate, v.Gate.Tokens)
	}
	parents, err := f.repo.Parents(f.ctx, v.Merge)
	if err != nil {
		t.Fatal(err)
	}
	if len(parents) != 3 || parents[0] != f.start {
		t.Fatalf("merge parents = %v, want dev and both proposals", parents)
	}
	if got, want := f.skill("refs/heads/descent/s/dev"), "# S\n\nrules:\nA\nB\nend\n"; got != want {
		t.Fatalf("dev SKILL.md = %q, want %q", got, want)
	}
	for _, d := range res.Decisions {
		if len(d.FusedWith) != 1 || d.Merge != v.Merge || d.Gate == nil {
			t.Errorf("decision %+v lacks fusion or gate details", d)
		}
	}
}

// A conflicting proposal that scores better alone on validation replaces
// the member it conflicts with, even when that member came first.
func TestRoundConflictKeepsBetterProposal(t *testing.T) {
	f := newFixture(t, "mode: none\n", "mode: good", "mode: good", "x", "x")
	half := f.propose("1", "mode: half\n", 0, 1, "mode: half") // more train gain: merged first
	good := f.propose("2", "mode: good\n", 0, 0.5, "mode: good")
	res := f.round(half, good)
	got := outcomes(res)
	if got["1"] != ledger.ConflictLost || got["2"] != ledger.Committed {
		t.Fatalf("outcomes = %v", got)
	}
	for _, d := range res.Decisions {
		if d.Worker == "1" && !strings.Contains(d.Reason, "scores better alone on validation (0.50 vs 0.00)") {
			t.Errorf("loser's reason = %q", d.Reason)
		}
	}
	if got := f.skill("refs/heads/descent/s/dev"); got != "mode: good\n" {
		t.Fatalf("dev SKILL.md = %q", got)
	}
	// And the other way round: the better one first keeps its place.
	f2 := newFixture(t, "mode: none\n", "mode: good", "mode: good", "x", "x")
	good2 := f2.propose("1", "mode: good\n", 0, 1, "mode: good")
	half2 := f2.propose("2", "mode: half\n", 0, 0.5, "mode: half")
	if got := outcomes(f2.round(good2, half2)); got["1"] != ledger.Committed || got["2"] != ledger.ConflictLost {
		t.Fatalf("outcomes = %v", got)
	}
}

// The gate starts the rollouts it expects to take longest first, the
// scorer's estimates reaching it (one rollout at a time here, so the order
// they start in is the order they are asked for).
func TestGateStartsLongestFirst(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "B", "C", "D")
	f.agg.Jobs = 1
	f.scorer.est = map[string]time.Duration{"c": 5 * time.Second, "a": time.Second}
	p := f.propose("1", "rules:\nB\n", 0, 1, "B")
	f.round(p)
	cand, err := f.repo.TreeOf(f.ctx, p.Proposal.Commit, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	got := f.scorer.rolled[cand]
	if len(got) < 4 || got[0] != "c" || got[1] != "a" {
		t.Fatalf("the candidate's rollouts started in the order %v; want c, then a, then the others", got)
	}
}

func TestRoundGateRejects(t *testing.T) {
	f := newFixture(t, "A\nB\n", "A", "B", "C", "D")
	f.seedNoise(agreeing(12))               // a reproducible agent
	worse := f.propose("1", "A\nC\n", 0, 1) // gains C, loses B
	res := f.round(worse)
	if got := outcomes(res)["1"]; got != ledger.Rejected {
		t.Fatalf("outcome = %v", got)
	}
	if res.Decisions[0].Reason != "probably fails 1 validation task dev passes every time (at most 0 allowed)" {
		t.Fatalf("reason = %q", res.Decisions[0].Reason)
	}
	lost := f.propose("4", "A\n", 0, 1) // loses B, gains nothing: decided on the tasks dev fails alone
	res = f.round(lost)
	if res.Decisions[0].Outcome != ledger.Rejected || res.Decisions[0].Reason != "fixes no validation task dev fails (decided after 2 of 4 tasks)" {
		t.Fatalf("decision = %+v", res.Decisions[0])
	}
	dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	if dev != f.start {
		t.Fatal("dev moved after a rejection")
	}
	same := f.propose("2", "A\nB\nnote\n", 0, 1)
	res = f.round(same)
	if res.Decisions[0].Outcome != ledger.Rejected || res.Decisions[0].Reason != "fixes no validation task dev fails (decided after 2 of 4 tasks)" {
		t.Fatalf("decision = %+v", res.Decisions[0])
	}
	dup := f.propose("3", "A\nB\n", 0, 1)
	res = f.round(dup)
	if res.Decisions[0].Outcome != ledger.Duplicate {
		t.Fatalf("decision = %+v", res.Decisions[0])
	}
}

// A dev moved by something other than git-descent (here while the round
// measures) is never built on: the round stops with the ref named, and
// nothing is decided on it.
func TestRoundRefusesDevMovedOutside(t *testing.T) {
	f := newFixture(t, "rules:\nend\n", "A", "A", "B")
	a := f.propose("1", "rules:\nA\nend\n", 0, 1)
	var other git.Hash
	f.scorer.before = func() {
		other = f.commit(f.start, "rules:\nend\nB\n")
		if err := f.repo.SetRef(f.ctx, git.SetRefRequest{Ref: "refs/heads/descent/s/dev", Hash: other, OldHash: f.start}); err != nil {
			t.Error(err)
		}
	}
	_, err := f.agg.Round(f.ctx, []*Submission{a}, nil)
	var moved *ledger.MovedError
	if !errors.As(err, &moved) || moved.Ref != "refs/heads/descent/s/dev" || moved.Want != f.start || moved.Got != other {
		t.Fatalf("round = %v, want dev moved from %s to %s", err, f.start.Short(), other.Short())
	}
	if ds, err := ledger.OpenJournal(f.repo, "s").DecisionsFor(f.ctx, a.Proposal.Commit); !errors.Is(err, ledger.ErrNoDecision) {
		t.Fatalf("decisions on a moved dev: %+v, %v", ds, err)
	}
	// The next round refuses it too, before measuring anything.
	if _, err := f.agg.Round(f.ctx, []*Submission{a}, nil); !errors.As(err, &moved) {
		t.Fatalf("next round = %v", err)
	}
}

// When dev is moved outside after a round has committed a candidate, the
// commit stands, recorded; the round stops before the next one, and the
// journal still says where git-descent left dev.
func TestRoundDevMovedOutsideKeepsEarlierCommits(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B")
	// No gain in their own evidence: each is gated alone, A first.
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 0)
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 0)
	var once sync.Once
	f.scorer.every = func() {
		dev, err := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
		if err != nil || dev == f.start {
			return // A is not merged yet
		}
		once.Do(func() {
			other := f.commit(dev, "x\ntop\nrules:\nA\nend\n")
			if err := f.repo.SetRef(f.ctx, git.SetRefRequest{Ref: "refs/heads/descent/s/dev", Hash: other, OldHash: dev}); err != nil {
				t.Error(err)
			}
		})
	}
	_, err := f.agg.Round(f.ctx, []*Submission{a, b}, nil)
	var moved *ledger.MovedError
	if !errors.As(err, &moved) {
		t.Fatalf("round = %v, want dev moved", err)
	}
	j := ledger.OpenJournal(f.repo, "s")
	ds, err := j.DecisionsFor(f.ctx, a.Proposal.Commit)
	if err != nil || len(ds) != 1 || ds[0].Outcome != ledger.Committed {
		t.Fatalf("A: decisions = %+v, %v; want one committed", ds, err)
	}
	if ds, err := j.DecisionsFor(f.ctx, b.Proposal.Commit); !errors.Is(err, ledger.ErrNoDecision) {
		t.Fatalf("B: decisions = %+v, %v; want none", ds, err)
	}
	head, err := j.Head(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head.State.Heads.Dev != moved.Want || head.State.Heads.Dev != ds[0].Merge {
		t.Errorf("journal heads %+v, the moved error wants %s, A merged as %s", head.State.Heads, moved.Want.Short(), ds[0].Merge.Short())
	}
}

func TestRoundPromotesAfterCleanRounds(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	res := f.round(f.propose("1", "rules:\nA\n", 0, 1))
	if res.Promotion != nil {
		t.Fatal("promoted after one round")
	}
	res = f.round()
	if res.Promotion == nil || res.Promotion.To != res.Dev || res.Promotion.From != f.start {
		t.Fatalf("promotion = %+v", res.Promotion)
	}
	stable, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/stable")
	if stable != res.Dev {
		t.Fatalf("stable = %s, want dev %s", stable, res.Dev)
	}
	head, err := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head.State.Round != 2 || head.State.Commits != 1 || len(head.State.Promotions) != 1 || head.State.CleanRounds != 0 {
		t.Fatalf("state = %+v", head.State)
	}
}

// promote-after counts the rounds since dev last moved: rounds that
// rejected everything before the first commit must not count.
func TestPromoteAfterCountsFromDevsLastMove(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	f.lib.PromoteAfter = 3
	for range 4 {
		if res := f.round(f.propose("1", "rules:\nPOISON\n", 0, 1)); res.Dev != f.start {
			t.Fatalf("a poisoned proposal was committed")
		}
	}
	res := f.round(f.propose("1", "rules:\nA\n", 0, 1))
	if res.Dev == f.start || res.Promotion != nil {
		t.Fatalf("the commit round: dev %s, promotion %+v; want dev moved and no promotion", res.Dev.Short(), res.Promotion)
	}
	if res = f.round(); res.Promotion != nil {
		t.Fatalf("promoted in the second round after dev moved, with promote-after 3")
	}
	if res = f.round(); res.Promotion == nil {
		t.Fatalf("not promoted in the third round after dev moved, with promote-after 3")
	}
}

// An undone promotion is not made again by rounds while dev stays where it
// is; once dev moves on, promotion resumes.
func TestUndonePromotionStaysUndone(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "B")
	f.lib.PromoteAfter = 1
	res := f.round(f.propose("1", "rules:\nA\n", 0, 1))
	if res.Promotion == nil {
		t.Fatal("not promoted with promote-after 1")
	}
	p, err := f.agg.Undo(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.From != f.start || p.To != res.Dev || p.UndoneIn == 0 {
		t.Fatalf("undone %+v", p)
	}
	if stable, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/stable"); stable != f.start {
		t.Fatalf("stable = %s after undo, want %s", stable.Short(), f.start.Short())
	}
	for range 2 {
		if res := f.round(); res.Promotion != nil {
			t.Fatalf("a round promoted the undone promotion again")
		}
	}
	if _, err := f.agg.Undo(f.ctx); !errors.Is(err, ErrNothingToDo) {
		t.Fatalf("a second undo: %v, want nothing to do", err)
	}
	res = f.round(f.propose("1", "rules:\nA\nB\n", 0, 1))
	if res.Promotion == nil || res.Promotion.From != f.start || res.Promotion.To != res.Dev {
		t.Fatalf("dev moved on: promotion %+v, want stable from the start to the new dev", res.Promotion)
	}
}

// Two promotions in a row, both undone: stable is back at the start, and no
// round promotes it from there to the dev the user took it away from.
func TestTwoUndonePromotionsStayUndone(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "B")
	f.lib.PromoteAfter = 1
	if res := f.round(f.propose("1", "rules:\nA\n", 0, 1)); res.Promotion == nil {
		t.Fatal("not promoted to the first commit")
	}
	if res := f.round(f.propose("1", "rules:\nA\nB\n", 0, 1)); res.Promotion == nil || res.Promotion.From == f.start {
		t.Fatalf("second promotion %+v, want one from the first commit", res.Promotion)
	}
	for range 2 {
		if _, err := f.agg.Undo(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if stable, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/stable"); stable != f.start {
		t.Fatalf("stable = %s after two undos, want the start", stable.Short())
	}
	for range 2 {
		if res := f.round(); res.Promotion != nil {
			t.Fatalf("a round promoted %s → %s after both promotions were undone", res.Promotion.From.Short(), res.Promotion.To.Short())
		}
	}
}

// The same change the gate rejected against a dev, proposed again against
// that dev (by another worker, with another subject), is rejected without
// a gate: not one rollout of it.
func TestRejectedChangeIsNotGatedAgain(t *testing.T) {
	f := newFixture(t, "rules:\nA\n", "A", "A", "B")
	first := f.propose("1", "rules:\nA\nPOISON\nB\n", 0, 1)
	res := f.round(first)
	if got := outcomes(res); got["1"] != ledger.Rejected {
		t.Fatalf("round 1: %v, want the poisoned change rejected", got)
	}
	cand, _ := f.repo.TreeOf(f.ctx, first.Proposal.Commit, "skills/s")
	rolled := len(f.scorer.rolled[cand])
	if rolled == 0 {
		t.Fatal("the first proposal was never rolled out")
	}
	res = f.round(f.propose("2", "rules:\nA\nPOISON\nB\n", 0, 1))
	if got := outcomes(res); got["2"] != ledger.Rejected || !strings.Contains(res.Decisions[0].Reason, "not gated again") ||
		!strings.Contains(res.Decisions[0].Reason, first.Proposal.Commit.Short()) {
		t.Fatalf("round 2: %v, %q; want it rejected as a repeat of %s", got, res.Decisions[0].Reason, first.Proposal.Commit.Short())
	}
	if n := len(f.scorer.rolled[cand]); n != rolled {
		t.Fatalf("the repeated change was rolled out %d more times", n-rolled)
	}
	// A cross-fitted gate judges each proposal on the tasks its own
	// proposers did not see: a repeat is gated again.
	f.agg.CrossFit = true
	f.agg.refused = nil
	f.round(f.propose("3", "rules:\nA\nPOISON\n", 0, 1))
	res = f.round(f.propose("4", "rules:\nA\nPOISON\n", 0, 1))
	if strings.Contains(res.Decisions[0].Reason, "not gated again") {
		t.Fatalf("cross-fitted: %q, want it gated", res.Decisions[0].Reason)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// A proposal is decided once: made again (the same edit on the same dev,
// so the same commit) in a later round or by a later run, or handed over
// twice in one round, it gets no second decision.
func TestRoundDecidesAProposalOnce(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B")
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 1)
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 1)
	f.round(a, a)
	res := f.round(a, b)
	if len(res.Decisions) != 1 || res.Decisions[0].Proposal != b.Proposal.Commit {
		t.Errorf("second round decided %+v, want only w2's proposal", res.Decisions)
	}
	// A new aggregator (a later run) knows the journal's decisions too.
	f.agg = NewAggregator(f.repo, f.agg.Library, f.agg.Validation, f.agg.Scorer, nil)
	if res := f.round(a); len(res.Decisions) != 0 {
		t.Errorf("a later run decided %+v again", res.Decisions)
	}
	ds, err := ledger.OpenJournal(f.repo, "s").DecisionsFor(f.ctx, a.Proposal.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Errorf("w1's proposal has %d decisions, want 1: %+v", len(ds), ds)
	}
}

// With Gates above one, candidates are evaluated at once, each against the
// dev of the moment, and decided in order: the first accepted is
// committed, a later accepted one is evaluated again on the new dev before
// it is committed, a rejected one stays rejected.
func TestParallelGates(t *testing.T) {
	f := newFixture(t, "top\nrules:\nend\n", "A", "B", "C", "D")
	f.agg.Gates = 3
	peak, _ := trackVersions(f)
	f.seedNoise(agreeing(12))
	f.agg.Jobs = 8
	// No gain in their own evidence: each is a candidate of its own.
	a := f.propose("1", "top\nrules:\nA\nend\n", 0, 0)
	b := f.propose("2", "top\nrules:\nend\nB\n", 0, 0)
	c := f.propose("3", "top\nrules:\nend\nnote\n", 0, 0)
	res := f.round(a, b, c)
	got := outcomes(res)
	if got["1"] != ledger.Committed || got["2"] != ledger.Committed || got["3"] != ledger.Rejected {
		t.Fatalf("outcomes = %v, want w1 and w2 committed, w3 rejected", got)
	}
	if most := peak(); most < 3 {
		t.Errorf("at most %d library versions were rolled out at once, want the three candidates' (and dev's) together", most)
	}
	if got, want := f.skill("refs/heads/descent/s/dev"), "top\nrules:\nA\nend\nB\n"; got != want {
		t.Errorf("dev SKILL.md = %q, want %q", got, want)
	}
	// w2's proposal was gated again on the dev w1's merge made.
	var second *ledger.Gate
	for _, v := range res.Verdicts {
		if len(v.Members) == 1 && v.Members[0] == b {
			second = v.Gate
		}
	}
	if second == nil || second.Before == 0 {
		t.Errorf("w2's gate = %+v, want it against the dev that passes A", second)
	}
}

type scorerFunc func(ctx context.Context, tree git.Hash, t eval.Task, repeat int) (Outcome, error)

func (s scorerFunc) Rollout(ctx context.Context, tree git.Hash, t eval.Task, repeat int) (Outcome, error) {
	return s(ctx, tree, t, repeat)
}

// A proposal the journal holds (Hold) stays queued and reachable once its
// worker's branch has moved on to the next one: the next round, even of
// another aggregator (a run that stopped after holding it), decides both,
// and holding it again, or once decided, writes nothing twice.
func TestHeldProposalIsDecidedAfterItsBranchMovedOn(t *testing.T) {
	f := newFixture(t, "# S\n\nrules:\nend\n", "A", "B", "C")
	a := f.propose("1", "# S\n\nrules:\nA\nend\n", 0, 1, "A")
	if err := f.agg.Hold(f.ctx, []*Submission{a}); err != nil {
		t.Fatal(err)
	}
	if err := f.agg.Hold(f.ctx, []*Submission{a}); err != nil {
		t.Fatal(err)
	}
	b := f.propose("1", "# S\n\nrules:\nB\nend\n", 0, 1, "B") // the same worker's next: its branch leaves a
	j := ledger.OpenJournal(f.repo, "s")
	f.queuedAlone(a, "after holding a twice")
	// A new aggregator, as the next run would have, given only b.
	next := NewAggregator(f.repo, f.lib, f.agg.Validation, f.scorer, nil)
	next.Train = f.agg.Train
	res, err := next.Round(f.ctx, []*Submission{b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	decided := map[git.Hash]ledger.Outcome{}
	for _, d := range res.Decisions {
		decided[d.Proposal] = d.Outcome
	}
	if decided[a.Proposal.Commit] != ledger.Committed || decided[b.Proposal.Commit] != ledger.Committed {
		t.Fatalf("decisions %v: want the held proposal and the branch's both committed", decided)
	}
	head, err := j.Head(f.ctx)
	if err != nil || len(head.State.Refile) != 0 {
		t.Fatalf("queue after the round: %+v, %v", head.State.Refile, err)
	}
	if err := next.Hold(f.ctx, []*Submission{a}); err != nil {
		t.Fatal(err)
	}
	if after, err := j.Head(f.ctx); err != nil || after.Commit != head.Commit {
		t.Fatalf("holding a decided proposal wrote the journal: %s → %s, %v", head.Commit.Short(), after.Commit.Short(), err)
	}
}

// A held proposal handed to the round that decides it is decided as handed
// in, with what only the worker knew (its timings), not as read back from
// its commit.
func TestHeldProposalKeepsTheWorkersTimings(t *testing.T) {
	f := newFixture(t, "# S\n\nrules:\nend\n", "A", "B")
	a := f.propose("1", "# S\n\nrules:\nA\nend\n", 0, 1, "A")
	a.Proposal.ProposeSeconds = 1.5
	if err := f.agg.Hold(f.ctx, []*Submission{a}); err != nil {
		t.Fatal(err)
	}
	res := f.round(a)
	if len(res.Decisions) != 1 || res.Decisions[0].Outcome != ledger.Committed || res.Decisions[0].ProposeSeconds != 1.5 {
		t.Fatalf("decisions %+v: want a committed once, proposing for 1.5 s", res.Decisions)
	}
}

// Hold may run while a round does (a worker holding its last proposal
// before writing the next): the round's records, compare-and-swaps on the
// journal, build on what Hold wrote and keep its proposal queued, which
// the next round decides.
func TestHoldDuringARound(t *testing.T) {
	f := newFixture(t, "# S\n\nrules:\nend\n", "A", "B", "C")
	a := f.propose("1", "# S\n\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "# S\n\nrules:\nend\nB\n", 0, 1, "B")
	held := make(chan error, 1)
	f.scorer.before = func() { held <- f.agg.Hold(f.ctx, []*Submission{b}) }
	res := f.round(a)
	if err := <-held; err != nil {
		t.Fatalf("hold during the round: %v", err)
	}
	if got := outcomes(res); len(got) != 1 || got["1"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want w1 committed alone", got)
	}
	f.queuedAlone(b, "after the round (held during it)")
	if got := outcomes(f.round()); got["2"] != ledger.Committed {
		t.Fatalf("next round: %v, want the held proposal committed", got)
	}
}

// A Hold during a round builds on the journal as the round last wrote it:
// when another writer moved the journal meanwhile, the Hold fails as the
// round's next record would, instead of taking that writer's journal for
// the round's and overwriting what it wrote.
func TestHoldDuringARoundDoesNotAdoptAnotherWriter(t *testing.T) {
	f := newFixture(t, "# S\n\nrules:\nend\n", "A", "B", "C")
	a := f.propose("1", "# S\n\nrules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "# S\n\nrules:\nend\nB\n", 0, 1, "B")
	c := f.propose("3", "# S\n\nrules:\nend\nC\n", 0, 1, "C")
	j := ledger.OpenJournal(f.repo, "s")
	held := make(chan error, 1)
	f.scorer.before = func() {
		head, err := j.Head(f.ctx)
		if err == nil {
			_, err = j.Queue(f.ctx, head, []*ledger.Proposal{c.Proposal}) // the other writer
		}
		if err != nil {
			held <- err
			return
		}
		held <- f.agg.Hold(f.ctx, []*Submission{b})
	}
	if _, err := f.agg.Round(f.ctx, []*Submission{a}, nil); err == nil {
		t.Error("the round went on over another writer's journal")
	}
	if err := <-held; err == nil {
		t.Error("a Hold during the round built on another writer's journal")
	}
	head, err := j.Head(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(head.State.Refile, func(r ledger.Refile) bool { return r.Proposal == c.Proposal.Commit }) {
		t.Errorf("the other writer's queued proposal left the queue: %+v", head.State.Refile)
	}
}

// queuedAlone fails the test unless the journal queues s and nothing
// else, and keeps it reachable; when says at what point.
func (f *fixture) queuedAlone(s *Submission, when string) {
	f.t.Helper()
	head, err := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(head.State.Refile) != 1 || head.State.Refile[0].Proposal != s.Proposal.Commit {
		f.t.Fatalf("queue %s = %+v, want %s alone", when, head.State.Refile, s.Proposal.Commit.Short())
	}
	if ok, err := f.repo.IsAncestor(f.ctx, s.Proposal.Commit, head.Commit); err != nil || !ok {
		f.t.Fatalf("queued proposal %s reachable from the journal %s: %v, %v", s.Proposal.Commit.Short(), when, ok, err)
	}
}
