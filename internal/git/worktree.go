package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// RemoveWorktree removes a linked worktree at dir, if any, and prunes git's
// record of worktrees whose directories are gone. git-descent makes no
// worktrees any more (decision 58); runs of earlier versions left worker
// worktrees under DescentDir, which evolve removes with this.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		if _, err := r.run(ctx, cmd{}, "worktree", "remove", "--force", "--force", dir); err != nil {
			var ce *CommandError
			if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "is not a working tree") {
				return fmt.Errorf("remove worktree %q: %w", dir, err)
			}
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("remove worktree %q: %w", dir, err)
			}
		}
	}
	_, err := r.run(ctx, cmd{}, "worktree", "prune")
	return err
}
