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

// ChangedTracked lists the tracked files with changes not committed, in the
// index or the working tree (untracked files aside), as git merge would
// see them.
func (r *Repo) ChangedTracked(ctx context.Context) ([]string, error) {
	if r.top == "" {
		return nil, nil
	}
	out, err := r.run(ctx, cmd{}, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames")
	if err != nil {
		return nil, err
	}
	var ps []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) > 3 {
			ps = append(ps, rec[3:])
		}
	}
	return ps, nil
}
