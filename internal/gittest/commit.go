package gittest

import (
	"context"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// Commit makes a commit on parent (a root commit when parent is zero) whose
// tree is parent's with files applied (path → content; "" content removes
// the path), and returns it. It moves no ref and touches no working tree.
func Commit(t testing.TB, repo *git.Repo, parent git.Hash, files map[string]string, msg string) git.Hash {
	t.Helper()
	ctx := context.Background()
	var base git.Hash
	var parents []git.Hash
	if !parent.IsZero() {
		tree, err := repo.TreeOf(ctx, parent, "")
		if err != nil {
			t.Fatal(err)
		}
		base, parents = tree, []git.Hash{parent}
	}
	var edits []git.TreeEdit
	for p, content := range files {
		e := git.TreeEdit{Path: p}
		if content != "" {
			h, err := repo.HashObject(ctx, []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			e.Hash = h
		}
		edits = append(edits, e)
	}
	tree, err := repo.EditTree(ctx, base, edits)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
