package materialize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

func TestCaptureValidatesEdits(t *testing.T) {
	ctx := context.Background()
	repo, head := newRepo(t, skillFiles)
	lib := library.New("skills/s")
	wt, err := repo.AddWorktree(ctx, filepath.Join(repo.DescentDir(), "worktrees", "s", "w1"), head, []string{lib.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.RemoveWorktree(ctx, wt.Dir)
	if _, err := os.Stat(filepath.Join(wt.Dir, "README.md")); !os.IsNotExist(err) {
		t.Fatal("sparse worktree has files outside the library")
	}
	skill := filepath.Join(wt.Dir, "skills", "s")
	for _, c := range []struct {
		name   string
		edit   func()
		reason string // "" means valid
		noop   bool
	}{
		{"no change", func() {}, "", true},
		{"outside", func() { write(t, filepath.Join(wt.Dir, "x.txt"), "x") }, "edits outside the library", false},
		{"frozen", func() { write(t, filepath.Join(skill, "evals", "evals.json"), "{}") }, "edits to frozen (L0) files", false},
		{"symlink", func() { must(t, os.Symlink("/etc/passwd", filepath.Join(skill, "p"))) }, "symlinks are not allowed", false},
		{"committed by the proposer", func() {
			write(t, filepath.Join(skill, "SKILL.md"), "# S\nmore\n")
			write(t, filepath.Join(skill, "new.md"), "n\n")
			// The proposer commits in its worktree, as an agent with git would.
			proposer, err := git.Open(ctx, wt.Dir, nil)
			must(t, err)
			_, err = proposer.CommitAll(ctx, "proposer commit", git.Signature{Name: "P", Email: "p@example.com"})
			must(t, err)
		}, "", false},
		{"valid", func() {
			write(t, filepath.Join(skill, "SKILL.md"), "# S\nmore\n")
			write(t, filepath.Join(skill, "new.md"), "n\n")
		}, "", false},
	} {
		if err := wt.Reset(ctx, head); err != nil {
			t.Fatal(err)
		}
		c.edit()
		edit, err := Capture(ctx, wt, lib, head)
		var invalid *InvalidEditError
		switch {
		case c.noop:
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
			if strings.Join(edit.Paths, ",") != "SKILL.md,new.md" {
				t.Errorf("%s: paths = %v", c.name, edit.Paths)
			}
			data, err := repo.ReadFile(ctx, edit.Tree, "skills/s/new.md")
			if err != nil || string(data) != "n\n" {
				t.Errorf("%s: new.md in tree = %q, %v", c.name, data, err)
			}
			if _, err := repo.ReadFile(ctx, edit.Tree, "README.md"); err != nil {
				t.Errorf("%s: the tree lost files outside the sparse checkout: %v", c.name, err)
			}
		}
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
