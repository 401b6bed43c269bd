package git

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"git version 2.39.5":                   {2, 39, 5},
		"git version 2.45.1.windows.1":         {2, 45, 1},
		"git version 2.38.0-rc1":               {2, 38, 0},
		"git version 3.0":                      {3, 0, 0},
		"git version 2.37.1 (Apple Git-137.1)": {2, 37, 1},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseVersion("nonsense"); err == nil {
		t.Error("ParseVersion accepted nonsense")
	}
	if !(Version{2, 37, 9}).Less(MinVersion) || MinVersion.Less(Version{2, 38, 0}) {
		t.Error("Less is wrong around MinVersion")
	}
}

func testRepo(t *testing.T) *Repo {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	r, err := InitRepo(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func commitFile(t *testing.T, r *Repo, parent Hash, path, content string) Hash {
	t.Helper()
	ctx := context.Background()
	blob, err := r.HashObject(ctx, []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	var base Hash
	var parents []Hash
	if parent != "" {
		if base, err = r.TreeOf(ctx, parent, ""); err != nil {
			t.Fatal(err)
		}
		parents = []Hash{parent}
	}
	tree, err := r.EditTree(ctx, base, []TreeEdit{{Path: path, Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Parents: parents, Message: "m\n"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMergeTreeConflictAndClean(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t)
	base := commitFile(t, r, "", "f.txt", "a\nb\nc\n")
	ours := commitFile(t, r, base, "f.txt", "A\nb\nc\n")
	theirs := commitFile(t, r, base, "f.txt", "a\nb\nC\n")
	tree, err := r.MergeTree(ctx, MergeTreeRequest{Ours: ours, Theirs: theirs})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := r.ReadFile(ctx, tree, "f.txt"); string(data) != "A\nb\nC\n" {
		t.Fatalf("clean merge = %q", data)
	}
	clash := commitFile(t, r, base, "f.txt", "Z\nb\nc\n")
	_, err = r.MergeTree(ctx, MergeTreeRequest{Ours: ours, Theirs: clash})
	var mc *MergeConflictError
	if !errors.As(err, &mc) || len(mc.Paths) != 1 || mc.Paths[0] != "f.txt" {
		t.Fatalf("err = %v, want a conflict in f.txt", err)
	}
	// Asked again, the kept result is the same, conflict included.
	if again, err := r.MergeTree(ctx, MergeTreeRequest{Ours: ours, Theirs: theirs}); err != nil || again != tree {
		t.Fatalf("clean merge again = %s, %v; want %s", again, err, tree)
	}
	if _, err := r.MergeTree(ctx, MergeTreeRequest{Ours: ours, Theirs: clash}); !errors.As(err, &mc) || len(mc.Paths) != 1 {
		t.Fatalf("conflicted merge again: err = %v", err)
	}
	// merge-tree ran outside the working tree: nothing appeared there.
	entries, _ := os.ReadDir(r.Top())
	for _, e := range entries {
		if e.Name() != ".git" {
			t.Errorf("merge-tree left %q in the working tree", e.Name())
		}
	}
}

func TestSetRefCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t)
	a := commitFile(t, r, "", "f", "1")
	b := commitFile(t, r, a, "f", "2")
	if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: a}); err != nil {
		t.Fatal(err)
	}
	var lost *RefChangedError
	if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: b}); !errors.As(err, &lost) {
		t.Fatalf("create over an existing ref: %v", err)
	}
	if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: b, OldHash: b}); !errors.As(err, &lost) {
		t.Fatalf("stale old value: %v", err)
	}
	if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: b, OldHash: a}); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.ResolveRef(ctx, "refs/heads/x"); h != b {
		t.Fatalf("x = %s, want %s", h, b)
	}
	if _, err := r.ResolveRef(ctx, "refs/heads/nope"); !errors.Is(err, ErrRefNotFound) {
		t.Fatalf("missing ref: %v", err)
	}
	if _, err := r.TreeOf(ctx, a, "no/such"); !errors.Is(err, ErrPathNotFound) {
		t.Fatalf("missing path: %v", err)
	}
}

// ReplaceDir computes and writes trees in process; git's own index
// (read-tree, update-index, write-tree) must build the very same trees,
// names sorted the way git sorts them included.
func TestReplaceDirMatchesGitsIndex(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	c := commitFile(t, r, "", "README.md", "r\n")
	for _, f := range []string{"skills/s/SKILL.md", "skills/s/old.md", "skills/s.md", "skills/s-x/a", "skills/t/a"} {
		c = commitFile(t, r, c, f, f+"\n")
	}
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"SKILL.md", "new file.md", "run.sh", "a.b", "ä"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("content of "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	blobs, err := r.WriteBlobs(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		inProcess, err := r.FileBlob(p)
		if err != nil || inProcess != blobs[i] {
			t.Fatalf("FileBlob(%s) = %s, %v; git wrote %s", p, inProcess, err, blobs[i])
		}
		if data, err := r.ReadBlob(ctx, blobs[i]); err != nil || !strings.HasPrefix(string(data), "content of ") {
			t.Fatalf("blob %s reads %q, %v", blobs[i], data, err)
		}
	}
	edited := []TreeEntry{
		{Path: "SKILL.md", Hash: blobs[0]}, {Path: "sub/new file.md", Hash: blobs[1]},
		{Path: "run.sh", Mode: ModeExecutable, Hash: blobs[2]}, {Path: "a.b", Hash: blobs[3]},
		{Path: "a/x", Hash: blobs[3]}, {Path: "sub/deeper/ä", Hash: blobs[4]},
	}
	for _, tc := range []struct {
		name, dir string
		files     []TreeEntry
	}{
		{"edited", "skills/s", edited},
		{"emptied: the directory goes", "skills/s", nil},
		{"a new directory", "skills/new/deep", edited},
		{"at the root", "skills", edited},
	} {
		got, err := r.ReplaceDir(ctx, c, tc.dir, tc.files)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var edits []TreeEdit
		if old, err := r.TreeOf(ctx, c, tc.dir); err == nil {
			entries, err := r.ReadTree(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				edits = append(edits, TreeEdit{Path: tc.dir + "/" + e.Path})
			}
		}
		for _, f := range tc.files {
			edits = append(edits, TreeEdit{Path: tc.dir + "/" + f.Path, Mode: f.Mode, Hash: f.Hash})
		}
		want := indexTree(t, r, c, edits)
		if got != want {
			t.Errorf("%s: ReplaceDir = %s, git's index builds %s", tc.name, got, want)
		}
		if _, err := r.ReadTree(ctx, got); err != nil {
			t.Errorf("%s: the tree was not written: %v", tc.name, err)
		}
	}
	if _, err := r.ReplaceDir(ctx, c, "skills/s", []TreeEntry{{Path: "x", Hash: blobs[0]}, {Path: "x/y", Hash: blobs[0]}}); err == nil {
		t.Error("a path that is both a file and a directory was written")
	}
}

func TestUpdateRefsIsAllOrNothing(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	a := commitFile(t, r, "", "f", "a\n")
	b := commitFile(t, r, a, "f", "b\n")
	if err := r.UpdateRefs(ctx, UpdateRefsRequest{Updates: []RefUpdate{{Ref: "refs/heads/x", Hash: a}, {Ref: "refs/heads/y", Hash: a}}}); err != nil {
		t.Fatal(err)
	}
	// y's expected value is wrong: x must not move either.
	err := r.UpdateRefs(ctx, UpdateRefsRequest{Updates: []RefUpdate{{Ref: "refs/heads/x", Hash: b, OldHash: a}, {Ref: "refs/heads/y", Hash: b, OldHash: b}}})
	var lost *RefChangedError
	if !errors.As(err, &lost) || lost.Ref != "refs/heads/y" || lost.Expected != b {
		t.Fatalf("lost race: %v (%#v)", err, lost)
	}
	for _, ref := range []string{"refs/heads/x", "refs/heads/y"} {
		if h, _ := r.ResolveRef(ctx, ref); h != a {
			t.Fatalf("%s = %s after an aborted transaction, want %s", ref, h, a)
		}
	}
	if err := r.UpdateRefs(ctx, UpdateRefsRequest{Updates: []RefUpdate{{Ref: "refs/heads/x", Hash: b, OldHash: a}, {Ref: "refs/heads/y", Hash: b, OldHash: a}}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.ResolveRef(ctx, "refs/heads/y"); h != b {
		t.Fatalf("y = %s, want %s", h, b)
	}
}

func TestTreeOfInProcessMatchesGit(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	c := commitFile(t, r, "", "a/b/c.txt", "x\n")
	root, err := r.ResolveRef(ctx, string(c)+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []Hash{c, root} {
		for _, p := range []string{"", "a", "a/b", "a/b/c.txt"} {
			got, err := r.TreeOf(ctx, obj, p)
			if err != nil {
				t.Fatalf("TreeOf(%s, %q): %v", obj.Short(), p, err)
			}
			want, err := r.ResolveRef(ctx, string(obj)+":"+p)
			if err != nil || got != want {
				t.Errorf("TreeOf(%s, %q) = %s, git says %s (%v)", obj.Short(), p, got, want, err)
			}
		}
		for _, p := range []string{"nope", "a/nope", "a/b/c.txt/d"} {
			if _, err := r.TreeOf(ctx, obj, p); !errors.Is(err, ErrPathNotFound) {
				t.Errorf("TreeOf(%s, %q) = %v, want ErrPathNotFound", obj.Short(), p, err)
			}
		}
	}
	if got, err := r.TreeOf(ctx, "HEAD", "a"); err == nil {
		t.Errorf("TreeOf(HEAD) without a HEAD commit = %s", got)
	}
	if _, err := r.TreeOf(ctx, "0123456789012345678901234567890123456789", ""); err == nil {
		t.Error("TreeOf of a missing object succeeded")
	}
}

// The in-process first-parent walks answer as git's rev-list does, merges
// that bring a change in through their second parent included.
func TestFirstParentWalksMatchGit(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	root := commitFile(t, r, "", "lib/a.md", "a\n")
	c1 := commitFile(t, r, root, "other.md", "o\n")
	side := commitFile(t, r, c1, "lib/b.md", "b\n")
	tree, err := r.TreeOf(ctx, side, "")
	if err != nil {
		t.Fatal(err)
	}
	merge, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Parents: []Hash{c1, side}, Message: "merge\n"})
	if err != nil {
		t.Fatal(err)
	}
	top := commitFile(t, r, merge, "lib/a.md", "a2\n")
	gitList := func(args ...string) string {
		out, err := r.run(ctx, cmd{}, append([]string{"rev-list", "--first-parent"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(out)), " ")
	}
	for _, c := range []struct {
		from Hash
		max  int
	}{{"", 0}, {"", 2}, {root, 0}, {c1, 0}, {c1, 1}, {top, 0}, {side, 0}} {
		got, err := r.FirstParents(ctx, top, c.from, c.max)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{string(top)}
		if c.from != "" {
			args = []string{string(c.from) + ".." + string(top)}
		}
		if c.max > 0 {
			args = append([]string{fmt.Sprintf("--max-count=%d", c.max)}, args...)
		}
		var names []string
		for _, h := range got {
			names = append(names, string(h))
		}
		if want := gitList(args...); strings.Join(names, " ") != want {
			t.Errorf("FirstParents(top, %.7s, %d) = %v, git says %s", c.from, c.max, names, want)
		}
		if c.from == "" || c.max > 0 {
			continue
		}
		for _, paths := range [][]string{nil, {"lib"}, {"lib/b.md"}, {"other.md"}, {"nope", "lib/a.md"}} {
			n, err := r.CountCommits(ctx, c.from, top, paths)
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--count", string(c.from) + ".." + string(top), "--"}, literal(paths)...)
			if want := gitList(args...); fmt.Sprint(n) != want {
				t.Errorf("CountCommits(%.7s..top, %v) = %d, git says %s", c.from, paths, n, want)
			}
		}
	}
}

// No hook runs for git-descent's own git commands, and git gets none of the
// environment it does not need: an API key never reaches anything git runs.
func TestGitRunsNoHooksAndGetsNoSecrets(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "stray-index"))
	marker := filepath.Join(t.TempDir(), "ran")
	hooks := filepath.Join(r.GitDir(), "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"reference-transaction", "pre-commit", "post-commit", "post-index-change"} {
		script := "#!/bin/sh\necho " + h + " >> " + marker + "\nenv >> " + marker + "\n"
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.Top(), "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitAll(ctx, "m", Signature{Name: "T", Email: "t@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: c}); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRefs(ctx, UpdateRefsRequest{Updates: []RefUpdate{{Ref: "refs/heads/y", Hash: c}}}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("hooks ran:\n%s", data)
	}
	for _, kv := range gitEnv() {
		if strings.HasPrefix(kv, "OPENAI_API_KEY=") || strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			t.Errorf("git's environment has %s", kv)
		}
	}
}

// indexTree applies edits to base the way git's own index does (read-tree,
// update-index --index-info, write-tree, in a private index file), for
// checking the trees git-descent builds in process.
func indexTree(t *testing.T, r *Repo, base Hash, edits []TreeEdit) Hash {
	t.Helper()
	ctx := context.Background()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	if _, err := r.run(ctx, cmd{env: env}, "read-tree", string(base)); err != nil {
		t.Fatal(err)
	}
	var info strings.Builder
	for _, e := range edits {
		mode := e.Mode
		if mode == 0 {
			mode = ModeFile
		}
		if e.Hash.IsZero() {
			mode = 0
		}
		fmt.Fprintf(&info, "%o %s\t%s\x00", mode, cmp.Or(e.Hash, ZeroHash), e.Path)
	}
	if _, err := r.run(ctx, cmd{env: env, stdin: []byte(info.String())}, "update-index", "-z", "--index-info"); err != nil {
		t.Fatal(err)
	}
	out, err := r.run(ctx, cmd{env: env}, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	return Hash(strings.TrimSpace(string(out)))
}

// EditTree works in process; for every kind of edit the journal and the
// notes make (and a few they do not), it must build the tree git's index
// builds.
func TestEditTreeMatchesGitsIndex(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	files := map[string]string{"README.md": "r\n"}
	for _, f := range []string{"decisions/r0001/a.json", "decisions/r0001/b.json", "decisions/r0002/a.json", "ab/cdef", "state.json", "x-y/z"} {
		files[f] = f + "\n"
	}
	c := commitFiles(t, r, "", files)
	blob, err := r.HashObject(ctx, []byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edits []TreeEdit
	}{
		{"replace a file", []TreeEdit{{Path: "state.json", Hash: blob}}},
		{"add beside and below", []TreeEdit{{Path: "decisions/r0003/c.json", Hash: blob}, {Path: "decisions/r0001/c.json", Hash: blob}, {Path: "x.y", Hash: blob}}},
		{"unfan a note", []TreeEdit{{Path: "ab/cdef"}, {Path: "abcdef", Hash: blob}}},
		{"remove what is not there", []TreeEdit{{Path: "no/such/file"}, {Path: "README.md/below"}, {Path: "gone"}, {Path: "decisions"}}},
		{"remove the last file of a directory", []TreeEdit{{Path: "x-y/z"}}},
		{"the last edit of a path wins", []TreeEdit{{Path: "state.json", Hash: blob}, {Path: "state.json"}, {Path: "run", Mode: ModeExecutable, Hash: blob}}},
	} {
		got, err := r.EditTree(ctx, c, tc.edits)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := indexTree(t, r, c, tc.edits); got != want {
			t.Errorf("%s: EditTree = %s, git's index builds %s", tc.name, got, want)
		}
		if _, err := r.run(ctx, cmd{}, "cat-file", "-e", string(got)); err != nil {
			t.Errorf("%s: the tree was not stored: %v", tc.name, err)
		}
	}
	if got, err := r.EditTree(ctx, "", []TreeEdit{{Path: "a/b", Hash: blob}, {Path: "a/b"}}); err != nil || got != EmptyTree {
		t.Errorf("a tree whose only file is removed again = %s, %v; want the empty tree", got, err)
	}
	for _, bad := range []string{"README.md/below", "../x", "a//b", ".git/config", "a/"} {
		if _, err := r.EditTree(ctx, c, []TreeEdit{{Path: bad, Hash: blob}}); err == nil {
			t.Errorf("EditTree wrote %q", bad)
		}
	}
}

// Blobs and trees written in process are loose objects git reads and
// fsck accepts, read-only like git's own; writing one again renews it
// rather than failing; and where git must apply permissions of its own
// (core.sharedRepository), git writes them.
func TestOwnWritesAreGitsObjects(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	if !r.ownWrites(ctx) {
		t.Fatal("a plain repository's objects are not written in process")
	}
	data := []byte("some content\x00with a NUL\n")
	h, err := r.HashObject(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.run(ctx, cmd{stdin: data}, "hash-object", "--stdin")
	if err != nil || Hash(strings.TrimSpace(string(want))) != h {
		t.Fatalf("HashObject = %s; git names it %s (%v)", h, want, err)
	}
	if out, err := r.run(ctx, cmd{}, "cat-file", "blob", string(h)); err != nil || string(out) != string(data) {
		t.Fatalf("git reads %q, %v", out, err)
	}
	file := filepath.Join(r.gitDir, "objects", string(h[:2]), string(h[2:]))
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("loose object %s: %v, %v (want mode 0444)", file, fi, err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if again, err := r.HashObject(ctx, data); err != nil || again != h {
		t.Fatalf("writing it again: %s, %v", again, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.ModTime().Before(time.Now().Add(-time.Hour)) {
		t.Errorf("an object written again keeps its old time (%v, %v): a prune could remove it", fi.ModTime(), err)
	}
	c := commitFile(t, r, "", "a/b/c.txt", "c\n")
	if _, err := r.EditTree(ctx, c, []TreeEdit{{Path: "a/d", Hash: h}}); err != nil {
		t.Fatal(err)
	}
	if out, err := r.run(ctx, cmd{}, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	for _, pattern := range []string{"tmp_obj_*", "*/tmp_obj_*"} {
		if left, _ := filepath.Glob(filepath.Join(r.gitDir, "objects", pattern)); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}

	shared := testRepo(t)
	if _, err := shared.run(ctx, cmd{}, "config", "core.sharedRepository", "group"); err != nil {
		t.Fatal(err)
	}
	if shared.ownWrites(ctx) {
		t.Fatal("a shared repository's objects are written in process, without git's permissions")
	}
	h, err = shared.HashObject(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(shared.gitDir, "objects", string(h[:2]))); err != nil || fi.Mode()&os.ModeSetgid == 0 {
		t.Errorf("git did not write the shared repository's object (%v, %v)", fi, err)
	}
}

// Commits written in process are the very commits git commit-tree writes,
// for every date form git-descent reads itself, messages with and without
// a final newline, several and repeated parents; anything else goes to
// git.
func TestCommitsInProcessAreGits(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	if !r.ownCommits(ctx) {
		t.Fatal("a plain repository's commits are not written in process")
	}
	a := commitFile(t, r, "", "a", "a\n")
	b := commitFile(t, r, a, "b", "b\n")
	tree, err := r.TreeOf(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	byGit := func(req CommitTreeRequest, sig Signature) Hash {
		args := []string{"-c", "commit.gpgSign=false", "commit-tree", string(req.Tree)}
		for _, p := range req.Parents {
			args = append(args, "-p", string(p))
		}
		out, err := r.run(ctx, cmd{stdin: []byte(req.Message), env: []string{
			"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email, "GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email,
		}}, append(args, "-F", "-")...)
		if err != nil {
			t.Fatal(err)
		}
		return Hash(strings.TrimSpace(string(out)))
	}
	for _, date := range []string{"2026-11-29T12:00:00Z", "2026-11-29T13:30:00+01:30", "2026-11-29T12:00:00-05:00", "@1795953600 +0200",
		"1795953600 -0130", "2026-11-29 12:00:00 +0100", "Sun, 29 Nov 2026 12:00:00 +0000", "Sun Nov 29 12:00:00 2026 +0100", "2026-11-29T12:00:00", "2026.11.29 12:00",
		"@0123 +0000", "@1112911993 -0000", "@1112911993 +0099", "1112911993 +2400", "2026-11-29 12:00:00 +2400", "2026-11-29 12:00:00 +0060",
		"2026-11-29T12:00:00.5Z"} {
		t.Setenv("GIT_AUTHOR_DATE", date)
		t.Setenv("GIT_COMMITTER_DATE", "2026-11-30T08:00:00Z")
		for _, req := range []CommitTreeRequest{
			{Tree: tree, Parents: []Hash{b}, Message: "one line\n"},
			{Tree: tree, Message: "no newline"},
			{Tree: tree, Parents: []Hash{b, a, b}, Message: "subject\n\nbody\n\nTrailer: x\n"},
			{Tree: tree, Parents: []Hash{a}, Message: "odd name\n", Author: Signature{Name: " Dr. X ", Email: "<x@y>"}},
			{Tree: tree, Message: "not UTF-8: \xff\xfe\n"},
			{Tree: tree, Message: "a noncharacter: \uFFFE \uFDD0\n"},
			{Tree: tree, Message: "control at the ends\n", Author: Signature{Name: "\x01X\x01", Email: "x@y"}},
		} {
			got, err := r.CommitTree(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", date, err)
			}
			sig := req.Author
			if sig.Name == "" {
				sig = DescentSignature
			}
			if want := byGit(req, sig); got != want {
				raw, _ := r.run(ctx, cmd{}, "cat-file", "commit", string(got))
				t.Errorf("date %q, message %q: wrote %s, git writes %s:\n%s", date, req.Message, got, want, raw)
			}
		}
	}
	// What git refuses is refused.
	t.Setenv("GIT_COMMITTER_DATE", "2026-11-30T08:00:00Z")
	for _, date := range []string{"12345 +0000", "0 +0000", "2100-01-01T00:00:00Z", "1969-12-31T23:30:00-01:00"} {
		t.Setenv("GIT_AUTHOR_DATE", date)
		if c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Message: "m\n"}); err == nil {
			t.Errorf("date %q, which git refuses, made %s", date, c)
		}
	}
	t.Setenv("GIT_AUTHOR_DATE", "2026-11-30T08:00:00Z")
	if c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Message: "a\x00b\n"}); err == nil {
		t.Errorf("a message with a NUL, which git refuses, made %s", c)
	}
	// Now, in a zone Go cannot load: git's own.
	t.Setenv("GIT_AUTHOR_DATE", "")
	t.Setenv("GIT_COMMITTER_DATE", "")
	t.Setenv("TZ", "JST-9")
	if c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Message: "zone\n"}); err != nil {
		t.Fatal(err)
	} else if raw, err := r.run(ctx, cmd{}, "cat-file", "commit", string(c)); err != nil || !strings.Contains(string(raw), "+0900") {
		t.Errorf("a commit made now with TZ=JST-9:\n%s (%v)", raw, err)
	}
	t.Setenv("TZ", "")
	c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Message: "now\n"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.run(ctx, cmd{}, "log", "-1", "--format=%at %ct", string(c))
	if err != nil {
		t.Fatal(err)
	}
	var at, ct int64
	if _, err := fmt.Sscan(string(raw), &at, &ct); err != nil || time.Since(time.Unix(at, 0)).Abs() > time.Minute || at != ct {
		t.Errorf("a commit made now is dated %q (%v)", raw, err)
	}
	if out, err := r.run(ctx, cmd{}, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// ChangedPaths, compared in process, lists what git diff-tree lists.
func TestChangedPathsMatchesDiffTree(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	base := commitFiles(t, r, "", map[string]string{"a": "a\n", "d/x": "x\n", "d/e/y": "y\n", "f": "f\n", "g/h": "h\n", "same/s": "s\n"})
	blob, err := r.HashObject(ctx, []byte("z\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edits []TreeEdit
	}{
		{"nothing", nil},
		{"a file changed", []TreeEdit{{Path: "a", Hash: blob}}},
		{"added and removed deep", []TreeEdit{{Path: "d/e/y"}, {Path: "d/e/z", Hash: blob}, {Path: "new/deep/n", Hash: blob}}},
		{"a directory removed", []TreeEdit{{Path: "g/h"}}},
		{"a file becomes a directory", []TreeEdit{{Path: "f"}, {Path: "f/inner", Hash: blob}}},
		{"a directory becomes a file", []TreeEdit{{Path: "g/h"}, {Path: "g", Hash: blob}}},
		{"a mode change", []TreeEdit{{Path: "d/x", Mode: ModeExecutable, Hash: r.BlobName([]byte("x\n"))}}},
		{"a link", []TreeEdit{{Path: "l", Mode: ModeSymlink, Hash: blob}}},
	} {
		tree, err := r.EditTree(ctx, base, tc.edits)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.CommitTree(ctx, CommitTreeRequest{Tree: tree, Parents: []Hash{base}, Message: tc.name + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]Hash{{base, c}, {c, base}, {Hash(tree), base}} {
			got, err := r.ChangedPaths(ctx, pair[0], pair[1])
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.run(ctx, cmd{}, "diff-tree", "-r", "-z", "--no-renames", "--name-only", string(pair[0]), string(pair[1]))
			if err != nil {
				t.Fatal(err)
			}
			want := slices.DeleteFunc(strings.Split(string(out), "\x00"), func(s string) bool { return s == "" })
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: ChangedPaths = %q, git diff-tree %q", tc.name, got, want)
			}
		}
	}
}

// commitFiles commits files (path → content) on parent.
func commitFiles(t *testing.T, r *Repo, parent Hash, files map[string]string) Hash {
	t.Helper()
	c := parent
	for _, p := range slices.Sorted(maps.Keys(files)) {
		c = commitFile(t, r, c, p, files[p])
	}
	return c
}

// A commit merged with one of its parents, in process, is what git
// merge-tree makes of the pair, either way round; other pairs go to git.
func TestMergeWithParentInProcess(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	a := commitFiles(t, r, "", map[string]string{"f": "1\n2\n3\n", "g": "g\n"})
	b := commitFile(t, r, a, "f", "1\n2 changed\n3\n")
	c := commitFile(t, r, a, "g", "g changed\n")
	for _, pair := range [][2]Hash{{a, b}, {b, a}, {b, b}} {
		got, ok, err := r.mergeDirect(ctx, MergeTreeRequest{Ours: pair[0], Theirs: pair[1]})
		if err != nil || !ok {
			t.Fatalf("%s..%s: not merged in process (%v)", pair[0].Short(), pair[1].Short(), err)
		}
		want, err := r.mergeTree(ctx, MergeTreeRequest{Ours: pair[0], Theirs: pair[1]})
		if err != nil || got != want {
			t.Errorf("%s..%s: in process %s, git %s (%v)", pair[0].Short(), pair[1].Short(), got, want, err)
		}
	}
	if _, ok, _ := r.mergeDirect(ctx, MergeTreeRequest{Ours: b, Theirs: c}); ok {
		t.Error("siblings were merged in process")
	}
	if m, err := r.MergeTree(ctx, MergeTreeRequest{Ours: b, Theirs: c}); err != nil {
		t.Fatal(err)
	} else if data, err := r.ReadFile(ctx, m, "g"); err != nil || string(data) != "g changed\n" {
		t.Errorf("siblings merged: g = %q, %v", data, err)
	}
}

// ChangedLinesOver says "over" exactly when git's count is over the limit,
// with git's count then, whatever the in-process bound.
func TestChangedLinesOverAgreesWithGit(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	// lib/t holds a NUL but the attributes make git diff it as text.
	if err := os.MkdirAll(filepath.Join(r.gitDir, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.gitDir, "info", "attributes"), []byte("lib/t diff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := commitFiles(t, r, "", map[string]string{"lib/a": "1\n2\n3\n4\n", "lib/b": "x\x00y", "lib/c": "no newline", "out/o": "o\n",
		"lib/t": "\x00\n1\n2\n3\n4\n"})
	next := commitFiles(t, r, base, map[string]string{"lib/a": "1\n2 changed\n3\n4\n5\n", "lib/b": "x\x00z", "lib/c": "no newline, changed", "lib/new": "n\nn\n", "out/o": "o\no\n",
		"lib/t": "\x00\n1 changed\n2 changed\n3 changed\n4\n"})
	exact, err := r.ChangedLines(ctx, base, next, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	if exact != 3+1+2+2+6 {
		t.Fatalf("git counts %d lines", exact)
	}
	bound, ok := r.changedLinesBound(ctx, base, next, "lib")
	if !ok || bound < exact {
		t.Fatalf("bound %d (%v) below git's %d", bound, ok, exact)
	}
	added := commitFiles(t, r, base, map[string]string{"lib/added": "1\n2\n3\n"}) // the bound is exact
	for _, pair := range [][2]Hash{{base, next}, {base, added}} {
		exact, err := r.ChangedLines(ctx, pair[0], pair[1], []string{"lib"})
		if err != nil {
			t.Fatal(err)
		}
		for limit := 0; limit <= 2*exact+8; limit++ {
			n, over, err := r.ChangedLinesOver(ctx, pair[0], pair[1], "lib", limit)
			if err != nil {
				t.Fatal(err)
			}
			if over != (exact > limit) || over && n != exact {
				t.Errorf("limit %d: %d, over %v; git counts %d", limit, n, over, exact)
			}
		}
	}
}
