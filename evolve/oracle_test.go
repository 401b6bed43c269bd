package evolve

import (
	"context"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/library"
)

func treeOf(t *testing.T, ctx context.Context, repo *git.Repo, files map[string]string) git.Hash {
	t.Helper()
	var edits []git.TreeEdit
	for p, c := range files {
		h, err := repo.HashObject(ctx, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		edits = append(edits, git.TreeEdit{Path: p, Hash: h})
	}
	tree, err := repo.EditTree(ctx, "", edits)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The oracle runs against dev's frozen files: a candidate that rewrote the
// check, or added a file under a frozen path, changes nothing it sees.
func TestOracleUsesFrozenFilesFromDev(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	lib := library.New("skills/s")
	lib.Frozen = []string{"evals/**", "tests/**"}
	lib.Oracle = "sh tests/check.sh"
	o := &oracle{repo: repo, lib: lib}
	check := "test \"$(cat answer.txt)\" = ok || { echo \"bad answer: $(cat answer.txt)\"; exit 1; }\n[ ! -e tests/extra.sh ] || { echo shadowed; exit 1; }\n"
	dev := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check})
	good := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check, "notes.md": "n\n"})
	if failure, err := o.Check(ctx, good, dev); err != nil || failure != "" {
		t.Fatalf("good candidate: %q, %v", failure, err)
	}
	shadow := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check, "tests/extra.sh": "x\n"})
	if failure, err := o.Check(ctx, shadow, dev); err != nil || failure != "" {
		t.Fatalf("a file added under a frozen path reached the oracle: %q, %v", failure, err)
	}
	cheat := treeOf(t, ctx, repo, map[string]string{"answer.txt": "wrong\n", "tests/check.sh": "exit 0\n", "tests/extra.sh": "x\n"})
	failure, err := o.Check(ctx, cheat, dev)
	if err != nil || !strings.Contains(failure, "exit status 1: bad answer: wrong") {
		t.Fatalf("cheating candidate: %q, %v", failure, err)
	}
}
