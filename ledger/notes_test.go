package ledger

import (
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

func TestRecordNotesProposals(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	_, ps := proposals(t, repo, "pdf", "1", "2")
	j := OpenJournal(repo, "pdf")
	gate := &Gate{Tasks: 8, Before: 0.5, After: 0.75, Wins: 2, Losses: 0, P: 0.9, Delta: 0.2, Accept: true}
	rounds := [][]Decision{
		{
			{ID: string(ps["1"]), Proposal: ps["1"], Worker: "1", Round: 1, Outcome: Rejected, Reason: "no reliable\ngain", Gate: gate},
			{ID: string(ps["2"]), Proposal: ps["2"], Worker: "2", Round: 1, Outcome: ConflictLost, Reason: "lost"},
			{ID: "r0001-w3", Worker: "3", Round: 1, Outcome: ProposerFailed, Reason: "exit 1"},
		},
		// Proposal 1 is decided again: its note is replaced, not appended to.
		{{ID: string(ps["1"]), Proposal: ps["1"], Worker: "1", Round: 2, Outcome: Committed, Reason: "merged", Gate: gate, Merge: ps["2"]}},
	}
	want := map[git.Hash]string{}
	for i, ds := range rounds {
		head, err := j.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Record(ctx, head, Entry{State: State{Round: i + 1}, Decisions: ds, Message: "round\n"}); err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if !d.Proposal.IsZero() {
				want[d.Proposal] = d.Note()
			}
		}
		for p, note := range want {
			if got, _ := gittest.Note(t, repo, NotesRef, p); got != note {
				t.Errorf("round %d: note on %s:\n%s\nwant\n%s", i+1, p.Short(), got, note)
			}
		}
	}
	note := want[ps["1"]]
	for _, line := range []string{"Descent-Decision: committed\n", "Descent-Round: 2\n", "Descent-Reason: merged\n",
		"Descent-Validation: 0.50 → 0.75 on 8 tasks (+2/−0, P=0.90 > 0.80)\n", "Descent-Merge: " + string(ps["2"]) + "\n"} {
		if !strings.Contains(note, line) {
			t.Errorf("note lacks %q:\n%s", line, note)
		}
	}
	if strings.Contains(note, "rejected") {
		t.Errorf("the old decision survived in the note:\n%s", note)
	}
	if n := len(gittest.NotedObjects(t, repo, NotesRef)); n != 2 {
		t.Errorf("%d notes, want 2 (none for a decision without a proposal)", n)
	}
}

func TestRecordWithoutProposalsWritesNoNotes(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	ds := []Decision{{ID: "r0001-w1", Worker: "1", Round: 1, Outcome: NoChange}}
	if _, err := OpenJournal(repo, "pdf").Record(ctx, JournalHead{}, Entry{State: State{Round: 1}, Decisions: ds, Message: "round 1\n"}); err != nil {
		t.Fatal(err)
	}
	if got := resolve(t, ctx, repo, NotesRef); got != "" {
		t.Errorf("%s = %s, want no notes ref", NotesRef, got)
	}
}

// git fans a big notes tree out into ab/cdef... subtrees. A decision on a
// proposal whose note sits at such a path must replace that note, not add a
// second one that git would concatenate with it.
func TestRecordReplacesFannedOutNote(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	_, ps := proposals(t, repo, "pdf", "1", "2")
	fanned := func(h git.Hash) string { return string(h[:2]) + "/" + string(h[2:]) }
	tree := editTree(t, ctx, repo, "", map[string]string{
		fanned(ps["1"]): "old note on 1\n",
		fanned(ps["2"]): "note on 2, untouched\n",
	})
	notes, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Message: "Notes added by 'git notes add'\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: NotesRef, Hash: notes}); err != nil {
		t.Fatal(err)
	}
	if got, _ := gittest.Note(t, repo, NotesRef, ps["1"]); got != "old note on 1\n" {
		t.Fatalf("setup: git does not read the fanned-out note: %q", got)
	}

	d := Decision{ID: string(ps["1"]), Proposal: ps["1"], Worker: "1", Round: 1, Outcome: Committed, Reason: "merged"}
	if _, err := OpenJournal(repo, "pdf").Record(ctx, JournalHead{}, Entry{State: State{Round: 1}, Decisions: []Decision{d}, Message: "round 1\n"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := gittest.Note(t, repo, NotesRef, ps["1"]); got != d.Note() {
		t.Errorf("note on the proposal:\n%s\nwant exactly\n%s", got, d.Note())
	}
	if got, _ := gittest.Note(t, repo, NotesRef, ps["2"]); got != "note on 2, untouched\n" {
		t.Errorf("other note = %q", got)
	}
	list := gittest.NotedObjects(t, repo, NotesRef)
	for _, p := range []git.Hash{ps["1"], ps["2"]} {
		n := 0
		for _, o := range list {
			if o == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("git notes list names %s %d times, want once: %v", p.Short(), n, list)
		}
	}
	var paths []string
	for _, e := range lsTree(t, repo, resolve(t, ctx, repo, NotesRef)) {
		if strings.ReplaceAll(e, "/", "") == string(ps["1"]) {
			paths = append(paths, e)
		}
	}
	if len(paths) != 1 {
		t.Errorf("notes tree holds %v for %s, want one path", paths, ps["1"].Short())
	}
	// The notes ref kept its history: the new commit is on top of ours.
	if ok, err := repo.IsAncestor(ctx, notes, resolve(t, ctx, repo, NotesRef)); err != nil || !ok {
		t.Errorf("notes history lost: %v, %v", ok, err)
	}
}
