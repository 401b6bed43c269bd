package ledger

import (
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

func TestStaleness(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	// dev: base → d1 (a) → d2 (a, b) → d3 merges a side branch that
	// changed b twice → d4 (c). Only first-parent commits count.
	base := commitFiles(t, ctx, repo, "base", map[string]string{"a": "0\n", "b": "0\n", "c": "0\n", "d": "0\n"})
	d1 := commitFiles(t, ctx, repo, "d1", map[string]string{"a": "1\n"}, base)
	d2 := commitFiles(t, ctx, repo, "d2", map[string]string{"a": "2\n", "b": "2\n"}, d1)
	s1 := commitFiles(t, ctx, repo, "s1", map[string]string{"b": "s1\n"}, d2)
	s2 := commitFiles(t, ctx, repo, "s2", map[string]string{"b": "s2\n"}, s1)
	d3, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: mustTree(t, repo, s2), Parents: []git.Hash{d2, s2}, Message: "merge\n"})
	if err != nil {
		t.Fatal(err)
	}
	d4 := commitFiles(t, ctx, repo, "d4", map[string]string{"c": "4\n"}, d3)

	for _, c := range []struct {
		name      string
		base, dev git.Hash
		paths     []string
		want      int
	}{
		{"one path, two commits", base, d4, []string{"a"}, 2},
		{"merge counts once, side commits not at all", base, d4, []string{"b"}, 2},
		{"one commit", base, d4, []string{"c"}, 1},
		{"untouched path", base, d4, []string{"d"}, 0},
		{"missing path", base, d4, []string{"nope/x"}, 0},
		{"max over paths", base, d4, []string{"d", "c", "a"}, 2},
		{"no paths", base, d4, nil, 0},
		{"pathspec magic is literal", base, d4, []string{"?"}, 0},
		{"later base", d2, d4, []string{"a", "b", "c"}, 1},
		{"dev is base", d4, d4, []string{"a", "b", "c"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Staleness(ctx, repo, c.base, c.dev, c.paths)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Staleness(%v) = %d, want %d", c.paths, got, c.want)
			}
		})
	}
}
