package aggregate

import (
	"context"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

func decisionOf(t *testing.T, res *RoundResult, worker string) ledger.Decision {
	t.Helper()
	for _, d := range res.Decisions {
		if d.Worker == worker {
			return d
		}
	}
	t.Fatalf("no decision for worker %s in %+v", worker, res.Decisions)
	return ledger.Decision{}
}

// A proposal whose own evidence shows no gain does not ride in a fusion:
// it gets a gate of its own, and fails it when it helps nothing.
func TestNoPassengers(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A", "B")
	a := f.propose("1", "rules:\nA\n", 0, 1, "A")
	w := f.propose("2", "rules:\nW\n", 0, 0, "Z") // its own task stays failing
	res := f.round(a, w)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Committed || len(got.FusedWith) != 0 {
		t.Fatalf("gainer: %+v", got)
	}
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.Rejected || got.Reason != "fixes no validation task dev fails (decided after 1 of 3 tasks)" {
		t.Fatalf("passenger: %+v", got)
	}
	if len(res.Verdicts) != 2 || len(res.Verdicts[0].Members) != 1 {
		t.Fatalf("verdicts: %+v", res.Verdicts)
	}
	if strings.Contains(f.skill("refs/heads/descent/s/dev"), "W") {
		t.Fatal("the passenger reached dev")
	}
}

// Two proposals that merge cleanly but contradict each other: the fusion
// scores below the better one alone, which goes on; the other is re-filed.
func TestSemanticConflict(t *testing.T) {
	f := newFixture(t, "rules:\nend\n", "A", "A", "B")
	f.lib.Tournament = true
	a := f.propose("1", "rules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "rules:\nend\nPOISON\nB\n", 0, 1, "B")
	res := f.round(a, b)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Committed {
		t.Fatalf("better single: %+v", got)
	}
	got := decisionOf(t, res, "2")
	if got.Outcome != ledger.Semantic || !strings.Contains(got.Reason, "together they score 0.33") || !strings.Contains(got.Reason, "re-filed") {
		t.Fatalf("contradicting: %+v", got)
	}
	head, _ := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	fs := head.State.Fusion
	if fs.Contested != 1 || fs.SingleWins != 1 || fs.LossCount != 1 || fs.WorstLoss >= 0 {
		t.Fatalf("fusion stats = %+v", fs)
	}
	if len(head.State.Refile) != 1 || head.State.Refile[0].Proposal != b.Proposal.Commit {
		t.Fatalf("refile = %+v", head.State.Refile)
	}
}

// advance commits to dev directly, as rounds would: n changes to SKILL.md.
func (f *fixture) advance(n int, line string) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
		c := f.commit(dev, f.skill(string(dev))+line+"\n")
		f.moveDev(dev, c)
	}
}

// Guarded staleness: within α a stale proposal is merged onto the current
// dev (a real three-way merge) and re-verified; beyond α it is set aside,
// re-filed, and expires after RefileLimit rounds.
func TestGuardedStaleness(t *testing.T) {
	f := newFixture(t, "top\nrules:\n", "A", "A", "C")
	f.lib.Alpha, f.lib.RefileLimit, f.lib.HotChanges = 2, 1, 0
	near := f.propose("1", "top\nA\nrules:\n", 0, 1, "A") // edits the top
	f.advance(2, "x")                                     // dev appends twice
	res := f.round(near)
	got := decisionOf(t, res, "1")
	if got.Outcome != ledger.Committed || !got.Rebased || got.Staleness != 2 || got.Alpha != 2 {
		t.Fatalf("within α: %+v", got)
	}
	if dev := f.skill("refs/heads/descent/s/dev"); dev != "top\nA\nrules:\nx\nx\n" {
		t.Fatalf("three-way merge lost something: %q", dev)
	}

	far := f.propose("2", "top\nrules:\nC\n", 0, 1, "C")
	f.advance(3, "y")
	res = f.round(far)
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.Stale || got.Staleness != 3 || got.Attempts != 1 {
		t.Fatalf("beyond α: %+v", got)
	}
	res = f.round() // re-filed: considered again, then expires
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.Expired || !strings.Contains(got.Reason, "expires") {
		t.Fatalf("second time: %+v", got)
	}
	head, _ := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if len(head.State.Refile) != 0 {
		t.Fatalf("still queued: %+v", head.State.Refile)
	}
}

// A file dev changed often narrows α.
func TestHotFileNarrowsAlpha(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	f.lib.Alpha, f.lib.HotChanges = 4, 3
	p := f.propose("1", "A\nrules:\n", 0, 1, "A")
	f.advance(3, "z")
	res := f.round(p)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Stale || got.Alpha != 2 {
		t.Fatalf("hot file: %+v", got)
	}
}

func TestTrustRegion(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	f.lib.MaxLines = 3
	big := f.propose("1", "rules:\nA\n1\n2\n3\n", 0, 1, "A")
	res := f.round(big)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Oversized || got.Reason != "changes 4 lines; the trust region allows 3 (max-changed-lines)" {
		t.Fatalf("oversized: %+v", got)
	}
}

type fakeOracle struct {
	failure string
	calls   int
}

func (o *fakeOracle) Check(ctx context.Context, cand, dev git.Hash) (string, error) {
	o.calls++
	return o.failure, nil
}

// Changes to guarded (L1) files need the oracle, and go one at a time.
func TestGuardedFilesNeedTheOracle(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	script := func(w string) *Submission {
		dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
		blob, _ := f.repo.HashObject(f.ctx, []byte("rules:\nA\n"))
		sblob, _ := f.repo.HashObject(f.ctx, []byte("echo "+w+"\n"))
		base, _ := f.repo.TreeOf(f.ctx, dev, "")
		tree, err := f.repo.EditTree(f.ctx, base, []git.TreeEdit{{Path: "skills/s/SKILL.md", Hash: blob}, {Path: "skills/s/scripts/run.sh", Hash: sblob}})
		if err != nil {
			t.Fatal(err)
		}
		p := &ledger.Proposal{Subject: "script", Evidence: ledger.Evidence{Library: "s", Worker: w, Base: dev}}
		if err := ledger.WriteProposal(f.ctx, f.repo, p, tree); err != nil {
			t.Fatal(err)
		}
		return &Submission{Proposal: p, Paths: []string{"SKILL.md", "scripts/run.sh"}}
	}
	res := f.round(script("1"))
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.OracleVeto || !strings.Contains(got.Reason, "no oracle is configured") {
		t.Fatalf("no oracle: %+v", got)
	}
	o := &fakeOracle{failure: "tests failed: 1 of 3"}
	f.agg.Oracle = o
	res = f.round(script("2"))
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.OracleVeto || got.Oracle != "failed the oracle: tests failed: 1 of 3" {
		t.Fatalf("failing oracle: %+v", got)
	}
	o.failure = ""
	res = f.round(script("3"))
	if got := decisionOf(t, res, "3"); got.Outcome != ledger.Committed || got.Oracle != "passed the oracle" {
		t.Fatalf("passing oracle: %+v", got)
	}
}

type fakeRepairer struct {
	f       *fixture
	decline bool
}

func (r *fakeRepairer) Repair(ctx context.Context, s *Submission, dev git.Hash) (*Submission, error) {
	if r.decline {
		return nil, nil
	}
	content := r.f.skill(string(dev)) + "A\n"
	fixed := r.f.propose(s.Proposal.Worker+"r", content, 0, 1, "A")
	return fixed, nil
}

// Reflective staleness: a stale proposal is re-made on the current dev by
// the proposer, or declined; both are recorded.
func TestReflectiveRepair(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	f.lib.Staleness = library.StalenessReflective
	f.agg.Repairer = &fakeRepairer{f: f}
	stale := f.propose("1", "rules:\nA\n", 0, 1, "A")
	f.advance(1, "x")
	res := f.round(stale)
	got := decisionOf(t, res, "1")
	if got.Outcome != ledger.Repaired || got.RepairedAs.IsZero() {
		t.Fatalf("repaired: %+v", got)
	}
	if fixed := decisionOf(t, res, "1r"); fixed.Outcome != ledger.Committed || fixed.Proposal != got.RepairedAs {
		t.Fatalf("repair: %+v", fixed)
	}
	f.agg.Repairer = &fakeRepairer{f: f, decline: true}
	again := f.propose("2", "B\n"+f.skill("refs/heads/descent/s/dev"), 0, 1, "A")
	f.advance(1, "y")
	res = f.round(again)
	if got := decisionOf(t, res, "2"); got.Outcome != ledger.RepairDeclined {
		t.Fatalf("declined: %+v", got)
	}
}

func TestPromoteAndRollback(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	if _, err := f.agg.Promote(f.ctx, false); err == nil || !strings.Contains(err.Error(), "already at dev") {
		t.Fatalf("promote at dev: %v", err)
	}
	f.advance(1, "noise") // dev changes but scores the same: promotable
	p, err := f.agg.Promote(f.ctx, false)
	if err != nil || p.Forced {
		t.Fatalf("promote: %+v, %v", p, err)
	}
	dev, stable, _ := f.agg.heads(f.ctx)
	if dev != stable {
		t.Fatal("stable did not move to dev")
	}
	// A bad commit on dev is rolled back to stable.
	worse := f.commit(dev, "nothing\n")
	f.moveDev(dev, worse)
	rb, err := f.agg.Rollback(f.ctx)
	if err != nil || rb.From != worse || rb.To != stable {
		t.Fatalf("rollback: %+v, %v", rb, err)
	}
	dev, _, _ = f.agg.heads(f.ctx)
	if dev != stable {
		t.Fatal("dev not back at stable")
	}
	// The rolled-back commit stays reachable through the journal.
	j, _ := f.repo.ResolveRef(f.ctx, "refs/descent/s/journal")
	parents, _ := f.repo.Parents(f.ctx, j)
	found := false
	for _, p := range parents {
		found = found || p == worse
	}
	if !found {
		t.Fatalf("journal parents %v lack the old dev %s", parents, worse.Short())
	}
	if _, err := f.agg.Rollback(f.ctx); err == nil {
		t.Fatal("second rollback did something")
	}
}

func TestPromoteRefusesWorseDevUnlessForced(t *testing.T) {
	f := newFixture(t, "rules:\nA\n", "A", "A")
	dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	worse := f.commit(dev, "rules:\n")
	f.moveDev(dev, worse)
	if _, err := f.agg.Promote(f.ctx, false); err == nil || !strings.Contains(err.Error(), "below stable's 1.00 (use --force") {
		t.Fatalf("worse dev: %v", err)
	}
	p, err := f.agg.Promote(f.ctx, true)
	if err != nil || !p.Forced {
		t.Fatalf("forced: %+v, %v", p, err)
	}
	head, _ := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if n := len(head.State.Promotions); n != 1 || !head.State.Promotions[0].Forced {
		t.Fatalf("promotions = %+v", head.State.Promotions)
	}
}

// A round cut short keeps the re-filed proposals it did not reach queued.
func TestCutShortRoundKeepsRefiled(t *testing.T) {
	f := newFixture(t, "rules:\nend\n", "A", "A", "B")
	f.lib.Tournament = true
	a := f.propose("1", "rules:\nA\nend\n", 0, 1, "A")
	b := f.propose("2", "rules:\nend\nPOISON\nB\n", 0, 1, "B")
	f.round(a, b) // b is re-filed
	ctx, cancel := context.WithCancel(f.ctx)
	f.scorer.before = cancel
	if _, err := f.agg.Round(ctx, nil, nil); err == nil {
		t.Fatal("a cancelled round reported success")
	}
	head, _ := ledger.OpenJournal(f.repo, "s").Head(f.ctx)
	if len(head.State.Refile) != 1 || head.State.Refile[0].Proposal != b.Proposal.Commit || head.State.Refile[0].Attempts != 1 {
		t.Fatalf("refile after a cut-short round = %+v", head.State.Refile)
	}
}

// The full policy merges whatever merges, however stale.
func TestFullPolicyIgnoresStaleness(t *testing.T) {
	f := newFixture(t, "top\nrules:\n", "A", "A")
	f.lib.Staleness, f.lib.Alpha, f.lib.HotChanges = library.StalenessFull, 0, 0
	p := f.propose("1", "top\nA\nrules:\n", 0, 1, "A")
	f.advance(2, "x")
	res := f.round(p)
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Committed || got.Staleness != 2 {
		t.Fatalf("full: %+v", got)
	}
}

// α is narrower for guarded (L1) files than for instructions.
func TestAlphaByLayer(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A")
	f.lib.Alpha, f.lib.AlphaL1, f.lib.HotChanges = 3, 0, 0
	dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	blob, _ := f.repo.HashObject(f.ctx, []byte("echo 1\n"))
	base, _ := f.repo.TreeOf(f.ctx, dev, "")
	tree, _ := f.repo.EditTree(f.ctx, base, []git.TreeEdit{{Path: "skills/s/scripts/run.sh", Hash: blob}})
	p := &ledger.Proposal{Subject: "script", Evidence: ledger.Evidence{Library: "s", Worker: "1", Base: dev}}
	if err := ledger.WriteProposal(f.ctx, f.repo, p, tree); err != nil {
		t.Fatal(err)
	}
	// dev changes the script once after the proposal's base.
	blob2, _ := f.repo.HashObject(f.ctx, []byte("echo 0\n"))
	tree2, _ := f.repo.EditTree(f.ctx, base, []git.TreeEdit{{Path: "skills/s/scripts/run.sh", Hash: blob2}})
	c, _ := f.repo.CommitTree(f.ctx, git.CommitTreeRequest{Tree: tree2, Parents: []git.Hash{dev}, Message: "dev\n"})
	f.moveDev(dev, c)
	res := f.round(&Submission{Proposal: p, Paths: []string{"scripts/run.sh"}})
	if got := decisionOf(t, res, "1"); got.Outcome != ledger.Stale || got.Alpha != 0 || got.Staleness != 1 {
		t.Fatalf("L1 staleness: %+v", got)
	}
}

// Two changes to guarded files in one round are gated one at a time.
func TestGuardedChangesAreNotFused(t *testing.T) {
	f := newFixture(t, "rules:\n", "A", "A", "B")
	f.agg.Oracle = &fakeOracle{}
	dev, _ := f.repo.ResolveRef(f.ctx, "refs/heads/descent/s/dev")
	base, _ := f.repo.TreeOf(f.ctx, dev, "")
	var subs []*Submission
	for i, w := range []string{"A", "B"} {
		skill, _ := f.repo.HashObject(f.ctx, []byte("rules:\n"+w+"\n"))
		script, _ := f.repo.HashObject(f.ctx, []byte("echo "+w+"\n"))
		tree, _ := f.repo.EditTree(f.ctx, base, []git.TreeEdit{{Path: "skills/s/SKILL.md", Hash: skill}, {Path: "skills/s/scripts/" + w + ".sh", Hash: script}})
		p := &ledger.Proposal{Subject: "script " + w, Evidence: ledger.Evidence{Library: "s", Worker: string(rune('1' + i)), Base: dev}}
		if err := ledger.WriteProposal(f.ctx, f.repo, p, tree); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, &Submission{Proposal: p, Paths: []string{"SKILL.md", "scripts/" + w + ".sh"}})
	}
	res := f.round(subs...)
	if len(res.Verdicts) < 2 {
		t.Fatalf("L1 changes fused: %+v", res.Verdicts)
	}
	for _, v := range res.Verdicts {
		if len(v.Members) != 1 {
			t.Fatalf("a verdict with %d members", len(v.Members))
		}
	}
}

// Members that each fix what the other does not, one of them also
// breaking a task the other fixes, fuse into something better than
// either alone: no semantic conflict, although each alone does better
// than the fusion on the task the fusion fails (rank scores them exactly
// before splitting).
func TestFusionBetterThanItsMembersIsNotSplit(t *testing.T) {
	f := newFixture(t, "rules:\nend\n", "A", "B", "B", "C")
	a := f.propose("1", "rules:\nA\nC\nend\n", 0, 1, "A")
	b := f.propose("2", "rules:\nend\nPOISON\nB\n", 0, 1, "B")
	res := f.round(a, b)
	if got := outcomes(res); got["1"] != ledger.Committed || got["2"] != ledger.Committed {
		t.Fatalf("outcomes = %v, want both committed together (0.75 against 0.50 for either alone)", got)
	}
}
