package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Signature is the author and committer of commits git-descent makes. The
// dates come from GIT_AUTHOR_DATE / GIT_COMMITTER_DATE when set, else now.
type Signature struct {
	Name  string
	Email string
}

// DescentSignature is the identity of commits made by git-descent itself, so
// that machine-made history is never mistaken for a person's.
var DescentSignature = Signature{Name: "git-descent", Email: "git-descent@localhost"}

// CommitTreeRequest describes a commit to create without touching any
// working tree or index.
type CommitTreeRequest struct {
	Tree    Hash
	Parents []Hash
	Message string
	Author  Signature // zero means DescentSignature
}

// CommitTree writes a commit object and returns its name. No ref moves.
// It is written in process (writeCommit) where it can be byte for byte
// what `git commit-tree` writes, else by git.
func (r *Repo) CommitTree(ctx context.Context, req CommitTreeRequest) (Hash, error) {
	sig := req.Author
	if sig.Name == "" {
		sig = DescentSignature
	}
	if r.ownCommits(ctx) {
		if h, ok, err := r.writeCommit(ctx, req, sig); ok {
			return h, err
		}
	}
	args := []string{"commit-tree", string(req.Tree)}
	for _, p := range req.Parents {
		args = append(args, "-p", string(p))
	}
	args = append(args, "-F", "-")
	env := []string{
		"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email,
		"GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email,
	}
	out, err := r.run(ctx, cmd{stdin: []byte(req.Message), env: env}, append([]string{"-c", "commit.gpgSign=false"}, args...)...)
	if err != nil {
		return "", err
	}
	return parseHash(out)
}

// HashObject writes data as a blob and returns its name.
func (r *Repo) HashObject(ctx context.Context, data []byte) (Hash, error) {
	if r.ownWrites(ctx) {
		return r.writeBlob(ctx, data)
	}
	out, err := r.run(ctx, cmd{stdin: data}, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	return parseHash(out)
}

// Parents returns the parents of a commit, first parent first: read in
// process (parentsOf) for a full object name, else by git.
func (r *Repo) Parents(ctx context.Context, commit Hash) ([]Hash, error) {
	if isObjectName(commit) {
		if ps, err := r.parentsOf(commit); err == nil {
			return slices.Clone(ps), nil
		}
	}
	out, err := r.run(ctx, cmd{}, "rev-list", "--parents", "-n", "1", string(commit))
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(out))
	var ps []Hash
	for _, p := range f[1:] {
		ps = append(ps, Hash(p))
	}
	return ps, nil
}

// Diff returns `git diff` between two commits limited to paths, as patch
// text. color asks git for ANSI colours.
func (r *Repo) Diff(ctx context.Context, from, to Hash, paths []string, color bool) (string, error) {
	args := []string{"diff", "--no-ext-diff", "--stat", "--patch"}
	if color {
		args = append(args, "--color=always")
	} else {
		args = append(args, "--no-color")
	}
	args = append(args, string(from), string(to), "--")
	args = append(args, literal(paths)...)
	out, err := r.run(ctx, cmd{}, args...)
	return string(out), err
}

// ChangedPaths lists, sorted, the paths of files that differ between two
// trees or commits, as `git diff-tree -r --no-renames --name-only` does:
// compared in process, subtree by subtree, skipping those that did not
// change, for full object names; by git otherwise.
func (r *Repo) ChangedPaths(ctx context.Context, from, to Hash) ([]string, error) {
	if isObjectName(from) && isObjectName(to) {
		a, errA := r.TreeOf(ctx, from, "")
		b, errB := r.TreeOf(ctx, to, "")
		if errA == nil && errB == nil {
			var paths []string
			// An object go-git does not see (a push's, in the quarantine,
			// packed) is git's to compare.
			if err := r.diffTrees(a, b, "", &paths); err == nil {
				slices.Sort(paths)
				return paths, nil
			}
		}
	}
	out, err := r.run(ctx, cmd{}, "diff-tree", "-r", "-z", "--no-renames", "--name-only", string(from), string(to))
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// diffTrees adds to paths the files below prefix that
// differ between trees a and b ("" for none).
func (r *Repo) diffTrees(a, b Hash, prefix string, paths *[]string) error {
	if a == b {
		return nil
	}
	var ea, eb []dirEntry
	var err error
	if a != "" {
		if ea, err = r.readDir(a); err != nil {
			return err
		}
	}
	if b != "" {
		if eb, err = r.readDir(b); err != nil {
			return err
		}
	}
	byName := func(es []dirEntry) map[string]dirEntry {
		m := make(map[string]dirEntry, len(es))
		for _, e := range es {
			m[e.name] = e
		}
		return m
	}
	ma, mb := byName(ea), byName(eb)
	names := make([]string, 0, len(ma)+len(mb))
	for n := range ma {
		names = append(names, n)
	}
	for n := range mb {
		if _, ok := ma[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		x, inA := ma[n]
		y, inB := mb[n]
		p := prefix + n
		if inA && inB && x.mode == y.mode && x.hash == y.hash {
			continue
		}
		var ta, tb Hash // the subtrees on either side
		if inA && x.mode == ModeTree {
			ta = x.hash
		}
		if inB && y.mode == ModeTree {
			tb = y.hash
		}
		if inA && x.mode != ModeTree || inB && y.mode != ModeTree {
			*paths = append(*paths, p) // a file on at least one side
		}
		if ta != "" || tb != "" {
			if err := r.diffTrees(ta, tb, p+"/", paths); err != nil {
				return err
			}
		}
	}
	return nil
}

// ChangedLines counts the lines added plus removed between two commits
// under paths (binary files count as one line each).
func (r *Repo) ChangedLines(ctx context.Context, from, to Hash, paths []string) (int, error) {
	args := append([]string{"diff", "--no-ext-diff", "--no-renames", "--numstat", string(from), string(to), "--"}, literal(paths)...)
	out, err := r.run(ctx, cmd{}, args...)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[0] == "-" {
			n++
			continue
		}
		var add, del int
		fmt.Sscan(f[0], &add)
		fmt.Sscan(f[1], &del)
		n += add + del
	}
	return n, nil
}

// ChangedLinesOver reports whether more than limit lines are added plus
// removed between two commits under the directory dir, as ChangedLines
// counts them, and how many when they are. It first bounds the count in
// process: a changed file adds at most its lines on both sides; git counts
// exactly only when the bound is over.
func (r *Repo) ChangedLinesOver(ctx context.Context, from, to Hash, dir string, limit int) (int, bool, error) {
	if bound, ok := r.changedLinesBound(ctx, from, to, dir); ok && bound <= limit {
		return bound, false, nil
	}
	n, err := r.ChangedLines(ctx, from, to, []string{dir})
	return n, n > limit, err
}

// changedLinesBound is the in-process bound of ChangedLinesOver; false when
// it cannot be computed here.
func (r *Repo) changedLinesBound(ctx context.Context, from, to Hash, dir string) (int, bool) {
	dir = strings.Trim(dir, "/")
	var sub [2]Hash // dir's tree on either side, "" where there is none
	for i, c := range []Hash{from, to} {
		if !isObjectName(c) {
			return 0, false
		}
		h, err := r.TreeOf(ctx, c, dir)
		switch {
		case errors.Is(err, ErrPathNotFound):
		case err != nil:
			return 0, false
		default:
			sub[i] = h
		}
	}
	var paths []string
	if err := r.diffTrees(sub[0], sub[1], dir+"/", &paths); err != nil {
		return 0, false
	}
	bound := 0
	for _, p := range paths {
		// Every line on both sides: at least what git counts, whether it
		// diffs the file as text or counts it as one binary change.
		for _, c := range []Hash{from, to} {
			data, err := r.ReadFile(ctx, c, p)
			if errors.Is(err, ErrPathNotFound) {
				continue
			}
			if err != nil {
				return 0, false
			}
			bound += bytes.Count(data, []byte("\n"))
			if len(data) > 0 && data[len(data)-1] != '\n' {
				bound++
			}
		}
	}
	return bound, true
}

// LogSubjects lists the first-parent commits in from..to that change any of
// paths, newest first, as "<short hash> <subject>" lines.
func (r *Repo) LogSubjects(ctx context.Context, from, to Hash, paths []string) ([]string, error) {
	args := []string{"log", "--first-parent", "--format=%h %s", string(from) + ".." + string(to), "--"}
	out, err := r.run(ctx, cmd{}, append(args, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
