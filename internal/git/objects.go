package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// A proposer's edit is written without an index (decision 58): the files it
// changed become blobs, the trees above them are computed in process, and
// both are written in process (loose.go, decision 69) or, where git must
// write them, with one `git hash-object --stdin-paths` and one `git mktree
// --batch`; so what an edit costs does not grow with the repository.

// ModeTree is the mode git records for a directory.
const ModeTree Mode = 0o040000

// newHash returns the hash function of the repository's object format.
func (r *Repo) newHash() hash.Hash {
	if r.format == "sha256" {
		return sha256.New()
	}
	return sha1.New()
}

// FileBlob returns the name the file at p would have as a blob, its content
// taken byte for byte. It is computed in process; nothing is written.
func (r *Repo) FileBlob(p string) (Hash, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := r.newHash()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return "", fmt.Errorf("read %q: %w", p, err)
	}
	if n != fi.Size() {
		return "", fmt.Errorf("read %q: it changed while it was read", p)
	}
	return Hash(hex.EncodeToString(h.Sum(nil))), nil
}

// Binary applies git's test for binary content (buffer_is_binary): a NUL
// byte in the first 8000 bytes.
func Binary(data []byte) bool {
	const firstFewBytes = 8000
	return bytes.IndexByte(data[:min(len(data), firstFewBytes)], 0) >= 0
}

// BlobName returns the name data has as a blob, computed in process.
func (r *Repo) BlobName(data []byte) Hash { return r.objectName("blob", data) }

// WriteBlobs stores the files at paths (absolute) as blobs, byte for byte
// (no filters: what a rollout lays out is what was written), in process or
// with one git process, and returns their names in order. git is tried up
// to three times when a concurrent gc removed the object directory it had
// just made.
func (r *Repo) WriteBlobs(ctx context.Context, paths []string) ([]Hash, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if r.ownWrites(ctx) {
		hs := make([]Hash, len(paths))
		for i, p := range paths {
			var err error
			if hs[i], err = r.writeFileBlob(ctx, p); err != nil {
				return nil, err
			}
		}
		return hs, nil
	}
	var in strings.Builder
	for _, p := range paths {
		// --stdin-paths reads lines, and unquotes one that starts with '"'.
		if !filepath.IsAbs(p) || strings.ContainsAny(p, "\n\r") {
			return nil, fmt.Errorf("write blob: %q is not a path git can read from a line", p)
		}
		in.WriteString(p + "\n")
	}
	var out []byte
	var err error
	for try := 1; try <= 3; try++ {
		if out, err = r.run(ctx, cmd{stdin: []byte(in.String())}, "hash-object", "-w", "--no-filters", "--stdin-paths"); !objectRace(err) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("write blobs: %w", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != len(paths) {
		return nil, fmt.Errorf("write blobs: git hash-object named %d objects for %d files", len(fields), len(paths))
	}
	hs := make([]Hash, len(fields))
	for i, f := range fields {
		if hs[i], err = parseHash([]byte(f)); err != nil {
			return nil, err
		}
	}
	return hs, nil
}

// objectRace reports whether err is git failing to create an object's
// temporary file, which a concurrent gc can cause: it removes empty object
// directories, and can remove the one git has just made for the object.
func objectRace(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce) && strings.Contains(ce.Stderr, "unable to create temporary file")
}

// ReplaceDir writes the tree that is base's (a commit's or a tree's) with
// the directory dir (slash-separated, from the root) holding exactly files:
// paths relative to dir, whose blobs are already stored. Directories left
// empty disappear, as in git. It returns the new root tree. Only the trees
// from dir up to the root are read and written (treeWriter.write).
func (r *Repo) ReplaceDir(ctx context.Context, base Hash, dir string, files []TreeEntry) (Hash, error) {
	w := treeWriter{r: r}
	child, err := w.build(files)
	if err != nil {
		return "", err
	}
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		above, err := r.TreeOf(ctx, base, strings.Join(parts[:i], "/"))
		if err != nil && !errors.Is(err, ErrPathNotFound) {
			return "", err
		}
		var entries []dirEntry
		if err == nil {
			if entries, err = r.readDir(above); err != nil {
				return "", err
			}
		}
		entries = setEntry(entries, parts[i], child)
		child = w.add(entries)
	}
	if err := w.write(ctx); err != nil {
		return "", err
	}
	if child == "" {
		return r.emptyTree(), nil
	}
	return child, nil
}

// emptyTree is the name of the tree with nothing in it.
func (r *Repo) emptyTree() Hash {
	if r.format == "sha256" {
		return r.objectName("tree", nil)
	}
	return EmptyTree
}

// objectName computes the name of an object of a kind ("blob", "tree").
func (r *Repo) objectName(kind string, data []byte) Hash {
	h := r.newHash()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return Hash(hex.EncodeToString(h.Sum(nil)))
}

// dirEntry is one entry of one tree (not recursive): a file, a link, a
// submodule or a directory.
type dirEntry struct {
	name string
	mode Mode
	hash Hash
}

// readDir lists the entries of one tree.
func (r *Repo) readDir(tree Hash) ([]dirEntry, error) {
	var out []dirEntry
	err := r.withGoGit(func(gg *gogit.Repository) error {
		out = out[:0]
		t, err := gg.TreeObject(plumbing.NewHash(string(tree)))
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			out = append(out, dirEntry{name: e.Name, mode: Mode(e.Mode), hash: Hash(e.Hash.String())})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", tree.Short(), err)
	}
	return out, nil
}

// setEntry makes name the directory child in entries ("" removes it).
func setEntry(entries []dirEntry, name string, child Hash) []dirEntry {
	out := entries[:0:0]
	for _, e := range entries {
		if e.name != name {
			out = append(out, e)
		}
	}
	if child != "" {
		out = append(out, dirEntry{name: name, mode: ModeTree, hash: child})
	}
	return out
}

// treeWriter computes trees in process and queues them, children first,
// to be written together.
type treeWriter struct {
	r     *Repo
	raw   [][]byte     // the queued trees' contents, in order
	batch bytes.Buffer // the same as `git mktree -z --batch` input
	names []Hash       // the names computed for the queued trees, in order
}

// build queues the trees holding files (paths relative to the tree) and
// returns the top one's name, "" when files is empty.
func (w *treeWriter) build(files []TreeEntry) (Hash, error) {
	var entries []dirEntry
	var order []string
	below := map[string][]TreeEntry{}
	for _, f := range files {
		name, rest, nested := strings.Cut(f.Path, "/")
		if name == "" || name == "." || name == ".." || nested && rest == "" {
			return "", fmt.Errorf("write tree: %q is not a path in a tree", f.Path)
		}
		if !nested {
			mode := f.Mode
			if mode == 0 {
				mode = ModeFile
			}
			entries = append(entries, dirEntry{name: name, mode: mode, hash: f.Hash})
			continue
		}
		if _, ok := below[name]; !ok {
			order = append(order, name)
		}
		below[name] = append(below[name], TreeEntry{Path: rest, Mode: f.Mode, Hash: f.Hash})
	}
	for _, name := range order {
		h, err := w.build(below[name])
		if err != nil {
			return "", err
		}
		entries = append(entries, dirEntry{name: name, mode: ModeTree, hash: h})
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.name] {
			return "", fmt.Errorf("write tree: %q is both a file and a directory", e.name)
		}
		seen[e.name] = true
	}
	return w.add(entries), nil
}

// add queues the tree of entries and returns its name, "" when it is empty
// (git keeps no empty directories).
func (w *treeWriter) add(entries []dirEntry) Hash {
	if len(entries) == 0 {
		return ""
	}
	// git's order: by name, a directory's name followed by "/".
	key := func(e dirEntry) string {
		if e.mode == ModeTree {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	var raw bytes.Buffer
	for _, e := range entries {
		id, _ := hex.DecodeString(string(e.hash))
		fmt.Fprintf(&raw, "%o %s\x00", e.mode, e.name)
		raw.Write(id)
		kind := "blob"
		switch e.mode {
		case ModeTree:
			kind = "tree"
		case ModeGitlink:
			kind = "commit"
		}
		fmt.Fprintf(&w.batch, "%06o %s %s\t%s\x00", e.mode, kind, e.hash, e.name)
	}
	w.batch.WriteByte(0)
	h := w.r.objectName("tree", raw.Bytes())
	w.names = append(w.names, h)
	w.raw = append(w.raw, raw.Bytes())
	return h
}

// write stores the queued trees: in process, or with one `git mktree
// --batch` whose every name is checked against the one computed here.
func (w *treeWriter) write(ctx context.Context) error {
	if len(w.names) == 0 {
		return nil
	}
	if w.r.ownWrites(ctx) {
		for i, raw := range w.raw {
			h, err := w.r.writeBytes(ctx, "tree", raw)
			if err != nil {
				return err
			}
			if h != w.names[i] {
				return fmt.Errorf("write trees: wrote %s, computed %s", h, w.names[i])
			}
		}
		return nil
	}
	out, err := w.r.run(ctx, cmd{stdin: w.batch.Bytes()}, "mktree", "-z", "--batch")
	if err != nil {
		return fmt.Errorf("write trees: %w", err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(w.names) {
		return fmt.Errorf("write trees: git mktree wrote %d trees, not %d", len(got), len(w.names))
	}
	for i, h := range got {
		if Hash(h) != w.names[i] {
			return fmt.Errorf("write trees: git mktree named a tree %s, computed %s", h, w.names[i])
		}
	}
	return nil
}

// Ignored returns those of paths (relative to the top of the working tree)
// that the user's ignore rules ignore: the .gitignore files of the working
// tree, info/exclude and core.excludesFile, whatever the index holds.
func (r *Repo) Ignored(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 || r.top == "" {
		return nil, nil
	}
	in := strings.Join(paths, "\x00") + "\x00"
	out, err := r.run(ctx, cmd{stdin: []byte(in), okCodes: []int{1}}, "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("check ignored files: %w", err)
	}
	var ignored []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored = append(ignored, p)
		}
	}
	return ignored, nil
}
