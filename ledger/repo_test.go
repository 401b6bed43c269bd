package ledger

import (
	"context"
	"os/exec"
	"strings"
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

// gitOut runs git in the repository and returns its trimmed stdout.
func gitOut(t *testing.T, repo *git.Repo, args ...string) string {
	t.Helper()
	out, err := gitRun(repo, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func gitRun(repo *git.Repo, args ...string) (string, error) {
	c := exec.Command("git", args...)
	c.Dir = repo.Top()
	out, err := c.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), &gitError{err: err, stderr: string(ee.Stderr)}
	}
	return strings.TrimRight(string(out), "\n"), err
}

type gitError struct {
	err    error
	stderr string
}

func (e *gitError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

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
