package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// testEnv is an env run in a test repository, with its output kept.
type testEnv struct {
	*env
	stdout, stderr *bytes.Buffer
}

func newTestEnv(repo *git.Repo) *testEnv {
	te := &testEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	te.env = &env{stdin: &bytes.Buffer{}, stdout: te.stdout, stderr: te.stderr, dir: repo.Top()}
	return te
}

// newLibrary makes a repository whose one commit holds the library
// skills/codes (two eval tasks), configured as `git descent init` does
// with a run and a proposer, and returns an env run in it.
func newLibrary(t *testing.T) (context.Context, *git.Repo, *testEnv) {
	t.Helper()
	ctx, repo := gittest.NewRepo(t)
	files := map[string]string{
		"skills/codes/SKILL.md":          "# Code words\n",
		"skills/codes/evals/evals.json":  `{"evals": [{"id": "a", "prompt": "apples?", "expected_output": "red"}, {"id": "b", "prompt": "plums?", "expected_output": "blue"}]}`,
		"skills/codes/scripts/helper.sh": "#!/bin/sh\n",
	}
	if err := writeFiles(repo.Top(), files); err != nil {
		t.Fatal(err)
	}
	te := newTestEnv(repo)
	if err := runInit(ctx, te.env, initOptions{path: "skills/codes", run: "agent {{prompt}}", proposer: "propose", scorer: "exact",
		frozen: []string{"evals/**"}, guarded: []string{"scripts/**"}}); err != nil {
		t.Fatalf("init: %v\n%s", err, te.stderr)
	}
	if _, err := repo.CommitAll(ctx, "Add the codes skill", git.Signature{Name: "Test", Email: "test@example.com"}); err != nil {
		t.Fatal(err)
	}
	te.stdout.Reset()
	return ctx, repo, te
}

// setRef points a ref that does not exist yet at commit.
func setRef(t *testing.T, ctx context.Context, repo *git.Repo, ref string, commit git.Hash) {
	t.Helper()
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: ref, Hash: commit, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
}
