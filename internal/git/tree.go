package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Mode is a git file mode.
type Mode uint32

// File modes git records in trees.
const (
	ModeFile       Mode = 0o100644
	ModeExecutable Mode = 0o100755
	ModeSymlink    Mode = 0o120000
	ModeGitlink    Mode = 0o160000
)

// TreeEntry is one file (blob, symlink or gitlink) of a tree, with its path
// relative to the tree's root.
type TreeEntry struct {
	Path string
	Mode Mode
	Hash Hash
}

// goGit opens the repository with go-git on first use. Callers hold r.mu.
func (r *Repo) goGit() (*gogit.Repository, error) {
	if r.gg != nil {
		return r.gg, nil
	}
	dir, opts := r.top, &gogit.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}
	if dir == "" {
		// A bare repository: go-git's search for a .git directory does
		// not find one.
		dir, opts.DetectDotGit = r.gitDir, false
	}
	gg, err := gogit.PlainOpenWithOptions(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open repository %q: %w", dir, err)
	}
	r.gg = gg
	return gg, nil
}

// withGoGit runs f with the go-git repository under the lock. Objects
// written by the git binary into a pack after go-git indexed the packs are
// found by reopening once.
func (r *Repo) withGoGit(f func(*gogit.Repository) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	gg, err := r.goGit()
	if err != nil {
		return err
	}
	err = f(gg)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		r.gg = nil
		if gg, err = r.goGit(); err != nil {
			return err
		}
		err = f(gg)
	}
	return err
}

// EmptyTree is the name of the tree with nothing in it, which git knows
// without storing it.
const EmptyTree Hash = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// ReadTree lists every file below a tree, recursively, in git's order. The
// slice is the caller's.
func (r *Repo) ReadTree(ctx context.Context, tree Hash) ([]TreeEntry, error) {
	if tree == EmptyTree {
		return nil, nil
	}
	if entries, ok := r.cache.tree(tree); ok {
		return append([]TreeEntry(nil), entries...), nil
	}
	var entries []TreeEntry
	err := r.withGoGit(func(gg *gogit.Repository) error {
		entries = entries[:0]
		t, err := gg.TreeObject(plumbing.NewHash(string(tree)))
		if err != nil {
			return err
		}
		w := object.NewTreeWalker(t, true, nil)
		defer w.Close()
		for {
			name, e, err := w.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if e.Mode == filemode.Dir {
				continue
			}
			entries = append(entries, TreeEntry{Path: name, Mode: Mode(e.Mode), Hash: Hash(e.Hash.String())})
		}
	})
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		entries, err = r.lsTree(ctx, tree)
	}
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", tree.Short(), err)
	}
	r.cache.putTree(tree, append([]TreeEntry(nil), entries...))
	return entries, nil
}

// ReadBlob returns the content of a blob, which the caller must not modify
// (it may be shared with other callers).
func (r *Repo) ReadBlob(ctx context.Context, blob Hash) ([]byte, error) {
	if data, ok := r.cache.blob(blob); ok {
		return data, nil
	}
	var data []byte
	err := r.withGoGit(func(gg *gogit.Repository) error {
		b, err := gg.BlobObject(plumbing.NewHash(string(blob)))
		if err != nil {
			return err
		}
		rd, err := b.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err = io.ReadAll(rd)
		return err
	})
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		data, err = r.run(ctx, cmd{}, "cat-file", "blob", string(blob))
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", blob.Short(), err)
	}
	data = data[:len(data):len(data)] // an append copies
	r.cache.putBlob(blob, data)
	return data, nil
}

// ReadFile returns the content of path in a commit or tree; ErrPathNotFound
// when it has no such file.
func (r *Repo) ReadFile(ctx context.Context, treeish Hash, path string) ([]byte, error) {
	h, err := r.TreeOf(ctx, treeish, path)
	if err != nil {
		return nil, err
	}
	return r.ReadBlob(ctx, h)
}

// CommitMessage returns the full message of a commit.
func (r *Repo) CommitMessage(ctx context.Context, commit Hash) (string, error) {
	var msg string
	err := r.withGoGit(func(gg *gogit.Repository) error {
		c, err := gg.CommitObject(plumbing.NewHash(string(commit)))
		if err != nil {
			return err
		}
		msg = c.Message
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read commit %s: %w", commit.Short(), err)
	}
	return msg, nil
}

// CommitTime returns a commit's committer date.
func (r *Repo) CommitTime(ctx context.Context, commit Hash) (time.Time, error) {
	var t time.Time
	err := r.withGoGit(func(gg *gogit.Repository) error {
		c, err := gg.CommitObject(plumbing.NewHash(string(commit)))
		if err != nil {
			return err
		}
		t = c.Committer.When
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read commit %s: %w", commit.Short(), err)
	}
	return t, nil
}

// TreeEdit sets or removes one path in a tree. A zero Hash removes it.
type TreeEdit struct {
	Path string
	Mode Mode // defaults to ModeFile
	Hash Hash
}

// EditTree applies edits, in order, to base (a commit or a tree; zero
// means an empty tree) and writes the result, returning its name.
// Removing a path that is not there does nothing. Only the trees on the
// edited paths are read and written (treeWriter), so no index or working
// tree is touched and the cost does not grow with the tree.
func (r *Repo) EditTree(ctx context.Context, base Hash, edits []TreeEdit) (Hash, error) {
	var root Hash
	if !base.IsZero() {
		var err error
		if root, err = r.TreeOf(ctx, base, ""); err != nil {
			return "", err
		}
	}
	w := treeWriter{r: r}
	h, err := w.edit(root, edits)
	if err != nil {
		return "", err
	}
	if err := w.write(ctx); err != nil {
		return "", err
	}
	if h == "" {
		return r.emptyTree(), nil
	}
	return h, nil
}

// edit queues tree (a tree's name, "" for none) with edits applied, their
// paths relative to it, and returns its name, "" when it ends up empty. A
// path that edits make both a file and a directory is an error.
func (w *treeWriter) edit(tree Hash, edits []TreeEdit) (Hash, error) {
	var entries []dirEntry
	if tree != "" && tree != w.r.emptyTree() {
		var err error
		if entries, err = w.r.readDir(tree); err != nil {
			return "", err
		}
	}
	var order []string
	below := map[string][]TreeEdit{}
	for _, e := range edits {
		name, rest, nested := strings.Cut(e.Path, "/")
		if name == "" || name == "." || name == ".." || strings.EqualFold(name, ".git") || nested && rest == "" {
			return "", fmt.Errorf("edit tree: %q is not a path in a tree", e.Path)
		}
		if nested {
			if _, ok := below[name]; !ok {
				order = append(order, name)
			}
			below[name] = append(below[name], TreeEdit{Path: rest, Mode: e.Mode, Hash: e.Hash})
			continue
		}
		if e.Hash.IsZero() {
			// As the index: removing a file's path removes it; a
			// directory's path names no entry, so nothing goes.
			entries = slices.DeleteFunc(entries, func(d dirEntry) bool { return d.name == name && d.mode != ModeTree })
			continue
		}
		mode := e.Mode
		if mode == 0 {
			mode = ModeFile
		}
		entries = append(slices.DeleteFunc(entries, func(d dirEntry) bool { return d.name == name }), dirEntry{name: name, mode: mode, hash: e.Hash})
	}
	for _, name := range order {
		var sub Hash
		if i := slices.IndexFunc(entries, func(d dirEntry) bool { return d.name == name }); i >= 0 {
			if entries[i].mode != ModeTree {
				if slices.ContainsFunc(below[name], func(e TreeEdit) bool { return !e.Hash.IsZero() }) {
					return "", fmt.Errorf("edit tree: %q is a file, not a directory", name)
				}
				continue // removing paths below a file: nothing there
			}
			sub = entries[i].hash
		}
		child, err := w.edit(sub, below[name])
		if err != nil {
			return "", err
		}
		entries = setEntry(entries, name, child)
	}
	return w.add(entries), nil
}

// tmpDir is a scratch directory inside the repository's descent directory,
// created on demand; temporary files there never touch the user's tree.
func (r *Repo) tmpDir() string {
	d := filepath.Join(r.DescentDir(), "tmp")
	_ = os.MkdirAll(d, 0o755)
	return d
}

// lsTree lists a tree as ReadTree does, by git: for objects go-git does not
// see, such as those of a push still in git's quarantine
// (GIT_OBJECT_DIRECTORY) in a pack.
func (r *Repo) lsTree(ctx context.Context, tree Hash) ([]TreeEntry, error) {
	out, err := r.run(ctx, cmd{}, "ls-tree", "-r", "-z", "--full-tree", string(tree))
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		mode, err := strconv.ParseUint(f[0], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: mode %q", f[0])
		}
		entries = append(entries, TreeEntry{Path: name, Mode: Mode(mode), Hash: Hash(f[2])})
	}
	return entries, nil
}
