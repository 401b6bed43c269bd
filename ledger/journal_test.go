package ledger

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// proposals writes one proposal per worker on top of a fresh base commit
// and returns the base and the proposal commits, by worker.
func proposals(t *testing.T, repo *git.Repo, lib string, workers ...string) (git.Hash, map[string]git.Hash) {
	t.Helper()
	ctx := t.Context()
	base := commitFiles(t, ctx, repo, "base", map[string]string{"skills/" + lib + "/SKILL.md": "v0\n"})
	baseTree, err := repo.TreeOf(ctx, base, "")
	if err != nil {
		t.Fatal(err)
	}
	ps := map[string]git.Hash{}
	for _, w := range workers {
		p := &Proposal{Subject: "edit by worker " + w, Evidence: Evidence{Library: lib, Worker: w, Base: base}}
		tree := editTree(t, ctx, repo, baseTree, map[string]string{"skills/" + lib + "/SKILL.md": "v" + w + "\n"})
		if err := WriteProposal(ctx, repo, p, tree); err != nil {
			t.Fatal(err)
		}
		ps[w] = p.Commit
	}
	return base, ps
}

func TestJournalHeadOfNewRepository(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	h, err := OpenJournal(repo, "pdf").Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Commit.IsZero() || !reflect.DeepEqual(h.State, State{}) {
		t.Errorf("Head = %+v, want zero", h)
	}
	if ds, err := OpenJournal(repo, "pdf").Decisions(ctx); err != nil || ds != nil {
		t.Errorf("Decisions = %v, %v; want none", ds, err)
	}
}

func TestJournalRecord(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	base, ps := proposals(t, repo, "pdf", "1", "2", "3")
	j := OpenJournal(repo, "pdf")
	ref := Refs{"pdf"}.Journal()

	gate := &Gate{Tasks: 10, Before: 0.4, After: 0.6, Wins: 3, Losses: 1, P: 0.9, Delta: 0.2, Accept: true}
	merge := commitFiles(t, ctx, repo, "merge", map[string]string{"skills/pdf/SKILL.md": "v1\n"}, base, ps["1"])
	round1 := []Decision{ // out of worker order on purpose
		{ID: string(ps["3"]), Proposal: ps["3"], Library: "pdf", Worker: "3", Round: 1, Outcome: ConflictLost, Reason: "lost to 1", Base: base, Paths: []string{"SKILL.md"}},
		{ID: "r0001-w4", Library: "pdf", Worker: "4", Round: 1, Outcome: ProposerFailed, Reason: "exit status 1"},
		{ID: string(ps["1"]), Proposal: ps["1"], Library: "pdf", Worker: "1", Round: 1, Subject: "edit by worker 1", Outcome: Committed, Reason: "merged",
			Base: base, Staleness: 2, Paths: []string{"SKILL.md"}, Train: [2]float64{0.25, 0.75}, Gate: gate, Merge: merge, FusedWith: []git.Hash{ps["2"]}},
		{ID: string(ps["2"]), Proposal: ps["2"], Library: "pdf", Worker: "2", Round: 1, Outcome: Rejected, Reason: "no gain", Base: base},
	}
	state1 := State{Round: 1, Commits: 1, CleanRounds: 1, Dev: merge, DevScore: 0.6, Stable: base, StableScore: 0.4,
		Promotions: []Promotion{{Round: 1, From: base, To: merge, Stable: 0.4, Dev: 0.6}}}

	head0, err := j.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec1, err := j.Record(ctx, head0, Entry{State: state1, Decisions: round1, Message: "round 1\n"})
	if err != nil {
		t.Fatal(err)
	}
	c1 := rec1.Commit
	if got := resolve(t, ctx, repo, ref); got != c1 {
		t.Fatalf("%s = %s, want %s", ref, got, c1)
	}

	// The tree holds state.json and one file per decision.
	files := lsTree(t, repo, c1)
	want := []string{"decisions/r0001/" + string(ps["1"]) + ".json", "decisions/r0001/" + string(ps["2"]) + ".json",
		"decisions/r0001/" + string(ps["3"]) + ".json", "decisions/r0001/r0001-w4.json", "state.json"}
	sort.Strings(want)
	if !reflect.DeepEqual(files, want) {
		t.Errorf("journal tree:\n%s\nwant\n%s", strings.Join(files, "\n"), strings.Join(want, "\n"))
	}
	data, err := repo.ReadFile(ctx, c1, "decisions/r0001/"+string(ps["1"])+".json")
	if err != nil {
		t.Fatal(err)
	}
	var d Decision
	if err := json.Unmarshal(data, &d); err != nil || !reflect.DeepEqual(d, round1[2]) {
		t.Errorf("decision file = %+v (%v), want %+v", d, err, round1[2])
	}

	// A first journal commit has only the decided proposals as parents.
	if got, want := parentSet(t, repo, c1), []git.Hash{ps["1"], ps["2"], ps["3"]}; !sameSet(got, want) {
		t.Errorf("parents of the first journal commit = %v, want the proposals %v", got, want)
	}

	// State round-trips through Head.
	head1, err := j.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head1.Commit != c1 || !reflect.DeepEqual(head1.State, state1) {
		t.Errorf("Head = %+v, want commit %s state %+v", head1, c1, state1)
	}

	// Worker 3's branch moves on to a proposal nobody decided yet; the one
	// decided in round 1 stays reachable through the journal.
	p3 := &Proposal{Subject: "second try", Evidence: Evidence{Library: "pdf", Worker: "3", Base: merge}}
	if err := WriteProposal(ctx, repo, p3, editTree(t, ctx, repo, mustTree(t, repo, merge), map[string]string{"skills/pdf/SKILL.md": "v33\n"})); err != nil {
		t.Fatal(err)
	}
	if reachable, err := repo.IsAncestor(ctx, ps["3"], c1); err != nil || !reachable {
		t.Errorf("replaced proposal %s reachable from the journal: %v, %v", ps["3"].Short(), reachable, err)
	}

	// Round 2 decides worker 2's proposal again, and a new one by worker 1.
	p1 := &Proposal{Subject: "worker 1 again", Evidence: Evidence{Library: "pdf", Worker: "1", Base: merge}}
	if err := WriteProposal(ctx, repo, p1, editTree(t, ctx, repo, mustTree(t, repo, merge), map[string]string{"skills/pdf/SKILL.md": "v11\n"})); err != nil {
		t.Fatal(err)
	}
	round2 := []Decision{
		{ID: string(ps["2"]), Proposal: ps["2"], Library: "pdf", Worker: "2", Round: 2, Outcome: ConflictDev, Reason: "retried"},
		{ID: string(p1.Commit), Proposal: p1.Commit, Library: "pdf", Worker: "1", Round: 2, Outcome: Duplicate, Reason: "dev has it"},
	}
	state2 := state1
	state2.Round = 2
	rec2, err := j.Record(ctx, head1, Entry{State: state2, Decisions: round2, Message: "round 2\n"})
	if err != nil {
		t.Fatal(err)
	}
	c2 := rec2.Commit
	ps2, err := repo.Parents(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps2) == 0 || ps2[0] != c1 || !sameSet(ps2[1:], []git.Hash{p1.Commit, ps["2"]}) {
		t.Errorf("parents of the second journal commit = %v, want %s then %v", ps2, c1, []git.Hash{p1.Commit, ps["2"]})
	}

	all, err := j.Decisions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, d := range all {
		order = append(order, d.ID)
	}
	wantOrder := []string{string(ps["1"]), string(ps["2"]), string(ps["3"]), "r0001-w4", string(p1.Commit), string(ps["2"])}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("Decisions order:\n%s\nwant (round, worker):\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
	}
	if !reflect.DeepEqual(all[0], round1[2]) {
		t.Errorf("decision read back = %+v, want %+v", all[0], round1[2])
	}

	for _, c := range []struct {
		proposal git.Hash
		outcomes []Outcome
	}{
		{ps["1"], []Outcome{Committed}},
		{ps["2"], []Outcome{Rejected, ConflictDev}},
		{p1.Commit, []Outcome{Duplicate}},
	} {
		ds, err := j.DecisionsFor(ctx, c.proposal)
		if err != nil {
			t.Fatalf("DecisionsFor(%s): %v", c.proposal.Short(), err)
		}
		var got []Outcome
		for _, d := range ds {
			got = append(got, d.Outcome)
		}
		if !reflect.DeepEqual(got, c.outcomes) {
			t.Errorf("DecisionsFor(%s) outcomes = %v, want %v", c.proposal.Short(), got, c.outcomes)
		}
	}
	for _, undecided := range []git.Hash{base, p3.Commit} {
		if _, err := j.DecisionsFor(ctx, undecided); !errors.Is(err, ErrNoDecision) {
			t.Errorf("DecisionsFor(undecided %s) = %v, want ErrNoDecision", undecided.Short(), err)
		}
	}
}

// A writer whose head is stale loses the compare-and-swap and changes no
// ref: neither the journal nor the notes.
func TestJournalRecordStaleHead(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	_, ps := proposals(t, repo, "pdf", "1", "2")
	j := OpenJournal(repo, "pdf")
	ref := Refs{"pdf"}.Journal()
	head0, err := j.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dec := func(w string) []Decision {
		return []Decision{{ID: string(ps[w]), Proposal: ps[w], Library: "pdf", Worker: w, Round: 1, Outcome: Rejected}}
	}
	rec1, err := j.Record(ctx, head0, Entry{State: State{Round: 1}, Decisions: dec("1"), Message: "round 1\n"})
	if err != nil {
		t.Fatal(err)
	}
	c1 := rec1.Commit
	head1, err := j.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Record(ctx, head1, Entry{State: State{Round: 2}, Decisions: dec("1"), Message: "round 2\n"}); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []JournalHead{head0, head1} {
		journalBefore, notesBefore := resolve(t, ctx, repo, ref), resolve(t, ctx, repo, NotesRef)
		_, err := j.Record(ctx, stale, Entry{State: State{Round: 9}, Decisions: dec("2"), Message: "stale\n"})
		var rc *git.RefChangedError
		if !errors.As(err, &rc) {
			t.Fatalf("Record on stale head %s = %v, want *git.RefChangedError", stale.Commit.Short(), err)
		}
		if got := resolve(t, ctx, repo, ref); got != journalBefore {
			t.Errorf("journal moved to %s after a lost race", got)
		}
		if got := resolve(t, ctx, repo, NotesRef); got != notesBefore {
			t.Errorf("notes moved to %s after a lost race", got)
		}
		if _, ok := gittest.Note(t, repo, NotesRef, ps["2"]); ok {
			t.Errorf("the losing writer's proposal got a note")
		}
	}
	if h, err := j.Head(ctx); err != nil || h.State.Round != 2 || h.Commit == c1 {
		t.Errorf("Head after lost races = %+v, %v; want round 2", h, err)
	}
}

func lsTree(t *testing.T, repo *git.Repo, commit git.Hash) []string {
	t.Helper()
	entries, err := repo.ReadTree(t.Context(), mustTree(t, repo, commit))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	sort.Strings(paths)
	return paths
}

func mustTree(t *testing.T, repo *git.Repo, commit git.Hash) git.Hash {
	t.Helper()
	tree, err := repo.TreeOf(t.Context(), commit, "")
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func parentSet(t *testing.T, repo *git.Repo, c git.Hash) []git.Hash {
	t.Helper()
	ps, err := repo.Parents(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func sameSet(a, b []git.Hash) bool {
	x := append([]git.Hash(nil), a...)
	y := append([]git.Hash(nil), b...)
	sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
	sort.Slice(y, func(i, j int) bool { return y[i] < y[j] })
	return reflect.DeepEqual(x, y)
}

// A record that moves dev is one transaction with its journal commit and
// notes: when dev is not where the caller read it, nothing moves.
func TestRecordMovesDevWithItsRecord(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	j := OpenJournal(repo, "pdf")
	dev, created, err := Start(ctx, repo, "pdf", commitFiles(t, ctx, repo, "start", map[string]string{"skills/pdf/SKILL.md": "a\n"}))
	if err != nil || len(created) != 2 {
		t.Fatalf("Start = %v, %v", created, err)
	}
	if again, created, err := Start(ctx, repo, "pdf", "0123456789012345678901234567890123456789"); err != nil || len(created) != 0 || again != dev {
		t.Fatalf("second Start = %s %v %v, want dev %s unchanged", again, created, err, dev)
	}
	start, err := j.Head(ctx)
	if err != nil || start.Commit.IsZero() || start.State.Heads != (Heads{Dev: dev, Stable: dev}) {
		t.Fatalf("Start's journal = %+v, %v; want heads at %s", start, err, dev.Short())
	}
	p := commitFiles(t, ctx, repo, "proposal", map[string]string{"skills/pdf/SKILL.md": "b\n"}, dev)
	merge := commitFiles(t, ctx, repo, "merge", map[string]string{"skills/pdf/SKILL.md": "b\n"}, dev, p)
	other := commitFiles(t, ctx, repo, "other", map[string]string{"skills/pdf/SKILL.md": "c\n"}, dev)
	ds := []Decision{{ID: string(p), Proposal: p, Library: "pdf", Worker: "1", Round: 1, Outcome: Committed, Merge: merge}}
	devRef := Refs{"pdf"}.Dev()

	// Someone else moved dev: the record loses, and nothing moves.
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: devRef, Hash: other, OldHash: dev}); err != nil {
		t.Fatal(err)
	}
	_, err = j.Record(ctx, start, Entry{State: State{Round: 1}, Decisions: ds, Message: "round 1\n", Moves: []Move{{Ref: devRef, From: dev, To: merge}}})
	var lost *git.RefChangedError
	if !errors.As(err, &lost) || lost.Ref != devRef {
		t.Fatalf("Record with a stale dev = %v, want a lost race on %s", err, devRef)
	}
	if h, _ := resolveOrZero(ctx, repo, NotesRef); !h.IsZero() {
		t.Errorf("notes = %s after a lost transaction, want none", h)
	}
	if h, _ := resolveOrZero(ctx, repo, j.ref); h != start.Commit {
		t.Errorf("journal = %s after a lost transaction, want Start's %s", h, start.Commit.Short())
	}
	// Start, and CheckHeads, see that dev is not where the journal left it.
	var moved *MovedError
	if _, _, err := Start(ctx, repo, "pdf", dev); !errors.As(err, &moved) || moved.Ref != devRef || moved.Want != dev || moved.Got != other {
		t.Fatalf("Start after dev moved outside = %v", err)
	}

	// From the dev it read: the notes join those another library wrote.
	if _, err := OpenJournal(repo, "other").Record(ctx, JournalHead{}, Entry{State: State{Round: 1}, Decisions: []Decision{{ID: string(other), Proposal: other, Library: "other", Round: 1, Outcome: Rejected}}, Message: "r\n"}); err != nil {
		t.Fatal(err)
	}
	head, err := j.Record(ctx, start, Entry{State: State{Round: 1}, Decisions: ds, Message: "round 1\n", Moves: []Move{{Ref: devRef, From: other, To: merge}}})
	if err != nil {
		t.Fatal(err)
	}
	if head.State.Heads != (Heads{Dev: merge, Stable: dev}) {
		t.Errorf("heads after the record = %+v, want dev %s stable %s", head.State.Heads, merge.Short(), dev.Short())
	}
	if err := CheckHeads(ctx, repo, "pdf", head); err != nil {
		t.Error(err)
	}
	if got := resolve(t, ctx, repo, devRef); got != merge {
		t.Errorf("dev = %s, want %s", got, merge)
	}
	if got := resolve(t, ctx, repo, j.ref); got != head.Commit {
		t.Errorf("journal = %s, want %s", got, head.Commit)
	}
	for _, c := range []git.Hash{p, other} {
		if _, ok := gittest.Note(t, repo, "descent", c); !ok {
			t.Errorf("no note on %s", c.Short())
		}
	}
}
