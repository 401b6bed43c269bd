package git

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkReadLibrary compares the two ways to read every file of a
// library version (a 20-file tree), which each rollout does to lay out its
// workspace: go-git in process, as ReadTree and ReadBlob do, against the
// git binary (`ls-tree -r` then one `cat-file --batch`). DESIGN.md decision
// 1 uses go-git for reads only where it is measurably faster; this is the
// measurement.
//
//	go test -run '^$' -bench ReadLibrary ./internal/git
func BenchmarkReadLibrary(b *testing.B) {
	ctx, r := benchRepo(b)
	var edits []TreeEdit
	for i := 0; i < 20; i++ {
		blob, err := r.HashObject(ctx, bytes.Repeat([]byte(fmt.Sprintf("line %d of a skill file\n", i)), 80))
		if err != nil {
			b.Fatal(err)
		}
		edits = append(edits, TreeEdit{Path: fmt.Sprintf("skills/s/ref/f%02d.md", i), Hash: blob})
	}
	root, err := r.EditTree(ctx, "", edits)
	if err != nil {
		b.Fatal(err)
	}
	tree, err := r.ResolveRef(ctx, string(root)+":skills/s")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go-git", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			entries, err := r.ReadTree(ctx, tree)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				if _, err := r.ReadBlob(ctx, e.Hash); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("git-binary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := r.run(ctx, cmd{}, "ls-tree", "-r", "--object-only", string(tree))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.run(ctx, cmd{stdin: out}, "cat-file", "--batch"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchRepo is a new repository for a benchmark, with no user or system
// configuration.
func benchRepo(b *testing.B) (context.Context, *Repo) {
	b.Helper()
	ctx := context.Background()
	b.Setenv("HOME", b.TempDir())
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	r, err := InitRepo(ctx, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return ctx, r
}
