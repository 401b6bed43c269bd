package materialize

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// Rollout is a library version laid out in a rollout workspace.
type Rollout struct {
	SkillDir string   // absolute directory of the library inside the workspace
	Files    []string // absolute paths of the staged task files
}

// WriteRollout lays out one rollout in the empty workspace dir: the library
// version libTree at the library's layout (without its hidden files: the
// eval answers), and each task file (a path relative to the library) copied
// from libTree to the workspace root under its base name.
func WriteRollout(ctx context.Context, repo *git.Repo, lib *library.Library, libTree git.Hash, dir string, files []string) (Rollout, error) {
	r := Rollout{SkillDir: filepath.Join(dir, filepath.FromSlash(lib.LayoutDir()))}
	if err := os.MkdirAll(r.SkillDir, 0o755); err != nil {
		return r, fmt.Errorf("lay out rollout: %w", err)
	}
	if err := WriteTree(ctx, repo, libTree, r.SkillDir, lib.Hidden); err != nil {
		return r, err
	}
	for _, f := range files {
		data, err := repo.ReadFile(ctx, libTree, f)
		if err != nil {
			return r, fmt.Errorf("stage task file %q: %w", f, err)
		}
		dst := filepath.Join(dir, path.Base(f))
		if _, err := os.Lstat(dst); err == nil {
			return r, fmt.Errorf("stage task file %q: %q already exists in the workspace (two task files share a name, or one clashes with the layout)", f, path.Base(f))
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return r, fmt.Errorf("stage task file %q: %w", f, err)
		}
		r.Files = append(r.Files, dst)
	}
	return r, nil
}
