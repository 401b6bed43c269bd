package materialize

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// Rollout is a library version laid out in a rollout workspace.
type Rollout struct {
	SkillDir string   // absolute directory of the library inside the workspace
	Files    []string // absolute paths of the staged task files
}

// RolloutDir is a rollout workspace kept from one rollout to the next
// (decision 70): Lay makes it hold exactly one rollout's layout, writing
// only the files that differ from what it holds and removing whatever else
// the last agent left, so a rollout costs a directory walk rather than
// creating and deleting every file of the library.
//
// A file Lay wrote is kept only when it is still the very file it wrote:
// the same inode, size, mode, link count, modification and change time
// (the change time cannot be set by anyone but the kernel, and moves with
// any write, chmod, new hard link or extended attribute). One whose change
// time is not older than the file system's clock at the end of the last
// Lay (a marker file's change time) is read and compared as well, since a
// change in the same clock tick keeps the times (git's racy index
// entries). A symlink is always written again. Directories are made 0755
// with fresh times; one with extended attributes (an ACL, say), or a
// workspace whose directory is no longer the one made for it, starts the
// workspace again from nothing.
//
// A RolloutDir is used by one rollout at a time.
type RolloutDir struct {
	Dir     string // the agent's working directory
	Control string // beside it: the task file, the output file; emptied by Lay
	ws      *sandbox.Workspace
	repo    *git.Repo
	lib     *library.Library
	ino     uint64           // ws.Dir's inode when it was made
	tree    git.Hash         // the library version it last held
	wrote   map[string]stamp // what Lay wrote and still holds, by path relative to Dir
	laid    int64            // the file system's clock (a change time, in ns) when the last Lay ended
}

// stamp is one file Lay wrote, with its status right after.
type stamp struct {
	entry        git.TreeEntry
	ino, nlink   uint64
	size         int64
	mode         uint32
	mtime, ctime int64 // nanoseconds
}

// NewRolloutDir makes an empty rollout workspace under root ("" is the
// system temporary directory).
func NewRolloutDir(repo *git.Repo, lib *library.Library, root string) (*RolloutDir, error) {
	ws, err := sandbox.NewWorkspace(root, "descent-rollout-")
	if err != nil {
		return nil, err
	}
	d := &RolloutDir{Dir: filepath.Join(ws.Dir, "ws"), Control: filepath.Join(ws.Dir, "control"), ws: ws, repo: repo, lib: lib}
	if d.ino, err = inode(ws.Dir); err != nil {
		_ = ws.Remove()
		return nil, err
	}
	return d, nil
}

// Tree is the library version the directory last held.
func (d *RolloutDir) Tree() git.Hash { return d.tree }

// Remove deletes the workspace.
func (d *RolloutDir) Remove() error { return d.ws.Remove() }

// Lay makes the workspace hold one rollout: the library version libTree at
// the library's layout (without its hidden files: the eval answers), and
// each task file (a path relative to the library) copied from libTree to
// the workspace root under its base name; and an empty control directory.
func (d *RolloutDir) Lay(ctx context.Context, libTree git.Hash, files []string) (Rollout, error) {
	want, r, err := d.layout(ctx, libTree, files)
	if err != nil {
		return r, err
	}
	d.tree = ""
	var keep map[string]stamp
	ino, err := inode(d.ws.Dir)
	if err == nil && ino != d.ino {
		err = errors.New("the workspace's directory was replaced")
	}
	if err == nil {
		keep, err = d.sweep(want)
	}
	if err == nil {
		err = d.clearBeside()
	}
	if err != nil {
		// Something the agent left cannot be sorted out in place: start
		// again from nothing.
		if err := d.ws.Remove(); err != nil {
			return r, fmt.Errorf("reset rollout workspace: %w", err)
		}
		if err := os.Mkdir(d.ws.Dir, 0o700); err != nil {
			return r, fmt.Errorf("reset rollout workspace: %w", err)
		}
		if d.ino, err = inode(d.ws.Dir); err != nil {
			return r, fmt.Errorf("reset rollout workspace: %w", err)
		}
		keep = nil
	}
	if err := sandbox.RemoveAll(d.Control); err != nil {
		return r, fmt.Errorf("reset rollout workspace: %w", err)
	}
	for _, dir := range []string{d.Dir, d.Control, r.SkillDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return r, fmt.Errorf("lay out rollout: %w", err)
		}
	}
	wrote := map[string]stamp{}
	for rel, e := range want {
		if s, ok := keep[rel]; ok {
			wrote[rel] = s
			continue
		}
		ok, err := writeFile(ctx, d.repo, git.TreeEntry{Path: rel, Mode: e.Mode, Hash: e.Hash}, d.Dir)
		if err != nil {
			return r, fmt.Errorf("lay out rollout: %q: %w", rel, err)
		}
		if !ok || e.Mode == git.ModeSymlink {
			continue
		}
		fi, err := os.Lstat(filepath.Join(d.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return r, fmt.Errorf("lay out rollout: %w", err)
		}
		if s, ok := stampOf(e, fi); ok {
			wrote[rel] = s
		}
	}
	laid, err := fsClock(d.ws.Dir)
	if err != nil {
		return r, fmt.Errorf("lay out rollout: %w", err)
	}
	d.tree, d.wrote, d.laid = libTree, wrote, laid
	return r, nil
}

// inode is the inode of p itself (a link is not followed).
func inode(p string) (uint64, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return 0, fmt.Errorf("%s is not a directory", p)
	}
	return st.Ino, nil
}

// fsClock reads the file system's clock in dir: the change time of a
// marker file made there now, in nanoseconds.
func fsClock(dir string) (int64, error) {
	f, err := os.CreateTemp(dir, ".laid-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no change time")
	}
	return st.Ctim.Nano(), nil
}

// layout lists the files a rollout of libTree holds, by path relative to
// the workspace, and where they are.
func (d *RolloutDir) layout(ctx context.Context, libTree git.Hash, files []string) (map[string]git.TreeEntry, Rollout, error) {
	layoutDir := d.lib.LayoutDir()
	r := Rollout{SkillDir: filepath.Join(d.Dir, filepath.FromSlash(layoutDir))}
	entries, err := d.repo.ReadTree(ctx, libTree)
	if err != nil {
		return nil, r, err
	}
	want := map[string]git.TreeEntry{}
	for _, e := range entries {
		if d.lib.Hidden(e.Path) || e.Mode == git.ModeGitlink {
			continue
		}
		want[path.Join(layoutDir, e.Path)] = e
	}
	for _, f := range files {
		h, err := d.repo.TreeOf(ctx, libTree, f)
		if err != nil {
			return nil, r, fmt.Errorf("stage task file %q: %w", f, err)
		}
		base := path.Base(f)
		for p := range want {
			if p == base || strings.HasPrefix(p, base+"/") {
				return nil, r, fmt.Errorf("stage task file %q: %q already exists in the workspace (two task files share a name, or one clashes with the layout)", f, base)
			}
		}
		want[base] = git.TreeEntry{Path: f, Mode: git.ModeFile, Hash: h}
		r.Files = append(r.Files, filepath.Join(d.Dir, base))
	}
	return want, r, nil
}

// clearBeside removes whatever an agent left beside the workspace and the
// control directory, in the directory that holds both.
func (d *RolloutDir) clearBeside() error {
	entries, err := os.ReadDir(d.ws.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if p := filepath.Join(d.ws.Dir, e.Name()); p != d.Dir && p != d.Control {
			if err := sandbox.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// sweep removes from the workspace everything but the files of want it
// still holds as Lay wrote them, which it returns; directories are made
// 0755 again with fresh times (whatever the last agent set), empty ones
// removed.
func (d *RolloutDir) sweep(want map[string]git.TreeEntry) (map[string]stamp, error) {
	keep := map[string]stamp{}
	var dirs []string
	now := time.Now()
	err := filepath.WalkDir(d.Dir, func(p string, de fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == d.Dir {
			return fs.SkipAll // nothing laid out yet
		}
		if err != nil {
			return err
		}
		if de.IsDir() {
			if info, err := de.Info(); err != nil {
				return err
			} else if info.Mode() != fs.ModeDir|0o755 { // setgid and sticky bits too
				if err := os.Chmod(p, 0o755); err != nil {
					return err
				}
			}
			if n, err := syscall.Listxattr(p, nil); err != nil && !errors.Is(err, syscall.ENOTSUP) {
				return err
			} else if n > 0 {
				return fmt.Errorf("%s has extended attributes", p)
			}
			if err := os.Chtimes(p, now, now); err != nil {
				return err
			}
			if p != d.Dir {
				dirs = append(dirs, p)
			}
			return nil
		}
		rel, err := filepath.Rel(d.Dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.unchanged(rel, p, de, want) {
			keep[rel] = d.wrote[rel]
			return nil
		}
		return os.Remove(p)
	})
	if err != nil {
		return nil, err
	}
	for _, dir := range slices.Backward(dirs) {
		_ = os.Remove(dir) // only empty ones go
	}
	return keep, nil
}

// unchanged says whether the file at p (rel in the workspace) is still the
// one Lay wrote there, and is wanted there again.
func (d *RolloutDir) unchanged(rel, p string, de fs.DirEntry, want map[string]git.TreeEntry) bool {
	s, ok := d.wrote[rel]
	e, wanted := want[rel]
	if !ok || !wanted || e.Mode != s.entry.Mode || e.Hash != s.entry.Hash || !de.Type().IsRegular() {
		return false
	}
	fi, err := de.Info()
	if err != nil {
		return false
	}
	now, ok := stampOf(e, fi)
	if !ok || now != s {
		return false
	}
	if s.ctime < d.laid {
		return true
	}
	data, err := os.ReadFile(p) // racy: changed in the tick it was written?
	return err == nil && d.repo.BlobName(data) == e.Hash
}

// stampOf is a regular file's status as Lay records it.
func stampOf(e git.TreeEntry, fi fs.FileInfo) (stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return stamp{}, false
	}
	return stamp{entry: git.TreeEntry{Mode: e.Mode, Hash: e.Hash}, ino: st.Ino, nlink: uint64(st.Nlink), size: st.Size,
		mode: st.Mode, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
