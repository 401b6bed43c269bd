package git

import (
	"context"
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
func (r *Repo) CommitTree(ctx context.Context, req CommitTreeRequest) (Hash, error) {
	sig := req.Author
	if sig.Name == "" {
		sig = DescentSignature
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
		return r.writeBlob(data)
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

// ChangedPaths lists the paths that differ between two trees or commits.
func (r *Repo) ChangedPaths(ctx context.Context, from, to Hash) ([]string, error) {
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
	return paths, nil
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
