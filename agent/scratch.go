package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A CLI proposer edits a copy of the library outside the repository: Claude
// Code refuses edits under any .git directory ("sensitive file"), Codex's
// sandbox keeps .git read-only, and worker worktrees live in .git/descent.
// The copy's changes are carried back into the worktree afterwards, where
// they are validated and captured like any proposer's.

// mirror makes the tree under dst (created when missing) what it is under
// src: files changed or added are written, files removed are removed,
// modes and symbolic links follow. Only what differs is touched. It makes
// the proposer's copy of the library and carries its edits back.
func mirror(src, dst string) error {
	seen := map[string]bool{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		seen[rel] = true
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		old, oldErr := os.Lstat(to)
		switch {
		case d.IsDir():
			if oldErr == nil && !old.IsDir() {
				if err := os.Remove(to); err != nil {
					return err
				}
			}
			return os.MkdirAll(to, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if oldErr == nil {
				if t, err := os.Readlink(to); err == nil && t == target {
					return nil
				}
				if err := os.RemoveAll(to); err != nil {
					return err
				}
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if oldErr == nil && old.Mode().IsRegular() && old.Mode().Perm() == info.Mode().Perm() {
				if cur, err := os.ReadFile(to); err == nil && bytes.Equal(cur, data) {
					return nil
				}
			}
			if oldErr == nil {
				if err := os.RemoveAll(to); err != nil {
					return err
				}
			}
			return os.WriteFile(to, data, info.Mode().Perm())
		}
		return fmt.Errorf("%s is neither a file, a directory nor a link", p)
	})
	if err != nil {
		return err
	}
	// What the proposer removed goes too; deepest first.
	var gone []string
	err = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		if !seen[rel] {
			gone = append(gone, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, p := range gone {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}
