package cli

import (
	"strings"
	"testing"

	"github.com/git-descent/git-descent/ledger"
)

func TestPromoteRollbackNotEvolved(t *testing.T) {
	ctx, _, te := newLibrary(t)
	want := `library "codes" has not been evolved yet: run git descent evolve skills/codes`
	if err := runPromote(ctx, te.env, promoteOptions{library: "codes", force: true}); err == nil || err.Error() != want {
		t.Errorf("promote: %v, want %q", err, want)
	}
	if err := runRollback(ctx, te.env, rollbackOptions{}); err == nil || err.Error() != want {
		t.Errorf("rollback: %v, want %q", err, want)
	}
}

// With dev and stable at the same commit there is nothing to promote, undo
// or roll back: each says so, succeeds (as git's "Already up to date."
// does) and changes no ref.
func TestPromoteRollbackNothingToDo(t *testing.T) {
	ctx, repo, te := newLibrary(t)
	head, err := repo.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs := ledger.Refs{Library: "codes"}
	setRef(t, ctx, repo, refs.Dev(), head)
	setRef(t, ctx, repo, refs.Stable(), head)

	var want []string
	for _, force := range []bool{false, true} {
		if err := runPromote(ctx, te.env, promoteOptions{library: "skills/codes", force: force}); err != nil {
			t.Errorf("promote, force %v: %v", force, err)
		}
		want = append(want, "nothing to do: stable is already at dev ("+head.Short()+")")
	}
	if err := runPromote(ctx, te.env, promoteOptions{library: "codes", undo: true}); err != nil {
		t.Errorf("promote --undo: %v", err)
	}
	want = append(want, "nothing to do: no promotion to undo")
	if err := runRollback(ctx, te.env, rollbackOptions{library: "codes"}); err != nil {
		t.Errorf("rollback: %v", err)
	}
	want = append(want, "nothing to do: dev is already at stable ("+head.Short()+")")
	for _, ref := range []string{refs.Dev(), refs.Stable()} {
		if h, err := repo.ResolveRef(ctx, ref); err != nil || h != head {
			t.Errorf("%s = %s, %v; want it left at %s", ref, h, err, head)
		}
	}
	if got := strings.TrimSpace(te.stdout.String()); got != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
