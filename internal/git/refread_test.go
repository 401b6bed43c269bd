package git

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Refs read in process agree with `git rev-parse` whether loose, packed,
// both, deleted or missing; names git must resolve itself go to git.
func TestReadRefMatchesGit(t *testing.T) {
	ctx, r := context.Background(), testRepo(t)
	c1 := commitFile(t, r, "", "a.md", "a\n")
	c2 := commitFile(t, r, c1, "a.md", "b\n")
	gitRev := func(name string) string {
		out, err := r.run(ctx, cmd{}, "rev-parse", "--verify", "--quiet", "--end-of-options", name+"^{object}")
		if err != nil {
			return "missing"
		}
		return strings.TrimSpace(string(out))
	}
	check := func(when string, names ...string) {
		t.Helper()
		for _, name := range names {
			h, ok, err := r.readRef(name)
			got := string(h)
			if errors.Is(err, ErrRefNotFound) {
				got = "missing"
			}
			if !ok || err != nil && !errors.Is(err, ErrRefNotFound) {
				t.Errorf("%s: readRef(%q) = %q, %v, %v: want it read in process", when, name, h, ok, err)
			} else if want := gitRev(name); got != want {
				t.Errorf("%s: readRef(%q) = %s, git says %s", when, name, got, want)
			}
		}
	}
	set := func(name string, h Hash) {
		t.Helper()
		if _, err := r.run(ctx, cmd{}, "update-ref", name, string(h)); err != nil {
			t.Fatal(err)
		}
	}
	set("refs/heads/descent/s/dev", c1)
	set("refs/descent/s/journal", c2)
	check("loose", "refs/heads/descent/s/dev", "refs/descent/s/journal", "refs/heads/descent/s/none", "refs/heads/descent/s")
	if _, err := r.run(ctx, cmd{}, "pack-refs", "--all"); err != nil {
		t.Fatal(err)
	}
	check("packed", "refs/heads/descent/s/dev", "refs/descent/s/journal", "refs/heads/descent/s/none")
	set("refs/heads/descent/s/dev", c2) // loose again, over the packed line
	check("loose over packed", "refs/heads/descent/s/dev")
	if _, err := r.run(ctx, cmd{}, "update-ref", "-d", "refs/descent/s/journal"); err != nil {
		t.Fatal(err)
	}
	check("deleted from packed-refs", "refs/descent/s/journal", "refs/heads/descent/s/dev")
	for _, name := range []string{"HEAD", "main", "refs/heads/x^{tree}", "refs/heads/a..b", "refs/worktree/x", "refs/heads/x:y", "refs/heads/x@{1}", "refs/heads/"} {
		if _, ok, _ := r.readRef(name); ok {
			t.Errorf("readRef(%q) answered; only git should", name)
		}
	}
	if _, err := r.run(ctx, cmd{}, "symbolic-ref", "refs/heads/link", "refs/heads/descent/s/dev"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.readRef("refs/heads/link"); ok {
		t.Error("readRef followed a symbolic ref itself")
	}
	if h, err := r.ResolveRef(ctx, "refs/heads/link"); err != nil || h != c2 {
		t.Errorf("ResolveRef(symbolic) = %s, %v; want %s from git", h, err, c2)
	}
}
