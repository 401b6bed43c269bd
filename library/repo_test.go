package library

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// newRepo creates an empty repository with the user's and the system's git
// config kept out.
func newRepo(t *testing.T) (context.Context, *git.Repo) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	repo, err := git.InitRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ctx, repo
}

// setConfig writes .descent with `git config -f`, one call per key and
// value: "key=value" replaces, "+key=value" adds another value.
func setConfig(t *testing.T, repo *git.Repo, kvs ...string) {
	t.Helper()
	file := filepath.Join(repo.Top(), FileName)
	for _, kv := range kvs {
		args := []string{"config", "-f", file}
		if rest, ok := strings.CutPrefix(kv, "+"); ok {
			args, kv = append(args, "--add"), rest
		}
		k, v, _ := strings.Cut(kv, "=")
		if out, err := exec.Command("git", append(args, k, v)...).CombinedOutput(); err != nil {
			t.Fatalf("git config %s: %v: %s", kv, err, out)
		}
	}
}
