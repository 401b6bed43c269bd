package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
)

// Queue is where a remote worker's proposal waits for a decision: one ref
// per proposal, named by its commit, so that concurrent workers never
// touch each other's refs. The aggregator deletes it in the push that
// publishes the journal deciding (or keeping) it; the journal keeps the
// commit reachable from then on.
func (r Refs) Queue(commit git.Hash) string { return r.QueuePrefix() + string(commit) }

// QueuePrefix is the prefix of the library's queued proposals.
func (r Refs) QueuePrefix() string { return "refs/descent/" + r.Library + "/queue/" }

// Cache is where a writer's share of the rollout cache travels with the
// repository: a chain of commits, each holding in CacheFile the records
// one push added. Each machine writes its own ref, so concurrent writers
// race on one only when they share a name, and then the loser's records
// go on top of the winner's.
func (r Refs) Cache(writer string) string { return r.CachePrefix() + writer }

// CachePrefix is the prefix of the library's shared rollout caches.
func (r Refs) CachePrefix() string { return "refs/descent/" + r.Library + "/cache/" }

// CacheFile is the rollout log in a cache commit's tree.
const CacheFile = "rollouts.jsonl"

// AggregatorWriter is the cache ref aggregators write.
const AggregatorWriter = "aggregator"

var (
	writerRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	remoteNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// CheckWriter refuses a worker id or cache writer name that cannot be one
// path component of a ref.
func CheckWriter(id string) error {
	if !writerRE.MatchString(id) || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") {
		return fmt.Errorf("worker id %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// Remote is a library's descent refs on another repository: workers on
// other machines push proposals to it, and aggregators decide them there.
// Fetch copies the remote's refs into a private namespace of this
// repository (refs/descent-remotes/<remote>/...); Adopt brings this
// repository's dev, stable, journal and notes up to them; Publish and
// PushProposal write to the remote with compare-and-swap leases against
// what was fetched, in atomic pushes. A Remote is one process's, used
// from one goroutine at a time.
type Remote struct {
	repo *git.Repo
	Name string // a remote's name, a URL or a path
	refs Refs
	key  string // the namespace's name for the remote

	known   map[git.Hash]bool // Known's answer for the local journal at knownAt
	knownAt git.Hash
}

// Known is the local journal's Journal.Known, read again only when the
// journal has moved: an aggregator asks it for every queued proposal and
// every publish.
func (m *Remote) Known(ctx context.Context) (map[git.Hash]bool, error) {
	c, err := resolveOrZero(ctx, m.repo, m.refs.Journal())
	if err != nil {
		return nil, err
	}
	if m.known != nil && c == m.knownAt {
		return m.known, nil
	}
	known := map[git.Hash]bool{}
	if !c.IsZero() {
		if known, err = KnownAt(ctx, m.repo, c); err != nil {
			return nil, err
		}
	}
	m.known, m.knownAt = known, c
	return known, nil
}

// OpenRemote returns the library's refs on remote.
func OpenRemote(repo *git.Repo, remote, library string) *Remote {
	key := remote
	if !remoteNameRE.MatchString(remote) || strings.Contains(remote, "..") {
		h := sha256.Sum256([]byte(remote))
		key = "url-" + hex.EncodeToString(h[:6])
	}
	return &Remote{repo: repo, Name: remote, refs: Refs{library}, key: key}
}

// tracking is where Fetch keeps the remote's value of ref.
func (m *Remote) tracking(ref string) string {
	return "refs/descent-remotes/" + m.key + "/" + strings.TrimPrefix(ref, "refs/")
}

// Fetch copies the library's refs and the notes from the remote.
func (m *Remote) Fetch(ctx context.Context) error {
	lib := m.refs.Library
	specs := []string{
		"+refs/heads/descent/" + lib + "/*:" + m.tracking("refs/heads/descent/"+lib+"/*"),
		"+refs/descent/" + lib + "/*:" + m.tracking("refs/descent/"+lib+"/*"),
		"+" + NotesRef + "*:" + m.tracking(NotesRef+"*"),
	}
	return m.repo.Fetch(ctx, m.Name, specs)
}

// Value is ref's value on the remote as last fetched (zero: it has none).
func (m *Remote) Value(ctx context.Context, ref string) (git.Hash, error) {
	return resolveOrZero(ctx, m.repo, m.tracking(ref))
}

// Queued returns the proposals queued on the remote as last fetched. A
// queue ref not named by the commit it holds is not a proposal git-descent
// queued, and is left alone.
func (m *Remote) Queued(ctx context.Context) ([]git.Hash, error) {
	prefix := m.tracking(m.refs.QueuePrefix())
	refs, err := m.repo.ListRefs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var out []git.Hash
	for _, r := range refs {
		if r.Name == prefix+string(r.Hash) {
			out = append(out, r.Hash)
		}
	}
	return out, nil
}

// CacheRefs returns the remote's rollout cache refs as last fetched, by
// writer.
func (m *Remote) CacheRefs(ctx context.Context) (map[string]git.Hash, error) {
	prefix := m.tracking(m.refs.CachePrefix())
	refs, err := m.repo.ListRefs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := map[string]git.Hash{}
	for _, r := range refs {
		out[strings.TrimPrefix(r.Name, prefix)] = r.Hash
	}
	return out, nil
}

// Adopted says what Adopt did.
type Adopted struct {
	Empty     bool     // the remote has no journal for the library yet
	Moved     bool     // this repository's refs were brought up to the remote's
	Ahead     bool     // this repository has decisions the remote has not: Publish pushes them
	Discarded git.Hash // the local journal that diverged from the remote's and was replaced by it (kept at Refs.Replaced)
}

// Replaced is where Adopt keeps the last local journal it replaced by a
// remote's, with every decision it held.
func (r Refs) Replaced() string { return "refs/descent/" + r.Library + "/replaced" }

// Adopt brings this repository's dev, stable, journal and notes of the
// library up to the remote's, as last fetched, in one transaction: the
// remote is the record. A local journal the remote's contains is
// fast-forwarded; one that contains the remote's is ahead (decisions made
// here and not yet published: Publish pushes them); one that diverged
// holds decisions the remote never received (an aggregator that lost a
// race to another) and is replaced by the remote's, which decided since:
// its proposals are still queued there, or decided.
func (m *Remote) Adopt(ctx context.Context) (Adopted, error) {
	var a Adopted
	remote, err := m.Value(ctx, m.refs.Journal())
	if err != nil {
		return a, err
	}
	if remote.IsZero() {
		a.Empty = true
		return a, nil
	}
	// A fetch can see another push's ref transaction half applied (refs
	// are read one at a time): a mismatch that a second fetch clears was
	// one.
	for try := 1; ; try++ {
		err := m.checkHeads(ctx, remote)
		if err == nil {
			break
		}
		if try == 3 {
			return a, err
		}
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
		if err := m.Fetch(ctx); err != nil {
			return a, err
		}
		if remote, err = m.Value(ctx, m.refs.Journal()); err != nil {
			return a, err
		}
	}
	local, err := resolveOrZero(ctx, m.repo, m.refs.Journal())
	if err != nil {
		return a, err
	}
	var ups []git.RefUpdate
	switch rel, err := m.relation(ctx, local, remote); {
	case err != nil:
		return a, err
	case rel == same:
	case rel == ahead:
		a.Ahead = true
		return a, nil
	default:
		if rel == diverged {
			a.Discarded = local
			was, err := resolveOrZero(ctx, m.repo, m.refs.Replaced())
			if err != nil {
				return a, err
			}
			ups = append(ups, git.RefUpdate{Ref: m.refs.Replaced(), Hash: local, OldHash: was})
		}
		for _, ref := range []string{m.refs.Journal(), m.refs.Dev(), m.refs.Stable()} {
			up, changed, err := m.follow(ctx, ref)
			if err != nil {
				return a, err
			}
			if changed {
				ups = append(ups, up)
			}
		}
	}
	notes, ok, err := m.adoptNotes(ctx)
	if err != nil {
		return a, err
	}
	if ok {
		ups = append(ups, notes)
	}
	if len(ups) == 0 {
		return a, nil
	}
	if err := m.repo.UpdateRefs(ctx, git.UpdateRefsRequest{Updates: ups, Reason: "git-descent: adopt " + m.Name + "'s descent refs"}); err != nil {
		return a, fmt.Errorf("bring the descent refs of %s up to %s: %w", m.refs.Library, m.Name, err)
	}
	a.Moved = true
	return a, nil
}

// checkHeads refuses a remote whose dev or stable is not where its journal
// (at journal) left them: something other than git-descent pushed them,
// and nothing built on them passed a gate.
func (m *Remote) checkHeads(ctx context.Context, journal git.Hash) error {
	state, err := StateAt(ctx, m.repo, journal)
	if err != nil {
		return fmt.Errorf("read %s's journal of %s: %w", m.Name, m.refs.Library, err)
	}
	for _, h := range []struct {
		ref  string
		want git.Hash
	}{{m.refs.Dev(), state.Heads.Dev}, {m.refs.Stable(), state.Heads.Stable}} {
		got, err := m.Value(ctx, h.ref)
		if err != nil {
			return err
		}
		if !h.want.IsZero() && got != h.want {
			return fmt.Errorf("%s's %s is at %s, not where its journal left it (%s): something other than git-descent pushed it, and no gate passed that\n"+
				"  put it back:  git push --force-with-lease=%s:%s %s %s:%s",
				m.Name, Short(h.ref), got.Short(), h.want.Short(), h.ref, got, m.Name, h.want, h.ref)
		}
	}
	return nil
}

type relation int

const (
	same relation = iota
	behind
	ahead
	diverged
)

// relation says where local stands to remote in history.
func (m *Remote) relation(ctx context.Context, local, remote git.Hash) (relation, error) {
	switch {
	case local == remote:
		return same, nil
	case local.IsZero():
		return behind, nil
	case remote.IsZero():
		return ahead, nil
	}
	if ok, err := m.repo.IsAncestor(ctx, local, remote); err != nil || ok {
		return behind, err
	}
	if ok, err := m.repo.IsAncestor(ctx, remote, local); err != nil || ok {
		return ahead, err
	}
	return diverged, nil
}

// follow is the update that sets the local ref to the remote's value
// (deleting it when the remote has none), compare-and-swap against its
// local value.
func (m *Remote) follow(ctx context.Context, ref string) (git.RefUpdate, bool, error) {
	want, err := m.Value(ctx, ref)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	have, err := resolveOrZero(ctx, m.repo, ref)
	if err != nil || have == want {
		return git.RefUpdate{}, false, err
	}
	if want.IsZero() {
		want = git.ZeroHash
	}
	return git.RefUpdate{Ref: ref, Hash: want, OldHash: have}, true, nil
}

// adoptNotes brings the local notes up to the remote's: fast-forwarded
// when behind, kept when ahead, and when both have notes the other lacks
// (another library's, decided here) a merge of the two, the remote's note
// winning where both annotate one commit.
func (m *Remote) adoptNotes(ctx context.Context) (git.RefUpdate, bool, error) {
	remote, err := m.Value(ctx, NotesRef)
	if err != nil || remote.IsZero() {
		return git.RefUpdate{}, false, err
	}
	local, err := resolveOrZero(ctx, m.repo, NotesRef)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	switch rel, err := m.relation(ctx, local, remote); {
	case err != nil:
		return git.RefUpdate{}, false, err
	case rel == same || rel == ahead:
		return git.RefUpdate{}, false, nil
	case rel == behind:
		return git.RefUpdate{Ref: NotesRef, Hash: remote, OldHash: local}, true, nil
	}
	lt, err := m.repo.TreeOf(ctx, local, "")
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	rt, err := m.repo.TreeOf(ctx, remote, "")
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	theirs, err := m.repo.ReadTree(ctx, rt)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	ours, err := m.repo.ReadTree(ctx, lt)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	have := map[string]bool{}
	for _, e := range theirs {
		have[e.Path] = true
	}
	var edits []git.TreeEdit
	for _, e := range ours {
		if !have[e.Path] {
			edits = append(edits, git.TreeEdit{Path: e.Path, Hash: e.Hash, Mode: e.Mode})
		}
	}
	if len(edits) == 0 {
		// Every local note annotates a commit the remote's notes do too:
		// theirs stand.
		return git.RefUpdate{Ref: NotesRef, Hash: remote, OldHash: local}, true, nil
	}
	tree, err := m.repo.EditTree(ctx, rt, edits)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	c, err := m.repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: []git.Hash{remote, local},
		Message: "git-descent: notes from " + m.Name + " and this repository\n"})
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	return git.RefUpdate{Ref: NotesRef, Hash: c, OldHash: local}, true, nil
}

// ErrRaced is a push that lost to another writer: fetch, adopt and try
// again.
var ErrRaced = errors.New("another git-descent pushed first")

// push sends updates in one atomic push; a lost lease is ErrRaced.
func (m *Remote) push(ctx context.Context, ups []git.PushUpdate) error {
	err := m.repo.Push(ctx, m.Name, ups)
	var rej *git.PushRejectedError
	if errors.As(err, &rej) && rej.Stale {
		return fmt.Errorf("%w: %v", ErrRaced, err)
	}
	if errors.Is(err, git.ErrNoAtomicPush) {
		return fmt.Errorf("push to %s: %w; git-descent publishes dev, stable and their journal together or not at all, so it needs a remote that takes them (GitHub, GitLab and git's own servers do)", m.Name, err)
	}
	return err
}

// pushed records what a successful push set, in the tracking refs, so
// that the next push leases against it.
func (m *Remote) pushed(ctx context.Context, ups []git.PushUpdate) error {
	var local []git.RefUpdate
	for _, u := range ups {
		old, err := m.Value(ctx, u.Ref)
		if err != nil {
			return err
		}
		h := u.Hash
		if h.IsZero() {
			if old.IsZero() {
				continue
			}
			h = git.ZeroHash
		}
		local = append(local, git.RefUpdate{Ref: m.tracking(u.Ref), Hash: h, OldHash: old})
	}
	return m.repo.UpdateRefs(ctx, git.UpdateRefsRequest{Updates: local, Reason: "git-descent: pushed to " + m.Name})
}

// Published is what Publish sent.
type Published struct {
	Refs    []string // dev, stable, the journal, the notes: those that moved
	Dequeue int      // queued proposals the journal now holds, removed from the queue
}

// Publish pushes this repository's dev, stable, journal and notes where
// they differ from the remote's, and removes from the remote's queue the
// proposals the journal now holds (decided, re-filed or pooled), in one
// atomic push leased against what was fetched: ErrRaced when another
// aggregator published first (nothing was written; adopt its refs and
// decide again). Call it after Adopt.
func (m *Remote) Publish(ctx context.Context) (Published, error) {
	var p Published
	head, err := OpenJournal(m.repo, m.refs.Library).Head(ctx)
	if err != nil {
		return p, err
	}
	if err := CheckHeads(ctx, m.repo, m.refs.Library, head); err != nil {
		return p, err // a dev or stable moved here by hand is never published
	}
	var ups []git.PushUpdate
	for _, ref := range []string{m.refs.Dev(), m.refs.Stable(), m.refs.Journal(), NotesRef} {
		have, err := resolveOrZero(ctx, m.repo, ref)
		if err != nil {
			return p, err
		}
		theirs, err := m.Value(ctx, ref)
		if err != nil {
			return p, err
		}
		if have == theirs || have.IsZero() {
			continue
		}
		ups = append(ups, git.PushUpdate{Ref: ref, Hash: have, Expect: theirs})
		p.Refs = append(p.Refs, Short(ref))
	}
	queued, err := m.Queued(ctx)
	if err != nil {
		return p, err
	}
	if len(queued) > 0 {
		known, err := m.Known(ctx)
		if err != nil {
			return p, err
		}
		for _, c := range queued {
			if known[c] {
				ups = append(ups, git.PushUpdate{Ref: m.refs.Queue(c), Expect: c})
				p.Dequeue++
			}
		}
	}
	if len(ups) == 0 {
		return p, nil
	}
	if err := m.PushUpdates(ctx, ups); err != nil {
		return Published{}, err
	}
	return p, nil
}

// PushProposal pushes proposal p, a commit of this repository, to its
// worker's branch and to the queue on the remote, with extra (the
// worker's cache ref), in one atomic push. The worker branch is leased
// against its fetched value: when another process of the same worker id
// moved it, PushProposal fetches and tries again (the other's proposal is
// queued under its own name, so nothing is lost, and this one is pushed
// once). extra is asked again on each attempt, after the fetch.
func (m *Remote) PushProposal(ctx context.Context, p *Proposal, extra func() ([]git.PushUpdate, error)) error {
	const attempts = 5
	for i := 1; ; i++ {
		branch := m.refs.Worker(p.Worker)
		was, err := m.Value(ctx, branch)
		if err != nil {
			return err
		}
		ups := []git.PushUpdate{{Ref: branch, Hash: p.Commit, Expect: was}, {Ref: m.refs.Queue(p.Commit), Hash: p.Commit}}
		if extra != nil {
			more, err := extra()
			if err != nil {
				return err
			}
			ups = append(ups, more...)
		}
		err = m.PushUpdates(ctx, ups)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrRaced) || i == attempts {
			return fmt.Errorf("push proposal %s of worker %s: %w", p.Commit.Short(), p.Worker, err)
		}
		if err := m.Fetch(ctx); err != nil {
			return err
		}
		queued, err := m.Queued(ctx)
		if err != nil {
			return err
		}
		for _, c := range queued {
			if c == p.Commit {
				return nil // an earlier attempt landed after all
			}
		}
	}
}

// PushRefs pushes local refs (a start's dev, stable and journal) that the
// remote must not have yet; ErrRaced when it has one.
func (m *Remote) PushRefs(ctx context.Context, refs []string) error {
	var ups []git.PushUpdate
	for _, ref := range refs {
		h, err := resolveOrZero(ctx, m.repo, ref)
		if err != nil {
			return err
		}
		if h.IsZero() {
			continue
		}
		ups = append(ups, git.PushUpdate{Ref: ref, Hash: h})
	}
	return m.PushUpdates(ctx, ups)
}

// PushUpdates sends ups (CacheUpdate's) in one atomic push and records
// them as fetched; ErrRaced when another process moved one of them first.
func (m *Remote) PushUpdates(ctx context.Context, ups []git.PushUpdate) error {
	if err := m.push(ctx, ups); err != nil {
		return err
	}
	return m.pushed(ctx, ups)
}

// CacheUpdate is the update that pushes a writer's cache commit, for
// PushProposal's extra.
func (m *Remote) CacheUpdate(ctx context.Context, writer string, commit git.Hash) ([]git.PushUpdate, error) {
	ref := m.refs.Cache(writer)
	was, err := m.Value(ctx, ref)
	if err != nil || was == commit || commit.IsZero() {
		return nil, err
	}
	return []git.PushUpdate{{Ref: ref, Hash: commit, Expect: was}}, nil
}

// ReadCache returns the rollout records a writer's cache ref gained from
// commit since (zero: all of them): each cache commit holds the records
// its push added, on top of the writer's earlier ones, so reading what is
// new costs what is new.
func ReadCache(ctx context.Context, repo *git.Repo, commit, since git.Hash) ([]byte, error) {
	chain, err := repo.FirstParents(ctx, commit, since, 0)
	if err != nil {
		return nil, err
	}
	var out []byte
	for i := len(chain) - 1; i >= 0; i-- { // oldest first
		data, err := repo.ReadFile(ctx, chain[i], CacheFile)
		if errors.Is(err, git.ErrPathNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, data...)
	}
	return out, nil
}

// CacheCommit writes records (log lines) as a cache commit on top of
// parent (zero: the first of the writer's ref).
func CacheCommit(ctx context.Context, repo *git.Repo, parent git.Hash, records []byte) (git.Hash, error) {
	blob, err := repo.HashObject(ctx, records)
	if err != nil {
		return "", err
	}
	tree, err := repo.EditTree(ctx, "", []git.TreeEdit{{Path: CacheFile, Hash: blob}})
	if err != nil {
		return "", err
	}
	var parents []git.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	return repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: "git-descent: rollout cache\n"})
}
