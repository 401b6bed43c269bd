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
	"sort"
	"strconv"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// Seat is where a proposer edits a library (decision 58): a directory
// outside the repository holding the library's files at their path in the
// repository, Dir/<library path>, and nothing else — no .git, no index, no
// other file of the repository. Reset writes a version into it, touching
// only the files that differ; Capture reads the proposer's edit back as a
// tree, hashing files in process and writing only the changed ones to the
// object store, so neither costs more in a bigger repository.
//
// A Seat is used by one goroutine at a time.
type Seat struct {
	Dir  string
	ws   *sandbox.Workspace
	repo *git.Repo
	lib  *library.Library

	base   git.Hash                 // the commit it was last reset to
	files  map[string]git.TreeEntry // base's library files, by path relative to the library
	absent map[string]bool          // those Reset did not write: submodules, links out of the library
}

// NewSeat makes an empty seat for a library in a new directory under root
// ("" is the system temporary directory), named after name. Reset fills it.
func NewSeat(repo *git.Repo, lib *library.Library, root, name string) (*Seat, error) {
	ws, err := sandbox.NewWorkspace(root, "descent-"+name+"-")
	if err != nil {
		return nil, err
	}
	return &Seat{Dir: ws.Dir, ws: ws, repo: repo, lib: lib}, nil
}

// SkillDir is the library's directory in the seat: where a proposer edits.
func (s *Seat) SkillDir() string { return filepath.Join(s.Dir, filepath.FromSlash(s.lib.Path)) }

// Remove deletes the seat.
func (s *Seat) Remove() error { return s.ws.Remove() }

// Reset makes the seat hold exactly the library of commit: files that
// differ are rewritten, anything else a proposer left is removed.
func (s *Seat) Reset(ctx context.Context, commit git.Hash) error {
	files, err := s.libraryFiles(ctx, commit)
	if err != nil {
		return err
	}
	s.base, s.files, s.absent = commit, files, map[string]bool{}
	keep, err := s.clear()
	if err != nil {
		// Something a proposer left cannot be sorted out in place (say,
		// a directory it made read-only): start again from nothing.
		if err := s.ws.Remove(); err != nil {
			return fmt.Errorf("reset %s: %w", s.Dir, err)
		}
		if err := os.Mkdir(s.Dir, 0o700); err != nil {
			return fmt.Errorf("reset %s: %w", s.Dir, err)
		}
		keep = nil
	}
	if err := os.MkdirAll(s.SkillDir(), 0o755); err != nil {
		return err
	}
	for rel, e := range files {
		if keep[rel] {
			continue
		}
		wrote, err := writeFile(ctx, s.repo, e, s.SkillDir())
		if err != nil {
			return fmt.Errorf("reset %s: %q: %w", s.Dir, rel, err)
		}
		if !wrote {
			s.absent[rel] = true
		}
	}
	return nil
}

// libraryFiles lists the library's files in commit.
func (s *Seat) libraryFiles(ctx context.Context, commit git.Hash) (map[string]git.TreeEntry, error) {
	files := map[string]git.TreeEntry{}
	tree, err := s.repo.TreeOf(ctx, commit, s.lib.Path)
	if errors.Is(err, git.ErrPathNotFound) {
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := s.repo.ReadTree(ctx, tree)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		files[e.Path] = e
	}
	return files, nil
}

// clear removes from the seat everything that is not one of s.files as it
// is in s.base, and returns the files that already are.
func (s *Seat) clear() (map[string]bool, error) {
	disk, err := s.scan()
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, f := range disk.files {
		rel, inside := s.libRel(f.path)
		if inside {
			if e, ok := s.files[rel]; ok && f.mode == e.Mode && f.hash == e.Hash {
				keep[rel] = true
				continue
			}
		}
		if err := os.Remove(filepath.Join(s.Dir, filepath.FromSlash(f.path))); err != nil {
			return nil, err
		}
	}
	for i := len(disk.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(filepath.Join(s.Dir, filepath.FromSlash(disk.dirs[i]))) // only empty ones go
	}
	return keep, nil
}

// diskFile is one non-directory entry in the seat. Regular files inside
// the library and links carry the blob name their content has.
type diskFile struct {
	path   string // relative to the seat, slash-separated
	mode   git.Mode
	hash   git.Hash
	size   int64
	binary bool // binary as git tells (git.Binary)
	odd    bool // neither a regular file nor a link (a fifo, a socket, a device)
}

type scanned struct {
	files []diskFile
	dirs  []string // parents before children
}

// scan lists the seat.
func (s *Seat) scan() (scanned, error) {
	var out scanned
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == s.Dir {
			return nil
		}
		rel, err := filepath.Rel(s.Dir, p)
		if err != nil {
			return err
		}
		f := diskFile{path: filepath.ToSlash(rel)}
		switch t := d.Type(); {
		case t.IsDir():
			out.dirs = append(out.dirs, f.path)
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			f.mode, f.hash = git.ModeSymlink, s.repo.BlobName([]byte(target))
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			f.mode = git.ModeFile
			if info.Mode()&0o100 != 0 {
				f.mode = git.ModeExecutable
			}
			if _, inside := s.libRel(f.path); inside {
				if err := s.content(p, info.Size(), &f); err != nil {
					return err
				}
			}
		default:
			f.odd = true
		}
		out.files = append(out.files, f)
		return nil
	})
	return out, err
}

// content names a regular file's blob and tells whether it is binary. A
// file over the size limit is hashed as it is read, never held in memory.
func (s *Seat) content(p string, size int64, f *diskFile) error {
	f.size = size
	if s.lib.MaxFileSize > 0 && size > s.lib.MaxFileSize {
		var err error
		f.hash, err = s.repo.FileBlob(p)
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	f.size, f.hash = int64(len(data)), s.repo.BlobName(data)
	f.binary = git.Binary(data)
	return nil
}

// libRel is a seat path relative to the library, and whether it is inside.
func (s *Seat) libRel(p string) (string, bool) {
	return strings.CutPrefix(p, s.lib.Path+"/")
}

// ErrNoChange means the proposer left the library as it was.
var ErrNoChange = errors.New("no change to the library")

// InvalidEditError is a proposer edit git-descent refuses to commit.
type InvalidEditError struct {
	Reason string
	Paths  []string
}

func (e *InvalidEditError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, strings.Join(e.Paths, ", "))
}

// Edit is a proposer's change, captured from a seat.
type Edit struct {
	Tree  git.Hash // the whole repository tree with the edit applied
	Paths []string // changed paths, relative to the library root
}

// Capture reads the proposer's edit from the seat, against the commit it
// was last reset to, and records it as a tree. It refuses
// (*InvalidEditError, one rule named), before anything is written to the
// object store: files outside the library, names with control characters
// or a .git directory, symlinks and special files, files over the size
// limit, binary files (unless the library allows them), a changed mode,
// names that differ only in case, edits to frozen (L0) files, and deleting
// the whole library. New files the user's ignore rules ignore are left
// out, as git would. It returns ErrNoChange when nothing inside the library
// changed.
func (s *Seat) Capture(ctx context.Context) (Edit, error) {
	disk, err := s.scan()
	if err != nil {
		return Edit{}, &InvalidEditError{Reason: "the library could not be read back", Paths: []string{err.Error()}}
	}
	ignored, err := s.ignored(ctx, disk)
	if err != nil {
		return Edit{}, err
	}
	var outside, badNames, links, special, big, binary, moded, frozen, paths []string
	var files []git.TreeEntry // the library after the edit
	var write []string        // absolute paths of the files whose blobs are new
	var want []git.Hash
	onDisk := map[string]bool{}
	for _, f := range disk.files {
		rel, inside := s.libRel(f.path)
		switch {
		case !inside:
			outside = append(outside, quote(f.path))
			continue
		case ignored[rel]:
			continue
		case badName(rel):
			badNames = append(badNames, quote(rel))
			continue
		}
		onDisk[rel] = true
		old, had := s.files[rel]
		if had && old.Mode == f.mode && old.Hash == f.hash {
			files = append(files, old)
			continue
		}
		switch {
		case f.odd:
			special = append(special, rel)
			continue
		case f.mode == git.ModeSymlink:
			links = append(links, rel)
			continue
		case s.lib.MaxFileSize > 0 && f.size > s.lib.MaxFileSize:
			big = append(big, rel)
			continue
		case f.binary && !s.lib.Binary:
			binary = append(binary, rel)
		}
		if had && old.Mode != f.mode && old.Mode != git.ModeSymlink {
			moded = append(moded, rel)
		}
		if s.lib.LayerOf(rel) == library.L0 {
			frozen = append(frozen, rel)
		}
		paths = append(paths, rel)
		files = append(files, git.TreeEntry{Path: rel, Mode: f.mode, Hash: f.hash})
		write = append(write, filepath.Join(s.Dir, filepath.FromSlash(f.path)))
		want = append(want, f.hash)
	}
	for rel, e := range s.files {
		switch {
		case onDisk[rel]:
		case s.absent[rel]:
			files = append(files, e) // never written, so not removed
		default:
			if s.lib.LayerOf(rel) == library.L0 {
				frozen = append(frozen, rel)
			}
			paths = append(paths, rel)
		}
	}
	collide := collisions(files, paths)
	for _, l := range [][]string{outside, badNames, links, special, big, binary, moded, collide, frozen} {
		sort.Strings(l)
	}
	switch {
	case len(outside) > 0:
		return Edit{}, &InvalidEditError{Reason: "edits outside the library", Paths: outside}
	case len(badNames) > 0:
		return Edit{}, &InvalidEditError{Reason: "names with control characters or a .git directory are not allowed", Paths: badNames}
	case len(links) > 0:
		return Edit{}, &InvalidEditError{Reason: "symlinks are not allowed", Paths: links}
	case len(special) > 0:
		return Edit{}, &InvalidEditError{Reason: "only regular files are allowed", Paths: special}
	case len(big) > 0:
		return Edit{}, &InvalidEditError{Reason: fmt.Sprintf("files over %d bytes are not allowed (max-file-size)", s.lib.MaxFileSize), Paths: big}
	case len(binary) > 0:
		return Edit{}, &InvalidEditError{Reason: "binary files are not allowed (binary = true allows them)", Paths: binary}
	case len(moded) > 0:
		return Edit{}, &InvalidEditError{Reason: "mode changes are not allowed", Paths: moded}
	case len(collide) > 0:
		return Edit{}, &InvalidEditError{Reason: "names that differ only in case are not allowed", Paths: collide}
	case len(files) == 0 && len(paths) > 0:
		return Edit{}, &InvalidEditError{Reason: "the edit deletes the whole library", Paths: []string{s.lib.Path}}
	case len(frozen) > 0:
		return Edit{}, &InvalidEditError{Reason: "edits to frozen (L0) files", Paths: frozen}
	case len(paths) == 0:
		return Edit{}, ErrNoChange
	}
	blobs, err := s.repo.WriteBlobs(ctx, write)
	if err != nil {
		return Edit{}, err
	}
	for i, h := range blobs {
		if h != want[i] {
			return Edit{}, &InvalidEditError{Reason: "files changed while they were captured", Paths: []string{write[i]}}
		}
	}
	tree, err := s.repo.ReplaceDir(ctx, s.base, s.lib.Path, files)
	if err != nil {
		return Edit{}, err
	}
	baseTree, err := s.repo.TreeOf(ctx, s.base, "")
	if err != nil {
		return Edit{}, err
	}
	if tree == baseTree {
		return Edit{}, ErrNoChange
	}
	sort.Strings(paths)
	return Edit{Tree: tree, Paths: paths}, nil
}

// collisions returns the names (files or directories) among files that
// differ only in case from another, where a changed file is at or below one
// of them: on a case-insensitive file system (macOS, Windows) they would be
// one.
func collisions(files []git.TreeEntry, changed []string) []string {
	byFold := map[string]map[string]bool{} // lower-cased name → the names
	for _, f := range files {
		for p := f.Path; p != "."; p = path.Dir(p) {
			k := strings.ToLower(p)
			if byFold[k] == nil {
				byFold[k] = map[string]bool{}
			}
			byFold[k][p] = true
		}
	}
	var out []string
	for _, names := range byFold {
		if len(names) < 2 {
			continue
		}
		touched := slices.ContainsFunc(changed, func(c string) bool {
			for n := range names {
				if c == n || strings.HasPrefix(c, n+"/") {
					return true
				}
			}
			return false
		})
		if touched {
			for n := range names {
				out = append(out, n)
			}
		}
	}
	return out
}

// ignored returns the new files inside the library (not in base) that the
// user's ignore rules ignore, by path relative to the library.
func (s *Seat) ignored(ctx context.Context, disk scanned) (map[string]bool, error) {
	var fresh []string
	for _, f := range disk.files {
		if rel, inside := s.libRel(f.path); inside && !badName(rel) {
			if _, had := s.files[rel]; !had {
				fresh = append(fresh, s.lib.RepoPath(rel))
			}
		}
	}
	out := map[string]bool{}
	ign, err := s.repo.Ignored(ctx, fresh)
	for _, p := range ign {
		if rel, ok := s.lib.Rel(p); ok {
			out[rel] = true
		}
	}
	return out, err
}

// badName reports a path git-descent refuses to commit: control characters
// in it (a newline would break every line-based git command), or a .git
// directory anywhere in it.
func badName(p string) bool {
	if strings.ContainsFunc(p, isControl) {
		return true
	}
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// isControl reports an ASCII control character.
func isControl(c rune) bool { return c < 0x20 || c == 0x7f }

// quote shows a path as it is, unless it holds control characters.
func quote(p string) string {
	if strings.ContainsFunc(p, isControl) {
		return strconv.Quote(p)
	}
	return p
}

// writeFile writes one tree entry under dst and reports whether it did:
// submodules, and links whose target leaves the tree, are left out.
func writeFile(ctx context.Context, repo *git.Repo, e git.TreeEntry, dst string) (bool, error) {
	if e.Mode == git.ModeGitlink {
		return false, nil
	}
	data, err := repo.ReadBlob(ctx, e.Hash)
	if err != nil {
		return false, err
	}
	p := filepath.Join(dst, filepath.FromSlash(e.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	switch e.Mode {
	case git.ModeSymlink:
		target := string(data)
		resolved := path.Join(path.Dir(e.Path), target)
		if path.IsAbs(target) || resolved == ".." || strings.HasPrefix(resolved, "../") {
			return false, nil
		}
		return true, os.Symlink(target, p)
	case git.ModeExecutable:
		return true, os.WriteFile(p, data, 0o755)
	}
	return true, os.WriteFile(p, data, 0o644)
}
