package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/aggregate"
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

// With dev and stable at the same commit there is nothing to promote or
// roll back: both refuse, change no ref and print nothing.
func TestPromoteRollbackNothingToDo(t *testing.T) {
	ctx, repo, te := newLibrary(t)
	head, err := repo.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs := ledger.Refs{Library: "codes"}
	setRef(t, ctx, repo, refs.Dev(), head)
	setRef(t, ctx, repo, refs.Stable(), head)

	for _, force := range []bool{false, true} {
		err := runPromote(ctx, te.env, promoteOptions{library: "skills/codes", force: force})
		if !errors.Is(err, aggregate.ErrNotPromotable) || !strings.Contains(err.Error(), "stable is already at dev ("+head.Short()+")") {
			t.Errorf("promote, force %v: %v", force, err)
		}
	}
	err = runRollback(ctx, te.env, rollbackOptions{library: "codes"})
	if want := "dev is already at stable (" + head.Short() + "): nothing to roll back"; err == nil || err.Error() != want {
		t.Errorf("rollback: %v, want %q", err, want)
	}
	for _, ref := range []string{refs.Dev(), refs.Stable()} {
		if h, err := repo.ResolveRef(ctx, ref); err != nil || h != head {
			t.Errorf("%s = %s, %v; want it left at %s", ref, h, err, head)
		}
	}
	if te.stdout.Len() > 0 {
		t.Errorf("printed %q", te.stdout)
	}
}
