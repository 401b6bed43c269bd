package ledger

import (
	"context"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// commitFiles makes a commit on parent (none when zero) that sets files
// (path → content; "" content deletes the path). It moves no ref.
func commitFiles(t *testing.T, ctx context.Context, repo *git.Repo, msg string, files map[string]string, parents ...git.Hash) git.Hash {
	t.Helper()
	var base git.Hash
	if len(parents) > 0 {
		tree, err := repo.TreeOf(ctx, parents[0], "")
		if err != nil {
			t.Fatal(err)
		}
		base = tree
	}
	tree := editTree(t, ctx, repo, base, files)
	c, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: msg + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// editTree writes files on top of base and returns the new tree.
func editTree(t *testing.T, ctx context.Context, repo *git.Repo, base git.Hash, files map[string]string) git.Hash {
	t.Helper()
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
	return tree
}

// resolve returns the value of a ref, or "" when it does not exist.
func resolve(t *testing.T, ctx context.Context, repo *git.Repo, ref string) git.Hash {
	t.Helper()
	h, err := resolveOrZero(ctx, repo, ref)
	if err != nil {
		t.Fatal(err)
	}
	if h.IsZero() {
		return ""
	}
	return h
}
