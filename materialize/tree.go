// Package materialize moves library versions between git trees and
// directories: it writes a version into a rollout workspace, keeps the
// worker worktrees, and captures a proposer's edits back into a tree.
package materialize

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// WriteTree writes the files of a tree into dst (created if needed), keeping
// the executable bit. skip, when non-nil, leaves out paths for which it
// returns true. Symlinks are written only when their target stays inside
// the tree; submodules are left out.
func WriteTree(ctx context.Context, repo *git.Repo, tree git.Hash, dst string, skip func(rel string) bool) error {
	entries, err := repo.ReadTree(ctx, tree)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if skip != nil && skip(e.Path) {
			continue
		}
		if err := writeEntry(ctx, repo, e, dst); err != nil {
			return fmt.Errorf("materialize %q: %w", e.Path, err)
		}
	}
	return nil
}

func writeEntry(ctx context.Context, repo *git.Repo, e git.TreeEntry, dst string) error {
	if e.Mode == git.ModeGitlink {
		return nil
	}
	data, err := repo.ReadBlob(ctx, e.Hash)
	if err != nil {
		return err
	}
	p := filepath.Join(dst, filepath.FromSlash(e.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	switch e.Mode {
	case git.ModeSymlink:
		target := string(data)
		resolved := path.Join(path.Dir(e.Path), target)
		if path.IsAbs(target) || resolved == ".." || strings.HasPrefix(resolved, "../") {
			return nil
		}
		return os.Symlink(target, p)
	case git.ModeExecutable:
		return os.WriteFile(p, data, 0o755)
	}
	return os.WriteFile(p, data, 0o644)
}
