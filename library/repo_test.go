package library

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// setConfig writes .descent, one key and value at a time: "key=value"
// replaces, "+key=value" adds another value.
func setConfig(t *testing.T, repo *git.Repo, kvs ...string) {
	t.Helper()
	ctx := context.Background()
	file := git.ConfigFile(filepath.Join(repo.Top(), FileName))
	values := map[string][]string{} // what setConfig wrote, per key
	for _, kv := range kvs {
		rest, add := strings.CutPrefix(kv, "+")
		k, v, _ := strings.Cut(rest, "=")
		var err error
		if add {
			values[k] = append(values[k], v)
			err = repo.ConfigReplaceAll(ctx, file, k, values[k])
		} else {
			values[k] = []string{v}
			err = repo.ConfigSet(ctx, file, k, v)
		}
		if err != nil {
			t.Fatalf("set %s in %s: %v", kv, FileName, err)
		}
	}
}
