package git

import (
	"context"
	"fmt"
	"strings"
)

// DirtyPaths lists the paths under path that differ from HEAD in the main
// working tree or index, untracked files included (ignored files are not).
func (r *Repo) DirtyPaths(ctx context.Context, path string) ([]string, error) {
	if r.top == "" {
		return nil, nil
	}
	out, err := r.run(ctx, cmd{}, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ":(literal)"+path)
	if err != nil {
		return nil, fmt.Errorf("status of %q: %w", path, err)
	}
	var ps []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) > 3 {
			ps = append(ps, rec[3:])
		}
	}
	return ps, nil
}
