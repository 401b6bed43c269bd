// Package materialize moves library versions between git trees and
// directories: it writes a version into a rollout workspace or a
// proposer's seat, and captures a proposer's edits back into a tree.
package materialize

import (
	"context"
	"fmt"

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
		if _, err := writeFile(ctx, repo, e, dst); err != nil {
			return fmt.Errorf("materialize %q: %w", e.Path, err)
		}
	}
	return nil
}
