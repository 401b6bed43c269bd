package git

import (
	"context"
)

// MergeText merges one file's three versions as a merge driver would: the
// merged content, and clean false when conflicts remain.
type MergeText func(ctx context.Context, path string, base, ours, theirs []byte) (merged []byte, clean bool, err error)

// For a commit S with a single parent P and another commit X of which P is
// an ancestor while S is not, the merge base is P: the common ancestors of
// X and S are P and P's ancestors, and P descends from all the others.
// Proposals are such commits (their parent is the dev they were made on,
// of which the dev or the candidate they are merged into descends).
//
// soleBase proves it in process with two bounded walks: A, ancestors of P
// (breadth first, up to maxBaseWalk commits), then X's ancestry without
// going past P or any commit of A. If that walk ends within maxBaseWalk
// commits, every ancestor of X it did not see is an ancestor of P, which S
// is not (S is P's child): so S is an ancestor of X only if the walk met
// it, and P is one only if the walk reached P itself (no commit of A
// descends from P).
const maxBaseWalk = 256

// soleBase returns the merge base of a and b when one of them has a single
// parent and the other descends from that parent but not from it; ok is
// false otherwise (git finds the base, virtual ones included).
func (r *Repo) soleBase(a, b Hash) (base Hash, ok bool) {
	for _, pair := range [][2]Hash{{a, b}, {b, a}} {
		s, x := pair[0], pair[1]
		ps, err := r.parentsOf(s)
		if err != nil || len(ps) != 1 || x == s {
			continue
		}
		p := ps[0]
		below, _, err := r.ancestry(p, nil, maxBaseWalk)
		if err != nil || below[x] && x != p {
			return "", false // x is an ancestor of p, or git must say
		}
		seen, met, err := r.ancestry(x, below, maxBaseWalk)
		switch {
		case err != nil || seen == nil:
			return "", false // too far to tell
		case seen[s]:
			return "", false // s is an ancestor of x: git says what that merges to
		case met[p]:
			return p, true
		}
	}
	return "", false
}

// ancestry walks from c through parents, breadth first, not going past
// any commit in stop, and returns the commits it saw and those of stop it
// met (c is in one or the other). It stops after max commits: then seen is
// what it saw so far when stop is nil (some of c's ancestors), and nil
// otherwise (the walk did not end).
func (r *Repo) ancestry(c Hash, stop map[Hash]bool, max int) (seen, met map[Hash]bool, err error) {
	seen, met = map[Hash]bool{}, map[Hash]bool{}
	visit := func(q Hash) bool {
		switch {
		case stop[q]:
			met[q] = true
		case !seen[q]:
			seen[q] = true
			return true
		}
		return false
	}
	var queue []Hash
	if visit(c) {
		queue = append(queue, c)
	}
	for len(queue) > 0 {
		if len(seen) > max {
			if stop != nil {
				return nil, met, nil
			}
			return seen, met, nil
		}
		parents, err := r.parentsOf(queue[0])
		if err != nil {
			return nil, nil, err
		}
		queue = queue[1:]
		for _, q := range parents {
			if visit(q) {
				queue = append(queue, q)
			}
		}
	}
	return seen, met, nil
}

// mergeText merges ours and theirs in process when git would merge them
// with no rename to detect and every file both sides changed going to the
// driver req names, so that the driver's text merge can run here instead
// of in `git merge-tree` and the processes it starts (a shell, the driver,
// the driver's own `git merge-file`): the two commits have a certain merge
// base (soleBase); no path is removed, or changes between file and
// directory, on either side (renames need a removed path); no
// .gitattributes file is on the way to a change; a file both sides changed
// differently is a regular file of one mode everywhere, whose merge
// attribute (as `git check-attr` reads it where merge-tree runs) is
// req.Driver, with merge.<driver>.driver set to req.DriverCommand, and
// merges cleanly; and merge.renormalize is off. ok is false otherwise:
// git merges it then, and says what conflicts.
func (r *Repo) mergeText(ctx context.Context, req MergeTreeRequest) (tree Hash, ok bool, err error) {
	if req.Text == nil || req.Driver == "" || !r.ownWrites(ctx) || !isObjectName(req.Ours) || !isObjectName(req.Theirs) || !r.driverConfigured(ctx, req) {
		return "", false, nil
	}
	base, ok := r.soleBase(req.Ours, req.Theirs)
	if !ok {
		return "", false, nil
	}
	var roots [3]Hash
	for i, c := range []Hash{base, req.Ours, req.Theirs} {
		if roots[i], err = r.TreeOf(ctx, c, ""); err != nil {
			return "", false, nil // git will say what is wrong
		}
	}
	m := &textMerger{r: r, req: req, w: treeWriter{r: r}}
	h, ok, err := m.dir(ctx, "", roots[0], roots[1], roots[2])
	if err != nil || !ok {
		return "", false, err
	}
	for _, b := range m.blobs {
		if _, err := r.writeBytes(ctx, "blob", b); err != nil {
			return "", false, err
		}
	}
	if err := m.w.write(ctx); err != nil {
		return "", false, err
	}
	if h == "" {
		h = r.emptyTree()
	}
	return h, true, nil
}

// driverConfigured says whether merge.<driver>.driver is req's command and
// merge.renormalize is off, read once per Repo.
func (r *Repo) driverConfigured(ctx context.Context, req MergeTreeRequest) bool {
	key := "config\x00" + req.Driver + "\x00" + req.DriverCommand
	if v, ok := r.attrs.Load(key); ok {
		return v.(bool)
	}
	cmd, ok, err := r.ConfigGet(ctx, "merge."+req.Driver+".driver")
	if err != nil {
		return false
	}
	renorm, _, err := r.ConfigGet(ctx, "merge.renormalize")
	if err != nil {
		return false
	}
	yes := ok && cmd == req.DriverCommand && (renorm == "" || renorm == "false")
	r.attrs.Store(key, yes)
	return yes
}

// mergeAttr is the merge attribute of path as `git merge-tree` reads it:
// `git check-attr` in the directory and with the environment merge-tree
// runs in. Kept per Repo, as merge-tree's results are.
func (r *Repo) mergeAttr(ctx context.Context, path string) (string, error) {
	if v, ok := r.attrs.Load("attr\x00" + path); ok {
		return v.(string), nil
	}
	v, err := r.checkAttr(ctx, cmd{dir: r.tmpDir(), env: []string{"GIT_DIR=" + r.gitDir}}, "merge", path)
	if err != nil {
		return "", err
	}
	r.attrs.Store("attr\x00"+path, v)
	return v, nil
}

// textMerger is one in-process merge: the trees and blobs it made, to be
// written once the whole merge is known to be git's.
type textMerger struct {
	r     *Repo
	req   MergeTreeRequest
	w     treeWriter
	blobs [][]byte
}

// dir merges one directory's three versions ("" where a side has none),
// at path (its path from the top, "" or ending in "/"). It returns the
// merged tree's name ("" when empty) and ok false when git must merge.
func (m *textMerger) dir(ctx context.Context, path string, base, ours, theirs Hash) (Hash, bool, error) {
	var sides [3][]dirEntry
	for i, t := range []Hash{base, ours, theirs} {
		if t == "" || t == m.r.emptyTree() {
			continue
		}
		var err error
		if sides[i], err = m.r.readDir(t); err != nil {
			return "", false, nil
		}
	}
	byName := map[string]*[3]*dirEntry{}
	var names []string
	for i := range sides {
		for j := range sides[i] {
			e := &sides[i][j]
			if e.name == ".gitattributes" {
				return "", false, nil
			}
			slot := byName[e.name]
			if slot == nil {
				slot = &[3]*dirEntry{}
				byName[e.name] = slot
				names = append(names, e.name)
			}
			slot[i] = e
		}
	}
	var out []dirEntry
	for _, name := range names {
		b, o, t := byName[name][0], byName[name][1], byName[name][2]
		if b != nil && (o == nil || t == nil || isTree(o) != isTree(b) || isTree(t) != isTree(b)) {
			return "", false, nil // a removal, or a file that became a directory or back
		}
		switch {
		case same(o, t):
			out = appendEntry(out, o)
		case same(o, b):
			out = appendEntry(out, t)
		case same(t, b):
			out = appendEntry(out, o)
		case b != nil && isTree(b):
			h, ok, err := m.dir(ctx, path+name+"/", b.hash, o.hash, t.hash)
			if err != nil || !ok {
				return "", false, err
			}
			if h != "" {
				out = append(out, dirEntry{name: name, mode: ModeTree, hash: h})
			}
		case b == nil || !regular(b.mode) || o.mode != b.mode || t.mode != b.mode:
			return "", false, nil // added on both sides, a link, a submodule or a mode change
		default:
			h, ok, err := m.file(ctx, path+name, b.hash, o.hash, t.hash)
			if err != nil || !ok {
				return "", false, err
			}
			out = append(out, dirEntry{name: name, mode: b.mode, hash: h})
		}
	}
	return m.w.add(out), true, nil
}

// file merges a file both sides changed with the driver's text merge, when
// git would give it to that driver and it merges cleanly.
func (m *textMerger) file(ctx context.Context, path string, base, ours, theirs Hash) (Hash, bool, error) {
	attr, err := m.r.mergeAttr(ctx, path)
	if err != nil || attr != m.req.Driver {
		return "", false, err
	}
	var texts [3][]byte
	for i, h := range []Hash{base, ours, theirs} {
		if texts[i], err = m.r.ReadBlob(ctx, h); err != nil {
			return "", false, nil
		}
	}
	merged, clean, err := m.req.Text(ctx, path, texts[0], texts[1], texts[2])
	if err != nil || !clean {
		return "", false, nil // git runs the driver and reports what it finds
	}
	m.blobs = append(m.blobs, merged)
	return m.r.BlobName(merged), true, nil
}

func isTree(e *dirEntry) bool { return e.mode == ModeTree }

func regular(m Mode) bool { return m == ModeFile || m == ModeExecutable }

// same says whether two entries (nil for none) are the same object in the
// same mode.
func same(a, b *dirEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.mode == b.mode && a.hash == b.hash
}

// appendEntry appends e unless it is nil (no entry).
func appendEntry(out []dirEntry, e *dirEntry) []dirEntry {
	if e == nil {
		return out
	}
	return append(out, *e)
}
