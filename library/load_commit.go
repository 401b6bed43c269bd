package library

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/git-descent/git-descent/internal/git"
)

// LoadAt reads every library configured in the .descent file that commit
// (a commit or a tree) holds at its root, as LoadAll reads the working
// tree's: the configuration as committed, for a repository without a
// working tree (a shared bare repository trusts its HEAD's, never a pushed
// commit's) or where the working tree's may have been edited. A commit
// without .descent configures no library: nil and no error.
func LoadAt(ctx context.Context, repo *git.Repo, commit git.Hash) ([]*Library, error) {
	data, err := repo.ReadFile(ctx, commit, FileName)
	if errors.Is(err, git.ErrPathNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", FileName, commit.Short(), err)
	}
	// git parses the file, as it parses the working tree's: a copy of the
	// blob outside the repository is what `git config --file` reads.
	f, err := os.CreateTemp("", "descent-config-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("copy %s of %s: %w", FileName, commit.Short(), err)
	}
	libs, err := load(ctx, repo, git.ConfigFile(f.Name()))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", commit.Short(), err)
	}
	return libs, nil
}
