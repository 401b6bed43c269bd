package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
)

type adoptOptions struct {
	library string
	rev     string
	to      string
}

func newAdoptCmd(e *env) *cobra.Command {
	var o adoptOptions
	c := &cobra.Command{
		Use:               "adopt [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Merge stable into your branch, or install it where your agent loads skills",
		Long: `adopt takes the evolved library into use. Without --to it merges descent/<lib>/stable
(or --rev) into the current branch the way you would: git merge --no-ff, a normal merge
commit, the library's files through git-descent's merge driver. It refuses while tracked
files have uncommitted changes (commit or stash them), and a merge that conflicts stops
as git merge does, for you to resolve and commit or to git merge --abort.

--to installs the library's files instead: claude (~/.claude/skills/<name>), codex
(~/.codex/skills/<name>) or a directory. What was there is moved to a backup beside the
skills directory (~/.claude/skills-backup/<name>-<time>), where no agent loads it as a
skill; the repository is not touched.`,
		Example: `  git descent adopt pdf-audit
  git descent adopt pdf-audit --to claude
  git descent adopt pdf-audit --to ~/work/skills/pdf-audit --rev descent/pdf-audit/dev`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runAdopt(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.rev, "rev", "", "the `revision` to adopt (default descent/<lib>/stable)")
	c.Flags().StringVar(&o.to, "to", "", "install into claude, codex or a `directory` instead of merging")
	return c
}

func runAdopt(ctx context.Context, e *env, o adoptOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	refs := ledger.Refs{Library: lib.Name}
	name := o.rev
	if name == "" {
		name = ledger.Short(refs.Stable())
	}
	rev, err := resolveCommit(ctx, repo, name)
	if err != nil {
		return err
	}
	if o.to != "" {
		return installLibrary(ctx, e, repo, lib, rev, name, o.to)
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return err
	}
	if ok, err := repo.IsAncestor(ctx, rev, head); err != nil {
		return err
	} else if ok {
		fmt.Fprintf(e.stdout, "nothing to do: HEAD already has %s (%s)\n", name, rev.Short())
		return nil
	}
	dirty, err := repo.ChangedTracked(ctx)
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		return fmt.Errorf("uncommitted changes in %s: commit them or stash them (git stash) first, then adopt", strings.Join(clipList(dirty, 5), ", "))
	}
	msg := fmt.Sprintf("Adopt %s from %s (%s)\n\nMerged with git descent adopt; git descent log %s has every decision behind it.\n", lib.Name, name, rev.Short(), lib.Name)
	merged, err := repo.MergeIntoHead(ctx, rev, msg)
	var conflict *git.MergeConflictError
	if errors.As(err, &conflict) {
		return fmt.Errorf("the merge of %s stopped with conflicts in %s: resolve them and git commit, or git merge --abort", name, strings.Join(conflict.Paths, ", "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "merged %s (%s) into HEAD as %s\n", name, rev.Short(), merged.Short())
	return nil
}

// installLibrary writes the library as it is in rev into the skill
// directory to names, moving what was there to a backup first.
func installLibrary(ctx context.Context, e *env, repo *git.Repo, lib *library.Library, rev git.Hash, name, to string) error {
	skill := filepath.Base(lib.Path)
	dest := to
	if to == "claude" || to == "codex" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("finding your home directory for --to %s: %w (give a directory)", to, err)
		}
		dest = filepath.Join(home, "."+to, "skills", skill)
	}
	dest, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	if inside(dest, repo.Top()) {
		return fmt.Errorf("--to %s is inside the repository: adopt without --to merges into your branch", to)
	}
	if fi, err := os.Stat(dest); err == nil {
		_, serr := os.Stat(filepath.Join(dest, library.SkillFile))
		if entries, _ := os.ReadDir(dest); !fi.IsDir() || len(entries) > 0 && serr != nil {
			return fmt.Errorf("--to %s is not a skill's directory (it has no %s), and adopt would move it aside whole: give the skill's own directory, e.g. %s", to, library.SkillFile, filepath.Join(dest, skill))
		}
	}
	tree, err := repo.TreeOf(ctx, rev, lib.Path)
	if err != nil {
		return fmt.Errorf("%s has no %s: %w", rev.Short(), lib.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	// Written beside the destination, then renamed into place: an
	// interrupted install leaves the old version where it was.
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+skill+"-adopt-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := materialize.WriteTree(ctx, repo, tree, tmp, nil); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if same, _ := sameTree(tmp, dest); same {
		fmt.Fprintf(e.stdout, "nothing to do: %s already holds %s (%s)\n", dest, name, rev.Short())
		return nil
	}
	backup := ""
	if _, err := os.Lstat(dest); err == nil {
		dir := filepath.Dir(dest) + "-backup"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		backup = filepath.Join(dir, skill+"-"+time.Now().UTC().Format("20060102T150405.000Z"))
		if err := os.Rename(dest, backup); err != nil {
			return fmt.Errorf("moving the installed version aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		if backup != "" {
			if rerr := os.Rename(backup, dest); rerr != nil {
				return fmt.Errorf("%w; the version that was there is at %s", err, backup)
			}
		}
		return err
	}
	fmt.Fprintf(e.stdout, "installed %s (%s) at %s\n", name, rev.Short(), dest)
	if backup != "" {
		fmt.Fprintf(e.stdout, "the version that was there is at %s\n", backup)
	}
	return nil
}

// inside reports whether path, once its existing part's symlinks are
// resolved, is top or under it.
func inside(path, top string) bool {
	real := func(p string) string {
		p = filepath.Clean(p)
		rest := ""
		for {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(r, rest)
			}
			parent := filepath.Dir(p)
			if parent == p {
				return filepath.Join(p, rest)
			}
			rest, p = filepath.Join(filepath.Base(p), rest), parent
		}
	}
	t, d := real(top), real(path)
	return d == t || strings.HasPrefix(d, t+string(filepath.Separator))
}

// sameTree reports whether directories a and b hold the same files with
// the same contents and executable bits.
func sameTree(a, b string) (bool, error) {
	read := func(root string) (map[string]string, error) {
		files := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[rel] = fmt.Sprintf("%o:%s", info.Mode()&0o111, data)
			return nil
		})
		return files, err
	}
	x, err := read(a)
	if err != nil {
		return false, err
	}
	y, err := read(b)
	if err != nil || len(x) != len(y) {
		return false, err
	}
	for k, v := range x {
		if y[k] != v {
			return false, nil
		}
	}
	return true, nil
}

// clipList keeps the first n items, saying how many more there were.
func clipList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("%d more", len(xs)-n))
}
