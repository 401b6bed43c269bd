package git

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-descent/git-descent/sandbox"
)

// MergeTreeRequest is a three-way merge of two commits computed without a
// working tree; the merge base is found by git.
type MergeTreeRequest struct {
	Ours   Hash
	Theirs Hash
	// Text, when set, is the text merge of the merge driver named Driver,
	// whose command (merge.<Driver>.driver) is DriverCommand: where git
	// would only run that driver, MergeTree merges in process with Text
	// instead (see mergeText).
	Text          MergeText
	Driver        string
	DriverCommand string
}

// MergeConflictError is a merge that left conflicts. Tree holds the result
// with conflict markers; Paths lists the conflicted files.
type MergeConflictError struct {
	Tree  Hash
	Paths []string
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("merge conflict in %s", strings.Join(e.Paths, ", "))
}

// MergeTree merges two commits with `git merge-tree --write-tree`, which
// runs the merge drivers configured in attributes (git-descent's own among
// them). It runs with its working directory in the descent scratch
// directory, so a driver's temporary files never appear in the user's tree.
// A conflicted merge returns a *MergeConflictError.
//
// Each merge is computed once per Repo: its commits never change, nor,
// during a run, do the attributes and the drivers they name (a solo
// proposal is merged by the split stage and again for its gate).
func (r *Repo) MergeTree(ctx context.Context, req MergeTreeRequest) (Hash, error) {
	key := string(req.Ours) + ".." + string(req.Theirs)
	if m, ok := r.merges.Load(key); ok {
		return m.(merged).result()
	}
	tree, ok, err := r.mergeDirect(ctx, req)
	if !ok {
		tree, ok, err = r.mergeText(ctx, req)
	}
	if !ok {
		tree, err = r.mergeTree(ctx, req)
	}
	var conflict *MergeConflictError
	if err == nil || errors.As(err, &conflict) {
		r.merges.Store(key, merged{tree, conflict})
	}
	return tree, err
}

// merged is a MergeTree result kept.
type merged struct {
	tree     Hash
	conflict *MergeConflictError
}

func (m merged) result() (Hash, error) {
	if m.conflict != nil {
		return m.tree, &MergeConflictError{Tree: m.conflict.Tree, Paths: append([]string(nil), m.conflict.Paths...)}
	}
	return m.tree, nil
}

// mergeDirect merges, in process, a commit with one of its own parents (a
// proposal made on the dev it is merged onto, the usual case): the merge
// base is the parent, so the merge is the child's tree, whatever drivers
// the attributes name (no path changed on both sides). ok is false for
// any other pair.
func (r *Repo) mergeDirect(ctx context.Context, req MergeTreeRequest) (tree Hash, ok bool, err error) {
	if !isObjectName(req.Ours) || !isObjectName(req.Theirs) {
		return "", false, nil
	}
	for _, pair := range [][2]Hash{{req.Ours, req.Theirs}, {req.Theirs, req.Ours}} {
		parent, child := pair[0], pair[1]
		ps, err := r.parentsOf(child)
		if err != nil {
			return "", false, nil // git will say what is wrong
		}
		if parent == child || slices.Contains(ps, parent) {
			tree, err := r.TreeOf(ctx, child, "")
			return tree, err == nil, err
		}
	}
	return "", false, nil
}

func (r *Repo) mergeTree(ctx context.Context, req MergeTreeRequest) (Hash, error) {
	env := []string{"GIT_DIR=" + r.gitDir}
	out, code, err := r.runCode(ctx, cmd{dir: r.tmpDir(), env: env, okCodes: []int{1}},
		"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", string(req.Ours), string(req.Theirs))
	if err != nil {
		return "", err
	}
	fields := strings.Split(string(out), "\x00")
	tree, err := parseHash([]byte(fields[0]))
	if err != nil {
		return "", fmt.Errorf("git merge-tree: %w", err)
	}
	if code == 0 {
		return tree, nil
	}
	ce := &MergeConflictError{Tree: tree}
	for _, p := range fields[1:] {
		if p != "" {
			ce.Paths = append(ce.Paths, p)
		}
	}
	return tree, ce
}

// MergeFileRequest is a three-way merge of one file's contents.
type MergeFileRequest struct {
	Ours, Base, Theirs []byte
	// Labels name ours, base and theirs in conflict markers.
	Labels     [3]string
	MarkerSize int  // conflict marker length; 0 means git's default (7)
	Diff3      bool // show the base section in conflicts
	// Favor resolves every conflict to one side instead of leaving
	// markers; "" leaves them.
	Favor MergeFavor
}

// MergeFavor is the side `git merge-file` resolves conflicts to.
type MergeFavor string

// The sides of MergeFileRequest.Favor.
const (
	FavorOurs   MergeFavor = "ours"
	FavorTheirs MergeFavor = "theirs"
)

// MergeFile runs `git merge-file -p` on the three versions and returns the
// merged text and the number of conflicts it left (0 for a clean merge). It
// needs no repository; it logs the command to log at Debug (nil discards).
func MergeFile(ctx context.Context, log *slog.Logger, req MergeFileRequest) ([]byte, int, error) {
	// A workspace, so that what a killed driver leaves is removed by the
	// next run (sandbox.CleanDead).
	ws, err := sandbox.NewWorkspace("", "descent-merge-")
	if err != nil {
		return nil, 0, fmt.Errorf("merge file: %w", err)
	}
	defer ws.Remove()
	dir := ws.Dir
	names := [3]string{"ours", "base", "theirs"}
	for i, data := range [][]byte{req.Ours, req.Base, req.Theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), data, 0o600); err != nil {
			return nil, 0, fmt.Errorf("merge file: %w", err)
		}
	}
	args := []string{"merge-file", "-p"}
	if req.Diff3 {
		args = append(args, "--diff3")
	}
	if req.MarkerSize > 0 {
		args = append(args, "--marker-size="+strconv.Itoa(req.MarkerSize))
	}
	if req.Favor != "" {
		args = append(args, "--"+string(req.Favor))
	}
	for _, l := range req.Labels {
		if l == "" {
			l = "-"
		}
		args = append(args, "-L", l)
	}
	args = append(args, names[0], names[1], names[2])
	// Exit codes 1..127 count conflicts; anything else is an error.
	ok := make([]int, 127)
	for i := range ok {
		ok[i] = i + 1
	}
	out, code, err := runGit(ctx, log, cmd{dir: dir, okCodes: ok}, args...)
	if err != nil {
		return nil, 0, err
	}
	return out, code, nil
}

// MergeIntoHead merges rev into the current branch in the working tree, as
// git merge --no-ff does, with message as the merge commit's: the library's
// merge driver handles its files. A merge that leaves conflicts returns a
// *MergeConflictError naming them, with the working tree left mid-merge
// for the user (git merge --abort undoes it).
func (r *Repo) MergeIntoHead(ctx context.Context, rev Hash, message string) (Hash, error) {
	if r.top == "" {
		return "", errors.New("merge into HEAD: the repository has no working tree")
	}
	_, err := r.run(ctx, cmd{}, "merge", "--no-ff", "--no-edit", "-m", message, string(rev))
	var ce *CommandError
	if errors.As(err, &ce) && ce.ExitCode == 1 {
		out, derr := r.run(ctx, cmd{}, "diff", "--name-only", "-z", "--diff-filter=U")
		if derr != nil {
			return "", derr
		}
		if s := strings.TrimSuffix(string(out), "\x00"); s != "" {
			return "", &MergeConflictError{Paths: strings.Split(s, "\x00")}
		}
	}
	if err != nil {
		return "", err
	}
	return r.Head(ctx)
}
