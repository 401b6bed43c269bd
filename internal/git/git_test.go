package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// A sparse worktree shows only its paths and never turns on
// extensions.worktreeConfig or core.sparseCheckout in the user's config.
func TestSparseWorktreeLeavesConfigAlone(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t)
	c := commitFile(t, r, "", "lib/a.md", "a\n")
	c = commitFile(t, r, c, "other/b.md", "b\n")
	before, err := os.ReadFile(filepath.Join(r.GitDir(), "config"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.DescentDir(), "worktrees", "w1")
	wt, err := r.AddWorktree(ctx, dir, c, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "a.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); !os.IsNotExist(err) {
		t.Fatal("sparse worktree checked out other/")
	}
	changes, err := wt.Changes(ctx)
	if err != nil || len(changes) != 0 {
		t.Fatalf("fresh worktree changes = %v, %v", changes, err)
	}
	after, _ := os.ReadFile(filepath.Join(r.GitDir(), "config"))
	if string(before) != string(after) {
		t.Fatalf("config changed:\n%s", after)
	}
	if err := r.RemoveWorktree(ctx, dir); err != nil {
		t.Fatal(err)
	}
	out, _ := r.run(ctx, cmd{}, "worktree", "list")
	if strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Fatalf("worktree still listed:\n%s", out)
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
