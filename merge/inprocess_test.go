package merge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// TestMergeInProcessIsGits merges random pairs of edits, as proposals and
// candidates are merged, both in process (a TreeRequest's text merge) and
// by git running the driver, in two Repos of one repository, and wants the
// same tree and conflicts every time; most must take the in-process path.
func TestMergeInProcessIsGits(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	other, err := git.Open(ctx, repo.Top(), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	driver := fmt.Sprintf("%s=1 '%s' -test.run='^TestDriverProcess$' -- %%O %%A %%B %%L %%P", driverEnv, exe)
	if err := repo.ConfigSet(ctx, "", "merge.descent.driver", driver); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo.GitDir(), "info", "attributes"), []byte("lib/** merge=descent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inProc := 0
	req := func(ours, theirs git.Hash) git.MergeTreeRequest {
		return git.MergeTreeRequest{Ours: ours, Theirs: theirs, Driver: "descent", DriverCommand: driver,
			Text: func(ctx context.Context, path string, base, o, th []byte) ([]byte, bool, error) {
				m, clean, err := inProcess(ctx, path, base, o, th)
				if clean {
					inProc++
				}
				return m, clean, err
			}}
	}
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s line %d\n", prefix, i)
		}
		return b.String()
	}
	start := map[string]string{
		"lib/SKILL.md": lines("skill", 12), "lib/ref/a.md": lines("a", 6), "lib/ref/b.md": lines("b", 6),
		"top.txt": lines("top", 6), "lib/notes.md": lines("notes", 3),
	}
	base := gittest.Commit(t, repo, "", start, "base\n")
	// edit makes one side's random change to files (as read at from).
	edit := func(rng *rand.Rand, side string, files map[string]string) map[string]string {
		out := map[string]string{}
		for range 1 + rng.IntN(3) {
			switch k := rng.IntN(30); {
			case k < 17 || k > 25: // insert a line into a library file
				p := []string{"lib/SKILL.md", "lib/ref/a.md", "lib/ref/b.md"}[rng.IntN(3)]
				text := files[p]
				if v, ok := out[p]; ok {
					text = v
				}
				ls := strings.SplitAfter(text, "\n")
				i := rng.IntN(len(ls))
				ls = slices.Insert(ls, i, fmt.Sprintf("%s rule %d\n", side, rng.IntN(1000)))
				out[p] = strings.Join(ls, "")
			case k < 19: // rewrite a line (conflicts when both do it)
				p := "lib/SKILL.md"
				text := files[p]
				if v, ok := out[p]; ok {
					text = v
				}
				out[p] = strings.Replace(text, fmt.Sprintf("skill line %d\n", rng.IntN(4)), side+" rewrote\n", 1)
			case k == 19:
				out[fmt.Sprintf("lib/new-%d.md", rng.IntN(3))] = side + " new\n"
			case k == 20:
				out["lib/notes.md"] = "" // removed
			case k == 21:
				out["top.txt"] = files["top.txt"] + side + "\n"
			case k == 22:
				out["lib/.gitattributes"] = "*.md -merge\n"
			case k == 23: // renamed: git follows the other side's edits there
				out["lib/ref/a.md"] = ""
				out["lib/ref/moved.md"] = files["lib/ref/a.md"]
			case k == 24:
				out["lib/same.md"] = "both add this\n"
			default:
				out["lib/ref/c/deep.md"] = side + " deep\n"
			}
		}
		return out
	}
	read := func(c git.Hash) map[string]string {
		tree, err := repo.TreeOf(ctx, c, "")
		if err != nil {
			t.Fatal(err)
		}
		entries, err := repo.ReadTree(ctx, tree)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, e := range entries {
			data, err := repo.ReadBlob(ctx, e.Hash)
			if err != nil {
				t.Fatal(err)
			}
			files[e.Path] = string(data)
		}
		return files
	}
	const n = 120
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		dev := base
		if rng.IntN(3) == 0 { // an older dev the proposal was made on
			dev = gittest.Commit(t, repo, base, edit(rng, "dev", start), "dev\n")
		}
		devFiles := read(dev)
		aEdit := edit(rng, "a", devFiles)
		a := gittest.Commit(t, repo, dev, aEdit, "a\n")
		ours := a
		if rng.IntN(2) == 0 { // a candidate: dev with a merged in, as extend makes it
			tree, err := other.MergeTree(ctx, git.MergeTreeRequest{Ours: dev, Theirs: a})
			if err != nil {
				continue
			}
			if ours, err = repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: []git.Hash{dev, a}, Message: "candidate\n"}); err != nil {
				t.Fatal(err)
			}
		}
		from := dev
		switch rng.IntN(6) {
		case 0:
			from = base // a proposal made on the dev before
		case 1:
			from = gittest.Commit(t, repo, dev, edit(rng, "sibling", devFiles), "sibling\n") // not an ancestor of ours
		}
		b := gittest.Commit(t, repo, from, edit(rng, "b", read(from)), "b\n")
		if ours != a && rng.IntN(5) == 0 {
			b = a // already merged into ours, and there undone
			undo := map[string]string{}
			for p := range aEdit {
				undo[p] = devFiles[p]
			}
			ours = gittest.Commit(t, repo, ours, undo, "undo\n")
		}
		got, gotErr := repo.MergeTree(ctx, req(ours, b))
		want, wantErr := other.MergeTree(ctx, git.MergeTreeRequest{Ours: ours, Theirs: b})
		var gc, wc *git.MergeConflictError
		errors.As(gotErr, &gc)
		errors.As(wantErr, &wc)
		if got != want || (gc == nil) != (wc == nil) || gc != nil && !slices.Equal(gc.Paths, wc.Paths) ||
			gc == nil && (gotErr != nil || wantErr != nil) {
			t.Errorf("seed %d: in process %s (%v), git %s (%v)", seed, got, gotErr, want, wantErr)
		}
	}
	if inProc < n/3 {
		t.Errorf("%d of %d merges went through the in-process text merge; want most", inProc, n)
	}
	t.Logf("%d of %d merges in process", inProc, n)
}
