package library

import "testing"

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, p string
		want   bool
	}{
		{"evals/**", "evals/evals.json", true},
		{"evals/**", "evals/files/a.pdf", true},
		{"evals/**", "SKILL.md", false},
		{"evals", "evals/evals.json", true},
		{"evals", "evalsx/a", false},
		{"*.md", "SKILL.md", true},
		{"*.md", "references/a.md", false},
		{"**/*.md", "references/a.md", true},
		{"**/*.md", "SKILL.md", true},
		{"scripts/*.sh", "scripts/a.sh", true},
		{"scripts/*.sh", "scripts/x/a.sh", false},
		{"scripts/**/test_*.py", "scripts/a/b/test_x.py", true},
		{"", "SKILL.md", false},
		{"[", "[", false},
	} {
		if got := Match(c.pat, c.p); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.p, got, c.want)
		}
	}
}
