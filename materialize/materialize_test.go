package materialize

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/library"
)

// newRepo makes a repository whose first commit holds files.
func newRepo(t *testing.T, files map[string]string) (*git.Repo, git.Hash) {
	t.Helper()
	ctx, repo := gittest.NewRepo(t)
	for p, content := range files {
		full := filepath.Join(repo.Top(), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	head, err := repo.CommitAll(ctx, "init", git.Signature{Name: "T", Email: "t@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return repo, head
}

var skillFiles = map[string]string{
	"README.md":                   "top\n",
	"skills/s/SKILL.md":           "# S\n",
	"skills/s/scripts/run.sh":     "#!/bin/sh\necho hi\n",
	"skills/s/evals/evals.json":   `{"evals": [{"id": 1, "prompt": "p", "expected_output": "secret answer", "files": ["evals/files/in.txt"]}]}`,
	"skills/s/evals/files/in.txt": "input data\n",
}

func TestWriteRolloutHidesAnswersAndStagesFiles(t *testing.T) {
	ctx := context.Background()
	repo, head := newRepo(t, skillFiles)
	lib := library.New("skills/s")
	libTree, err := repo.TreeOf(ctx, head, lib.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []struct{ name, dir string }{{"repo", "skills/s"}, {"claude", ".claude/skills/s"}, {"root", ""}} {
		lib.Layout = layout.name
		d, err := NewRolloutDir(repo, lib, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dir := d.Dir
		r, err := d.Lay(ctx, libTree, []string{"evals/files/in.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, layout.dir); r.SkillDir != want {
			t.Errorf("%s: skill dir %q, want %q", layout.name, r.SkillDir, want)
		}
		if data, err := os.ReadFile(filepath.Join(r.SkillDir, "SKILL.md")); err != nil || string(data) != "# S\n" {
			t.Errorf("%s: SKILL.md = %q, %v", layout.name, data, err)
		}
		if fi, err := os.Stat(filepath.Join(r.SkillDir, "scripts", "run.sh")); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: run.sh lost its executable bit: %v", layout.name, err)
		}
		if _, err := os.Stat(filepath.Join(r.SkillDir, "evals")); !os.IsNotExist(err) {
			t.Errorf("%s: evals/ is visible to the agent (err %v)", layout.name, err)
		}
		if len(r.Files) != 1 || r.Files[0] != filepath.Join(dir, "in.txt") {
			t.Fatalf("%s: files = %v", layout.name, r.Files)
		}
		if data, _ := os.ReadFile(r.Files[0]); string(data) != "input data\n" {
			t.Errorf("%s: staged file = %q", layout.name, data)
		}
	}
}

// A kept rollout workspace laid out again holds exactly the new layout,
// whatever the last agent did to it, and writes only what differs.
func TestRolloutDirLaysOutAgainWhateverTheAgentDid(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"skills/s/SKILL.md": "# S\n", "skills/s/refs/a.md": "a\n", "skills/s/refs/b.md": "b\n",
		"skills/s/run.sh": "#!/bin/sh\n", "skills/s/evals/evals.json": `{"evals": []}`, "skills/s/evals/files/in.txt": "in\n"}
	repo, v1 := newRepo(t, files)
	lib := library.New("skills/s")
	tree1, err := repo.TreeOf(ctx, v1, lib.Path)
	if err != nil {
		t.Fatal(err)
	}
	// v2 changes SKILL.md and drops refs/b.md.
	v2 := gittest.Commit(t, repo, v1, map[string]string{"skills/s/SKILL.md": "# S, better\n", "skills/s/refs/b.md": ""}, "v2\n")
	tree2, err := repo.TreeOf(ctx, v2, lib.Path)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, outside, "untouched\n")
	fresh := func(tree git.Hash) map[string]string {
		d, err := NewRolloutDir(repo, lib, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Remove()
		if _, err := d.Lay(ctx, tree, []string{"evals/files/in.txt"}); err != nil {
			t.Fatal(err)
		}
		return listDir(t, filepath.Dir(d.Dir))
	}
	want1, want2 := fresh(tree1), fresh(tree2)
	d, err := NewRolloutDir(repo, lib, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	skill := filepath.Join(d.Dir, "skills", "s")
	for _, c := range []struct {
		name  string
		agent func()
	}{
		{"nothing", func() {}},
		{"same-size rewrite at once", func() { write(t, filepath.Join(skill, "SKILL.md"), "# X\n") }},
		{"same-size rewrite in the clock tick of the write", func() {
			// The file system may stamp both with the same times: what
			// Lay recorded is then what it finds.
			p := filepath.Join(skill, "SKILL.md")
			write(t, p, "# X\n")
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			s := d.wrote["skills/s/SKILL.md"]
			if d.wrote["skills/s/SKILL.md"], _ = stampOf(s.entry, fi); s.entry.Hash == "" {
				t.Fatal("SKILL.md was not recorded")
			}
		}},
		{"new files, output beside", func() {
			write(t, filepath.Join(d.Dir, "out.txt"), "o")
			write(t, filepath.Join(skill, "refs", "c.md"), "c")
			write(t, filepath.Join(d.Control, "output"), "o")
			write(t, filepath.Join(d.Control, "locked", "deep", "x"), "x")
			must(t, os.Chmod(filepath.Join(d.Control, "locked", "deep"), 0))
			must(t, os.Chmod(filepath.Join(d.Control, "locked"), 0o500))
			write(t, filepath.Join(filepath.Dir(d.Dir), "note-for-later"), "n")
		}},
		{"removed and re-moded", func() {
			must(t, os.Remove(filepath.Join(skill, "refs", "a.md")))
			must(t, os.Chmod(filepath.Join(skill, "run.sh"), 0o644))
		}},
		{"a symlink out instead of a file", func() {
			must(t, os.Remove(filepath.Join(skill, "SKILL.md")))
			must(t, os.Symlink(outside, filepath.Join(skill, "SKILL.md")))
		}},
		{"a hard link kept beside", func() { must(t, os.Link(filepath.Join(skill, "refs", "a.md"), filepath.Join(d.Dir, "keep"))) }},
		{"a directory made private", func() { must(t, os.Chmod(filepath.Join(skill, "refs"), 0o700)) }},
		{"a read-only directory", func() {
			write(t, filepath.Join(skill, "refs", "locked", "x"), "x")
			must(t, os.Chmod(filepath.Join(skill, "refs", "locked"), 0o500))
			must(t, os.Chmod(filepath.Join(skill, "refs"), 0o500))
		}},
		{"directory times set back", func() {
			old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			must(t, os.Chtimes(filepath.Join(skill, "refs"), old, old))
		}},
		{"a setgid directory", func() { must(t, os.Chmod(filepath.Join(skill, "refs"), 0o2755|os.ModeSetgid)) }},
		{"a directory with an extended attribute", func() {
			err := syscall.Setxattr(filepath.Join(skill, "refs"), "user.note", []byte("for later"), 0)
			if err != nil && !errors.Is(err, syscall.ENOTSUP) {
				t.Fatal(err)
			}
		}},
		{"the workspace's own directory replaced by a link", func() {
			top := filepath.Dir(d.Dir)
			moved, err := os.MkdirTemp(filepath.Dir(top), "moved-")
			if err != nil {
				t.Fatal(err)
			}
			must(t, os.Rename(top, filepath.Join(moved, "ws")))
			must(t, os.Symlink(filepath.Dir(outside), top))
		}},
		{"the whole workspace replaced by a link", func() {
			must(t, os.RemoveAll(d.Dir))
			must(t, os.Symlink(filepath.Dir(outside), d.Dir))
		}},
	} {
		for _, v := range []struct {
			tree git.Hash
			want map[string]string
		}{{tree1, want1}, {tree2, want2}, {tree1, want1}} {
			if _, err := d.Lay(ctx, v.tree, []string{"evals/files/in.txt"}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := listDir(t, filepath.Dir(d.Dir)); !maps.Equal(got, v.want) {
				t.Fatalf("%s: laid out again:\n%v\nwant\n%v", c.name, got, v.want)
			}
			c.agent()
		}
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "untouched\n" {
		t.Fatalf("a file outside the workspace: %q, %v", data, err)
	}
	// What did not change is not written again.
	if _, err := d.Lay(ctx, tree1, nil); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(skill, "refs", "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lay(ctx, tree2, nil); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(filepath.Join(skill, "refs", "a.md")); err != nil || !os.SameFile(before, after) {
		t.Errorf("an unchanged file was written again (%v)", err)
	}
}

// listDir lists every entry below dir: files with their mode and content,
// links with their target, directories with their mode.
func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case de.IsDir():
			out[rel] = info.Mode().String()
			if n, _ := syscall.Listxattr(p, nil); n > 0 {
				out[rel] += " with extended attributes"
			}
			if info.ModTime().Year() < 2020 {
				out[rel] += " with times set back"
			}
		default:
			data, _ := os.ReadFile(p)
			out[rel] = info.Mode().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSeatCapturesAndRefusesEdits(t *testing.T) {
	ctx := context.Background()
	repo, head := newRepo(t, skillFiles)
	write(t, filepath.Join(repo.Top(), ".git", "info", "exclude"), "*.pyc\n")
	lib := library.New("skills/s")
	seat, err := NewSeat(repo, lib, t.TempDir(), "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer seat.Remove()
	skill := seat.SkillDir()
	if skill != filepath.Join(seat.Dir, "skills", "s") {
		t.Fatalf("skill dir %s", skill)
	}
	for _, c := range []struct {
		name   string
		edit   func()
		reason string // "" means valid
		paths  string // the edit's paths, when valid
	}{
		{"no change", func() {}, "", ""},
		{"outside", func() { write(t, filepath.Join(seat.Dir, "x.txt"), "x") }, "edits outside the library", ""},
		{"outside, above the library", func() { write(t, filepath.Join(seat.Dir, "skills", "t.md"), "x") }, "edits outside the library", ""},
		{"frozen", func() { write(t, filepath.Join(skill, "evals", "evals.json"), "{}") }, "edits to frozen (L0) files", ""},
		{"frozen, deleted", func() { must(t, os.Remove(filepath.Join(skill, "evals", "files", "in.txt"))) }, "edits to frozen (L0) files", ""},
		{"symlink", func() { must(t, os.Symlink("/etc/passwd", filepath.Join(skill, "p"))) }, "symlinks are not allowed", ""},
		{"newline in a name", func() { write(t, filepath.Join(skill, "a\nb.md"), "x") }, "names with control characters or a .git directory are not allowed", ""},
		{"a .git directory", func() { write(t, filepath.Join(skill, "sub", ".Git", "config"), "x") }, "names with control characters or a .git directory are not allowed", ""},
		{"a fifo", func() { must(t, syscall.Mkfifo(filepath.Join(skill, "pipe"), 0o644)) }, "only regular files are allowed", ""},
		{"ignored files are left out", func() { write(t, filepath.Join(skill, "cache.pyc"), "x") }, "", ""},
		{"deleted", func() { must(t, os.Remove(filepath.Join(skill, "SKILL.md"))) }, "", "SKILL.md"},
		{"re-moded", func() { must(t, os.Chmod(filepath.Join(skill, "scripts", "run.sh"), 0o644)) }, "mode changes are not allowed", ""},
		{"too big", func() { write(t, filepath.Join(skill, "big.md"), strings.Repeat("x", 1<<20+1)) }, "files over 1048576 bytes are not allowed (max-file-size)", ""},
		{"binary", func() { write(t, filepath.Join(skill, "blob.md"), "a\x00b") }, "binary files are not allowed (binary = true allows them)", ""},
		{"names that differ in case", func() { write(t, filepath.Join(skill, "skill.md"), "x") }, "names that differ only in case are not allowed", ""},
		{"directories that differ in case", func() { write(t, filepath.Join(skill, "Scripts", "b.sh"), "x") }, "names that differ only in case are not allowed", ""},
		{"new names that differ in case", func() {
			write(t, filepath.Join(skill, "Rules.md"), "a\n")
			write(t, filepath.Join(skill, "rules.md"), "b\n")
		}, "names that differ only in case are not allowed", ""},
		{"valid", func() {
			write(t, filepath.Join(skill, "SKILL.md"), "# S\nmore\n")
			write(t, filepath.Join(skill, "new dir", "new.md"), "n\n")
			write(t, filepath.Join(skill, "cache.pyc"), "x")
		}, "", "SKILL.md,new dir/new.md"},
	} {
		if err := seat.Reset(ctx, head); err != nil {
			t.Fatal(err)
		}
		c.edit()
		before := looseObjects(t, repo)
		edit, err := seat.Capture(ctx)
		if c.reason != "" {
			if added := looseObjects(t, repo) - before; added != 0 {
				t.Errorf("%s: refused, but %d objects were stored first", c.name, added)
			}
		}
		var invalid *InvalidEditError
		switch {
		case c.reason == "" && c.paths == "":
			if !errors.Is(err, ErrNoChange) {
				t.Errorf("%s: err = %v, want ErrNoChange", c.name, err)
			}
		case c.reason != "":
			if !errors.As(err, &invalid) || invalid.Reason != c.reason {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.reason)
			}
		default:
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if strings.Join(edit.Paths, ",") != c.paths {
				t.Errorf("%s: paths = %v, want %s", c.name, edit.Paths, c.paths)
			}
			if _, err := repo.ReadFile(ctx, edit.Tree, "README.md"); err != nil {
				t.Errorf("%s: the tree lost files outside the library: %v", c.name, err)
			}
			if _, err := repo.ReadFile(ctx, edit.Tree, "skills/s/cache.pyc"); err == nil {
				t.Errorf("%s: an ignored file was captured", c.name)
			}
		}
	}
	edit, err := seat.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := repo.ReadFile(ctx, edit.Tree, "skills/s/new dir/new.md"); err != nil || string(data) != "n\n" {
		t.Errorf("new.md in tree = %q, %v", data, err)
	}
	// The tree is the one git's index makes of the same files.
	want, err := repo.EditTree(ctx, head, []git.TreeEdit{
		{Path: "skills/s/SKILL.md", Hash: repo.BlobName([]byte("# S\nmore\n"))},
		{Path: "skills/s/new dir/new.md", Hash: repo.BlobName([]byte("n\n"))},
	})
	if err != nil || edit.Tree != want {
		t.Errorf("captured tree %s, git's index makes %s (%v)", edit.Tree, want, err)
	}

	// Reset rewrites what differs and nothing else, and gets past what a
	// proposer made hard to remove.
	untouched := filepath.Join(skill, "scripts", "run.sh")
	before, err := os.Stat(untouched)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Chmod(filepath.Join(skill, "new dir"), 0o555))
	if err := seat.Reset(ctx, head); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(untouched); err != nil || !os.SameFile(before, after) || after.ModTime() != before.ModTime() {
		t.Errorf("Reset rewrote a file that had not changed")
	}
	if _, err := os.Stat(filepath.Join(skill, "new dir")); !os.IsNotExist(err) {
		t.Errorf("Reset left the proposer's directory: %v", err)
	}
	if _, err := seat.Capture(ctx); !errors.Is(err, ErrNoChange) {
		t.Errorf("after Reset: %v, want ErrNoChange", err)
	}
	// Deleting the whole library is refused (here with nothing frozen), and
	// a library may allow binary files.
	open := library.New("skills/s")
	open.Frozen, open.Binary = nil, true
	free, err := NewSeat(repo, open, t.TempDir(), "w2")
	if err != nil {
		t.Fatal(err)
	}
	defer free.Remove()
	must(t, free.Reset(ctx, head))
	write(t, filepath.Join(free.SkillDir(), "blob.md"), "a\x00b")
	if edit, err := free.Capture(ctx); err != nil || strings.Join(edit.Paths, ",") != "blob.md" {
		t.Errorf("binary allowed: %v, %v", edit.Paths, err)
	}
	must(t, free.Reset(ctx, head))
	must(t, os.RemoveAll(free.SkillDir()))
	var invalid *InvalidEditError
	if _, err := free.Capture(ctx); !errors.As(err, &invalid) || invalid.Reason != "the edit deletes the whole library" {
		t.Errorf("library deleted: %v", err)
	}

	// The user's working tree and index are untouched by all of this.
	dirty, err := repo.DirtyPaths(ctx, ".")
	if err != nil || len(dirty) != 0 {
		t.Fatalf("user tree dirty: %v %v", dirty, err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// looseObjects counts the objects stored loose in repo.
func looseObjects(t *testing.T, repo *git.Repo) int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(repo.GitDir(), "objects", "??", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(filepath.Base(name), "tmp_") {
			n++
		}
	}
	return n
}

// A 200 MB file a proposer leaves in the seat is refused without being held
// in memory or stored: it is hashed as it is read.
func TestSeatRefusesABigFileWithoutHoldingIt(t *testing.T) {
	ctx := context.Background()
	repo, head := newRepo(t, skillFiles)
	seat, err := NewSeat(repo, library.New("skills/s"), t.TempDir(), "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer seat.Remove()
	if err := seat.Reset(ctx, head); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(seat.SkillDir(), "big.md")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 200<<20); err != nil {
		t.Fatal(err)
	}
	objects := looseObjects(t, repo)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = seat.Capture(ctx)
	runtime.ReadMemStats(&after)
	var invalid *InvalidEditError
	if !errors.As(err, &invalid) || !strings.HasPrefix(invalid.Reason, "files over") {
		t.Fatalf("err = %v, want the size rule", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("capturing a 200 MB file allocated %d MB", n>>20)
	}
	if added := looseObjects(t, repo) - objects; added != 0 {
		t.Errorf("%d objects stored for a refused edit", added)
	}
}
