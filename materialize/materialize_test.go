package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
		dir := t.TempDir()
		r, err := WriteRollout(ctx, repo, lib, libTree, dir, []string{"evals/files/in.txt"})
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
		edit, err := seat.Capture(ctx)
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
