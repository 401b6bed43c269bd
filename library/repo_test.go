package library

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

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
