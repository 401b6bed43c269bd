package library

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSkill(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, c := range []struct {
		dir, skill string
		want       string // a part of the one finding, or "" for none
	}{
		{"pdf-audit", "---\nname: pdf-audit\ndescription: Audits PDFs. Use for PDF accessibility checks.\n---\n# PDF audit\n", ""},
		{"pdf-audit", "---\nname: \"pdf-audit\"\ndescription: >\n  Audits PDFs,\n  folded.\n---\n", ""},
		{"pdf-audit", "# PDF audit\n", "has no frontmatter"},
		{"pdf-audit", "---\nname: pdf-audit\ndescription: x\n", "has no frontmatter"},
		{"pdf-audit", "---\ndescription: x\n---\n", "has no name: add name: pdf-audit"},
		{"pdf-audit", "---\nname: PDF_Audit\ndescription: x\n---\n", `name "PDF_Audit": use 1 to 64 lowercase`},
		{"pdf-audit", "---\nname: pdf--audit\ndescription: x\n---\n", "single hyphens"},
		{"pdf-audit", "---\nname: -pdf\ndescription: x\n---\n", "single hyphens"},
		{"pdf-audit", "---\nname: pdf-check\ndescription: x\n---\n", `differs from its directory "pdf-audit"`},
		{"pdf-audit", "---\nname: pdf-audit\n---\n", "has no description"},
		{"pdf-audit", "---\nname: pdf-audit\ndescription: " + long + "\n---\n", "1025 characters; the format allows 1024"},
	} {
		dir := filepath.Join(t.TempDir(), c.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, SkillFile), []byte(c.skill), 0o644); err != nil {
			t.Fatal(err)
		}
		got := CheckSkill(dir)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%q: %q, want no finding", c.skill, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%q: %q, want one finding with %q", c.skill, got, c.want)
		}
	}
	if got := CheckSkill(t.TempDir()); len(got) != 1 || !strings.Contains(got[0], "has no SKILL.md") {
		t.Errorf("no SKILL.md: %q", got)
	}
}
