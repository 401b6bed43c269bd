package hooks

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

const (
	skill = "skills/codes/SKILL.md"
	evals = "skills/codes/evals/evals.json"
)

// guarded is a repository with a library "codes" started as git-descent
// starts one: dev, stable and the journal's first record at start, which
// is also the trusted history's tip.
type guarded struct {
	t     *testing.T
	ctx   context.Context
	repo  *git.Repo
	guard *Guard
	refs  ledger.Refs
	start git.Hash
	j0    git.Hash // the journal's first record: dev and stable at start
}

func newGuarded(t *testing.T) *guarded {
	ctx, repo := gittest.NewRepo(t)
	g := &guarded{t: t, ctx: ctx, repo: repo, refs: ledger.Refs{Library: "codes"}}
	g.start = gittest.Commit(t, repo, "", map[string]string{skill: "# Codes\n", evals: `{"evals": []}`, "README.md": "hi\n"}, "start")
	g.j0 = g.journal("", ledger.State{Heads: ledger.Heads{Dev: g.start, Stable: g.start}})
	for ref, h := range map[string]git.Hash{g.refs.Dev(): g.start, g.refs.Stable(): g.start, g.refs.Journal(): g.j0, "refs/heads/main": g.start} {
		g.set(ref, h)
	}
	g.guard = &Guard{Repo: repo, Libraries: []*library.Library{library.New("skills/codes")}, Trusted: g.start, Where: "HEAD"}
	return g
}

// journal makes a journal commit on parent holding state.
func (g *guarded) journal(parent git.Hash, s ledger.State) git.Hash {
	data, err := json.Marshal(s)
	if err != nil {
		g.t.Fatal(err)
	}
	return gittest.Commit(g.t, g.repo, parent, map[string]string{"state.json": string(data)}, "journal")
}

// set points ref at h, or deletes it when h is zero.
func (g *guarded) set(ref string, h git.Hash) {
	if h.IsZero() {
		h = git.ZeroHash
	}
	up := git.RefUpdate{Ref: ref, Hash: h, OldHash: g.current(ref)}
	if err := g.repo.UpdateRefs(g.ctx, git.UpdateRefsRequest{Updates: []git.RefUpdate{up}}); err != nil {
		g.t.Fatal(err)
	}
}

func (g *guarded) current(ref string) git.Hash {
	h, err := g.repo.ResolveRef(g.ctx, ref)
	if err != nil {
		return ""
	}
	return h
}

func (g *guarded) commit(parent git.Hash, files map[string]string) git.Hash {
	return gittest.Commit(g.t, g.repo, parent, files, "change")
}

// up is an update of ref from its current value to h (zero deletes it).
func (g *guarded) up(ref string, h git.Hash) Update {
	if h.IsZero() {
		h = git.ZeroHash
	}
	old := g.current(ref)
	if old.IsZero() {
		old = git.ZeroHash
	}
	return Update{Ref: ref, Old: old, New: h}
}

// check runs the guard and returns the refusals' texts.
func (g *guarded) check(ups ...Update) []string {
	g.t.Helper()
	refused, err := g.guard.Check(g.ctx, ups)
	if err != nil {
		g.t.Fatal(err)
	}
	var out []string
	for _, r := range refused {
		out = append(out, r.String())
	}
	return out
}

// wantRefused fails unless exactly one update is refused, for ref, with a
// reason that says every one of words.
func wantRefused(t *testing.T, got []string, ref string, words ...string) {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("refusals = %q, want one for %s", got, ref)
	}
	if !strings.HasPrefix(got[0], ref+" ") {
		t.Errorf("refusal %q is not of %s", got[0], ref)
	}
	for _, w := range words {
		if !strings.Contains(got[0], w) {
			t.Errorf("refusal %q does not say %q", got[0], w)
		}
	}
}

func wantAllowed(t *testing.T, got []string) {
	t.Helper()
	if len(got) > 0 {
		t.Errorf("refused: %q", got)
	}
}

// decide makes a dev commit on parent with files, and a journal record on
// the current journal saying it left dev there (and stable at stable).
func (g *guarded) decide(parent git.Hash, files map[string]string, stable git.Hash) (dev, journal git.Hash) {
	dev = g.commit(parent, files)
	journal = g.journal(g.current(g.refs.Journal()), ledger.State{Heads: ledger.Heads{Dev: dev, Stable: stable}})
	return dev, journal
}

func TestGuardAllowsWhatGitDescentPushes(t *testing.T) {
	g := newGuarded(t)
	// A worker's proposal, to its branch and the queue.
	p := g.commit(g.start, map[string]string{skill: "# Codes\ntopic a\n"})
	wantAllowed(t, g.check(g.up(g.refs.Worker("1"), p), g.up(ledger.Refs{Library: "codes"}.Queue(p), p)))
	// A decision: dev merges it, with its journal record, in one push.
	dev, j := g.decide(g.start, map[string]string{skill: "# Codes\ntopic a\n"}, g.start)
	wantAllowed(t, g.check(g.up(g.refs.Dev(), dev), g.up(g.refs.Journal(), j)))
	// A promotion: stable fast-forwards to dev, recorded.
	g.set(g.refs.Dev(), dev)
	g.set(g.refs.Journal(), j)
	j2 := g.journal(j, ledger.State{Heads: ledger.Heads{Dev: dev, Stable: dev}})
	wantAllowed(t, g.check(g.up(g.refs.Stable(), dev), g.up(g.refs.Journal(), j2)))
	// A rollout cache, notes and refs outside descent/ pass whatever they hold.
	odd := g.commit("", map[string]string{evals: "anything"})
	wantAllowed(t, g.check(g.up("refs/descent/codes/cache/w1", odd), g.up(ledger.NotesRef, odd), g.up("refs/heads/main", odd), g.up("refs/heads/descent-x", odd)))
}

func TestGuardAllowsAStart(t *testing.T) {
	g := newGuarded(t)
	for _, ref := range []string{g.refs.Dev(), g.refs.Stable(), g.refs.Journal()} {
		g.set(ref, "")
	}
	wantAllowed(t, g.check(g.up(g.refs.Dev(), g.start), g.up(g.refs.Stable(), g.start), g.up(g.refs.Journal(), g.j0)))
}

func TestGuardRefusesFrozenChanges(t *testing.T) {
	g := newGuarded(t)
	edit := map[string]string{evals: `{"evals": [1]}`}
	p := g.commit(g.start, edit)
	wantRefused(t, g.check(g.up(g.refs.Worker("1"), p)), g.refs.Worker("1"), p.Short(), "frozen (L0)", evals, "a proposal may never change")
	queue := g.refs.Queue(p)
	wantRefused(t, g.check(g.up(queue, p)), queue, "frozen (L0)", evals)
	// A proposal with no parent brings every frozen file.
	root := g.commit("", map[string]string{skill: "x", evals: `{"evals": []}`})
	wantRefused(t, g.check(g.up(g.refs.Worker("2"), root)), g.refs.Worker("2"), "frozen (L0)", evals)
	// A frozen glob of the configuration, and a removal.
	g.guard.Libraries[0].Frozen = append(g.guard.Libraries[0].Frozen, "SKILL.md")
	gone := g.commit(g.start, map[string]string{skill: ""})
	wantRefused(t, g.check(g.up(g.refs.Worker("3"), gone)), g.refs.Worker("3"), skill)

	dev, j := g.decide(g.start, edit, g.start)
	wantRefused(t, g.check(g.up(g.refs.Dev(), dev), g.up(g.refs.Journal(), j)), g.refs.Dev(), "frozen (L0)", evals, "history of HEAD")
}

func TestGuardFrozenFilesFromTheTrustedHistory(t *testing.T) {
	g := newGuarded(t)
	// dev moves to c, with a journal record saying so.
	decided := func(c git.Hash) []string {
		j := g.journal(g.j0, ledger.State{Heads: ledger.Heads{Dev: c, Stable: g.start}})
		return g.check(g.up(g.refs.Dev(), c), g.up(g.refs.Journal(), j))
	}
	// The user edits the evals on main; sync merges main into dev.
	user := g.commit(g.start, map[string]string{evals: `{"evals": ["user's"]}`})
	g.set("refs/heads/main", user)
	g.guard.Trusted = user
	wantAllowed(t, decided(mergeCommit(g, []git.Hash{g.start, user}, map[string]string{evals: `{"evals": ["user's"]}`})))
	// The same merge with the evals changed otherwise is refused.
	bad := mergeCommit(g, []git.Hash{g.start, user}, map[string]string{evals: `{"evals": ["not the user's"]}`})
	wantRefused(t, decided(bad), g.refs.Dev(), evals)
	// dev moved to the trusted history's commit itself: not merged in.
	wantRefused(t, decided(user), g.refs.Dev(), evals)
	// A new dev is compared with where it meets the trusted history.
	g.set(g.refs.Dev(), "")
	wantRefused(t, decided(bad), g.refs.Dev(), evals)
	// With no history in common, every frozen file it has is new.
	g.guard.Trusted = g.commit("", map[string]string{"README.md": "other\n"})
	wantRefused(t, decided(g.commit("", map[string]string{evals: "{}"})), g.refs.Dev(), evals)
}

// mergeCommit makes a commit with parents and the first parent's tree with
// files applied.
func mergeCommit(g *guarded, parents []git.Hash, files map[string]string) git.Hash {
	one := g.commit(parents[0], files)
	tree, err := g.repo.TreeOf(g.ctx, one, "")
	if err != nil {
		g.t.Fatal(err)
	}
	c, err := g.repo.CommitTree(g.ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: "merge"})
	if err != nil {
		g.t.Fatal(err)
	}
	return c
}

func TestGuardRefusesDevWithoutADecision(t *testing.T) {
	g := newGuarded(t)
	dev := g.commit(g.start, map[string]string{skill: "# Codes\nmoved by hand\n"})
	// The journal stays where it was: it left dev at start.
	wantRefused(t, g.check(g.up(g.refs.Dev(), dev)), g.refs.Dev(), dev.Short(), "no recorded decision", g.j0.Short(), g.start.Short())
	// A journal record that does not say dev is there.
	j := g.journal(g.j0, ledger.State{Heads: ledger.Heads{Dev: g.start, Stable: g.start}})
	wantRefused(t, g.check(g.up(g.refs.Dev(), dev), g.up(g.refs.Journal(), j)), g.refs.Dev(), "no recorded decision")
	// No journal at all.
	g.set(g.refs.Journal(), "")
	wantRefused(t, g.check(g.up(g.refs.Dev(), dev)), g.refs.Dev(), "no journal records it")
	// A journal written before heads existed.
	old := g.journal("", ledger.State{Round: 3})
	wantRefused(t, g.check(g.up(g.refs.Dev(), dev), g.up(g.refs.Journal(), old)), g.refs.Dev(), "does not say where it left dev")
}

func TestGuardStableFastForwardsToDev(t *testing.T) {
	g := newGuarded(t)
	d1, j1 := g.decide(g.start, map[string]string{skill: "# Codes\n1\n"}, g.start)
	g.set(g.refs.Dev(), d1)
	g.set(g.refs.Journal(), j1)
	promote := func(to git.Hash) []string {
		j := g.journal(j1, ledger.State{Heads: ledger.Heads{Dev: d1, Stable: to}})
		return g.check(g.up(g.refs.Stable(), to), g.up(g.refs.Journal(), j))
	}
	wantAllowed(t, promote(d1))
	// A descendant of stable that is not on dev.
	side := g.commit(g.start, map[string]string{skill: "# Codes\nside\n"})
	wantRefused(t, promote(side), g.refs.Stable(), side.Short(), "not on dev", d1.Short())
	// On dev as the same push leaves it.
	d2, _ := g.decide(d1, map[string]string{skill: "# Codes\n2\n"}, g.start)
	j := g.journal(j1, ledger.State{Heads: ledger.Heads{Dev: d2, Stable: d2}})
	wantAllowed(t, g.check(g.up(g.refs.Dev(), d2), g.up(g.refs.Stable(), d2), g.up(g.refs.Journal(), j)))
	// Not a fast-forward.
	g.set(g.refs.Stable(), d1)
	j = g.journal(j1, ledger.State{Heads: ledger.Heads{Dev: d1, Stable: g.start}})
	wantRefused(t, g.check(g.up(g.refs.Stable(), g.start), g.up(g.refs.Journal(), j)), g.refs.Stable(), "not a fast-forward of "+d1.Short())
	// Unless the journal records it as an undone promotion.
	undo := g.journal(j1, ledger.State{Heads: ledger.Heads{Dev: d1, Stable: g.start},
		Promotions: []ledger.Promotion{{Round: 1, From: g.start, To: d1, UndoneIn: 2}}})
	wantAllowed(t, g.check(g.up(g.refs.Stable(), g.start), g.up(g.refs.Journal(), undo)))
	// Moved by hand, even onto dev: no recorded decision.
	g.set(g.refs.Stable(), g.start)
	wantRefused(t, g.check(g.up(g.refs.Stable(), d1)), g.refs.Stable(), "no recorded decision moves stable")
}

func TestGuardDeletesTheThreeTogether(t *testing.T) {
	g := newGuarded(t)
	wantRefused(t, g.check(g.up(g.refs.Dev(), "")), g.refs.Dev(), "(deleted)", "journal", "would stay")
	wantRefused(t, g.check(g.up(g.refs.Journal(), "")), g.refs.Journal(), "descent/codes/dev and descent/codes/stable would stay")
	wantAllowed(t, g.check(g.up(g.refs.Dev(), ""), g.up(g.refs.Stable(), ""), g.up(g.refs.Journal(), "")))
	// Worker branches and the queue may go: the journal keeps what it decided.
	g.set(g.refs.Worker("1"), g.start)
	wantAllowed(t, g.check(g.up(g.refs.Worker("1"), "")))
}

func TestGuardRefusesAnUnconfiguredLibrary(t *testing.T) {
	g := newGuarded(t)
	other := ledger.Refs{Library: "other"}
	wantRefused(t, g.check(g.up(other.Worker("1"), g.start)), other.Worker("1"), `library "other" is not configured in .descent at HEAD`)
	g.guard.Libraries = nil
	wantRefused(t, g.check(g.up(g.refs.Dev(), g.start)), g.refs.Dev(), `library "codes" is not configured`)
}

func TestGuardClassify(t *testing.T) {
	libs := []*library.Library{library.New("a"), library.New("a.b")}
	libs[1].Name = "a/b" // a name with a slash: the longest configured name wins
	g := &Guard{Libraries: libs}
	for ref, want := range map[string]target{
		"refs/heads/descent/a/dev":          {lib: libs[0], name: "a", kind: devRef},
		"refs/heads/descent/a/b/stable":     {lib: libs[1], name: "a/b", kind: stableRef},
		"refs/heads/descent/a/w/7":          {lib: libs[0], name: "a", kind: workerRef},
		"refs/heads/descent/a/w/":           {lib: libs[0], name: "a", kind: otherRef},
		"refs/descent/a/journal":            {lib: libs[0], name: "a", kind: journalRef},
		"refs/descent/a/queue/0123":         {lib: libs[0], name: "a", kind: queueRef},
		"refs/descent/a/cache/aggregator":   {lib: libs[0], name: "a", kind: cacheRef},
		"refs/descent/a/dev":                {lib: libs[0], name: "a", kind: otherRef},
		"refs/heads/descent/zz/dev":         {name: "zz", kind: devRef},
		"refs/heads/descent/a/journal/more": {lib: libs[0], name: "a", kind: otherRef},
	} {
		got, ok := g.classify(ref)
		if !ok || got != want {
			t.Errorf("classify(%s) = %+v, %v; want %+v", ref, got, ok, want)
		}
	}
	for _, ref := range []string{"refs/heads/main", "refs/notes/descent", "refs/descent-remotes/o/descent/a/dev", "refs/heads/descentx/a/dev"} {
		if _, ok := g.classify(ref); ok {
			t.Errorf("classify(%s) takes it for a descent ref", ref)
		}
	}
}

func TestNewGuardTrustsHEAD(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	committed := "[library \"codes\"]\n\tpath = skills/codes\n\tfrozen = evals/**\n"
	c0 := gittest.Commit(t, repo, "", map[string]string{".descent": committed, evals: "{}"}, "init")
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: "refs/heads/main", Hash: c0}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo.Top(), ".descent"), "[library \"codes\"]\n\tpath = skills/codes\n\tfrozen = other/**\n")
	client, err := NewGuard(ctx, repo, PrePush)
	if err != nil {
		t.Fatal(err)
	}
	if len(client.Libraries) != 1 || !reflect.DeepEqual(client.Libraries[0].Frozen, []string{"other/**"}) || client.Trusted != c0 {
		t.Errorf("a clone's guard: %+v", client)
	}
	server, err := NewGuard(ctx, openBare(t, repo), PreReceive)
	if err != nil {
		t.Fatal(err)
	}
	if len(server.Libraries) != 1 || !reflect.DeepEqual(server.Libraries[0].Frozen, []string{"evals/**"}) || server.Trusted != c0 || server.Where != "HEAD "+c0.Short() {
		t.Errorf("a server's guard: %+v (want HEAD's .descent, not the working tree's)", server)
	}
}
