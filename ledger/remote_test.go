package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// remoteFixture is a bare repository and two clones of it, each with the
// library's dev started (the first pushed it).
type remoteFixture struct {
	ctx          context.Context
	bare         *git.Repo
	one, two     *git.Repo
	mOne, mTwo   *Remote
	refs         Refs
	base, twoDev git.Hash
}

func newRemoteFixture(t *testing.T) *remoteFixture {
	ctx, src := gittest.NewRepo(t)
	base := commitFiles(t, ctx, src, "init", map[string]string{"skills/x/SKILL.md": "v1\n"})
	if err := src.SetRef(ctx, git.SetRefRequest{Ref: "refs/heads/main", Hash: base}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bare, err := git.Clone(ctx, src.GitDir(), filepath.Join(dir, "origin.git"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &remoteFixture{ctx: ctx, bare: bare, refs: Refs{"x"}, base: base}
	for i, r := range []**git.Repo{&f.one, &f.two} {
		if *r, err = git.Clone(ctx, bare.GitDir(), filepath.Join(dir, []string{"one", "two"}[i]), false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.mOne, f.mTwo = OpenRemote(f.one, "origin", "x"), OpenRemote(f.two, "origin", "x")
	return f
}

// start starts dev in repo at head (the base when zero) and pushes it
// through m.
func (f *remoteFixture) start(t *testing.T, repo *git.Repo, m *Remote, head ...git.Hash) error {
	t.Helper()
	if err := m.Fetch(f.ctx); err != nil {
		t.Fatal(err)
	}
	at := f.base
	if len(head) > 0 {
		at = head[0]
	}
	if _, _, err := Start(f.ctx, repo, "x", at); err != nil {
		t.Fatal(err)
	}
	return m.PushRefs(f.ctx, []string{f.refs.Dev(), f.refs.Stable(), f.refs.Journal()})
}

// adopt fetches each remote and adopts its refs.
func (f *remoteFixture) adopt(t *testing.T, ms ...*Remote) {
	t.Helper()
	for _, m := range ms {
		if err := m.Fetch(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Adopt(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// decide records a decision on proposal p in repo's journal.
func decide(t *testing.T, ctx context.Context, repo *git.Repo, p git.Hash, outcome Outcome) {
	t.Helper()
	j := OpenJournal(repo, "x")
	head, err := j.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := head.State
	st.Round++
	e := Entry{State: st, Message: "round\n", Decisions: []Decision{{ID: string(p), Proposal: p, Library: "x", Worker: "1", Round: st.Round, Outcome: outcome}}}
	if _, err := j.Record(ctx, head, e); err != nil {
		t.Fatal(err)
	}
}

// propose writes a proposal of worker w in repo on dev and pushes it.
func (f *remoteFixture) propose(t *testing.T, repo *git.Repo, m *Remote, w, content string) *Proposal {
	t.Helper()
	dev := resolve(t, f.ctx, repo, f.refs.Dev())
	tree := editTree(t, f.ctx, repo, mustTree(t, repo, dev), map[string]string{"skills/x/SKILL.md": content})
	p := &Proposal{Subject: "edit", Evidence: Evidence{Library: "x", Worker: w, Base: dev, Tasks: []string{"t1"}}}
	if err := WriteProposal(f.ctx, repo, p, tree); err != nil {
		t.Fatal(err)
	}
	if err := m.PushProposal(f.ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two processes start dev on an empty remote: one wins, the other's push
// is refused as a race, and adopting gives it the winner's refs.
func TestRemoteStartRace(t *testing.T) {
	f := newRemoteFixture(t)
	if err := f.start(t, f.one, f.mOne); err != nil {
		t.Fatal(err)
	}
	other := commitFiles(t, f.ctx, f.two, "mine", map[string]string{"skills/x/SKILL.md": "v0\n"}, f.base)
	err := f.start(t, f.two, f.mTwo, other)
	if !errors.Is(err, ErrRaced) {
		t.Fatalf("second start: %v, want ErrRaced", err)
	}
	if err := f.mTwo.Fetch(f.ctx); err != nil {
		t.Fatal(err)
	}
	ad, err := f.mTwo.Adopt(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ad.Discarded.IsZero() || !ad.Moved {
		t.Errorf("adopt after a lost start: %+v, want the local journal replaced", ad)
	}
	for _, ref := range []string{f.refs.Journal(), f.refs.Dev(), f.refs.Stable()} {
		if a, b := resolve(t, f.ctx, f.one, ref), resolve(t, f.ctx, f.two, ref); a != b {
			t.Errorf("%s: %s in the winner, %s in the loser after adopting", ref, a, b)
		}
	}
}

// Two aggregators decide the same queued proposal: the first publishes
// (and dequeues it); the second's publish is refused whole, and once it
// adopts the winner's journal it holds the proposal as decided, once.
func TestRemotePublishRace(t *testing.T) {
	f := newRemoteFixture(t)
	if err := f.start(t, f.one, f.mOne); err != nil {
		t.Fatal(err)
	}
	f.adopt(t, f.mOne, f.mTwo)
	p := f.propose(t, f.one, f.mOne, "1", "v2\n")
	q := f.propose(t, f.one, f.mOne, "1", "v3\n") // the branch moves on: p stays queued
	for _, m := range []*Remote{f.mOne, f.mTwo} {
		if err := m.Fetch(f.ctx); err != nil {
			t.Fatal(err)
		}
		if qs, err := m.Queued(f.ctx); err != nil || len(qs) != 2 {
			t.Fatalf("queued: %v %v, want p and q", qs, err)
		}
	}
	decide(t, f.ctx, f.one, p.Commit, Rejected)
	decide(t, f.ctx, f.two, p.Commit, Committed) // another verdict: another journal
	pub, err := f.mOne.Publish(f.ctx)
	if err != nil || pub.Dequeue != 1 {
		t.Fatalf("first publish: %+v %v, want p dequeued", pub, err)
	}
	if pub, err := f.mTwo.Publish(f.ctx); !errors.Is(err, ErrRaced) {
		t.Fatalf("second publish: %+v %v, want ErrRaced", pub, err)
	}
	if err := f.mTwo.Fetch(f.ctx); err != nil {
		t.Fatal(err)
	}
	ad, err := f.mTwo.Adopt(f.ctx)
	if err != nil || ad.Discarded.IsZero() {
		t.Fatalf("adopt: %+v %v, want the losing journal replaced", ad, err)
	}
	ds, err := OpenJournal(f.two, "x").Decisions(f.ctx)
	if err != nil || len(ds) != 1 || ds[0].Proposal != p.Commit || ds[0].Outcome != Rejected {
		t.Fatalf("decisions after adopting: %+v %v, want p's one", ds, err)
	}
	qs, err := f.mTwo.Queued(f.ctx)
	if err != nil || len(qs) != 1 || qs[0] != q.Commit {
		t.Fatalf("queued after: %v %v, want q alone", qs, err)
	}
	// Nothing new to publish: the loser's publish now pushes nothing.
	if pub, err := f.mTwo.Publish(f.ctx); err != nil || len(pub.Refs) != 0 || pub.Dequeue != 0 {
		t.Fatalf("publish after adopting: %+v %v, want nothing", pub, err)
	}
}

// A worker whose branch another process of the same id moved retries its
// push: both proposals stay queued, the branch ends at the last one.
func TestRemotePushProposalRetries(t *testing.T) {
	f := newRemoteFixture(t)
	if err := f.start(t, f.one, f.mOne); err != nil {
		t.Fatal(err)
	}
	f.adopt(t, f.mOne, f.mTwo)
	a := f.propose(t, f.one, f.mOne, "7", "from one\n")
	b := f.propose(t, f.two, f.mTwo, "7", "from two\n") // its fetch is older than a's push
	if err := f.mOne.Fetch(f.ctx); err != nil {
		t.Fatal(err)
	}
	qs, err := f.mOne.Queued(f.ctx)
	if err != nil || len(qs) != 2 {
		t.Fatalf("queued: %v %v, want both proposals", qs, err)
	}
	if got, _ := f.mOne.Value(f.ctx, f.refs.Worker("7")); got != b.Commit {
		t.Errorf("worker branch at %s, want the later proposal %s (a was %s)", got, b.Commit, a.Commit)
	}
}

// The notes of two repositories that each decided something are merged
// when adopting, the remote's winning where both annotate one commit.
func TestRemoteAdoptMergesNotes(t *testing.T) {
	f := newRemoteFixture(t)
	if err := f.start(t, f.one, f.mOne); err != nil {
		t.Fatal(err)
	}
	f.adopt(t, f.mTwo)
	p := f.propose(t, f.one, f.mOne, "1", "v2\n")
	decide(t, f.ctx, f.one, p.Commit, Rejected)
	if _, err := f.mOne.Publish(f.ctx); err != nil {
		t.Fatal(err)
	}
	// Another library's decision, noted in the second repository alone.
	other := commitFiles(t, f.ctx, f.two, "other", map[string]string{"y": "1\n"}, f.base)
	edits, err := noteEdits(f.ctx, f.two, []Decision{{Proposal: other, Library: "y", Outcome: Rejected}})
	if err != nil {
		t.Fatal(err)
	}
	up, _, err := notesCommit(f.ctx, f.two, edits)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.two.UpdateRefs(f.ctx, git.UpdateRefsRequest{Updates: []git.RefUpdate{up}}); err != nil {
		t.Fatal(err)
	}
	f.adopt(t, f.mTwo)
	for _, c := range []git.Hash{p.Commit, other} {
		if _, ok := gittest.Note(t, f.two, NotesRef, c); !ok {
			t.Errorf("no note on %s after adopting", c.Short())
		}
	}
}
