package git

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// InitRepo creates a new repository with branch main in dir and opens it
// with log (see Open).
func InitRepo(ctx context.Context, dir string, log *slog.Logger) (*Repo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %q: %w", dir, err)
	}
	if _, _, err := runGit(ctx, log, cmd{dir: dir}, "init", "--quiet", "--initial-branch=main"); err != nil {
		return nil, err
	}
	return Open(ctx, dir, log)
}

// CommitAll stages everything in the main working tree and commits it as
// sig on the current branch. Only the demo uses it, in a repository it
// created: git-descent never commits to a user's branch.
func (r *Repo) CommitAll(ctx context.Context, message string, sig Signature) (Hash, error) {
	if _, err := r.run(ctx, cmd{}, "add", "--all"); err != nil {
		return "", err
	}
	env := []string{
		"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email,
		"GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email,
	}
	// No automatic gc: it would go on in the background while the run that
	// follows writes objects (and it removes empty object directories that a
	// concurrent writer has just made).
	if _, err := r.run(ctx, cmd{env: env}, "-c", "commit.gpgSign=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
		"commit", "--quiet", "--message", message); err != nil {
		return "", err
	}
	return r.Head(ctx)
}
