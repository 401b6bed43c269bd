package library

import "testing"

func TestCleanPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"skills/pdf", "skills/pdf"},
		{"./skills/pdf/", "skills/pdf"},
		{"/skills/pdf", "skills/pdf"},
		{`skills\pdf`, "skills/pdf"},
		{"skills//pdf/./x/..", "skills/pdf"},
		{"./././a", "a"},
		{"a/", "a"},
	} {
		if got := CleanPath(c.in); got != c.want {
			t.Errorf("CleanPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRel(t *testing.T) {
	l := New("skills/pdf")
	for _, c := range []struct {
		in, rel string
		ok      bool
	}{
		{"skills/pdf/SKILL.md", "SKILL.md", true},
		{"skills/pdf/scripts/a.sh", "scripts/a.sh", true},
		{"skills/pdf", "", false},
		{"skills/pdf-other/SKILL.md", "", false},
		{"skills/pdfx", "", false},
		{"README.md", "", false},
	} {
		rel, ok := l.Rel(c.in)
		if ok != c.ok || ok && rel != c.rel {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", c.in, rel, ok, c.rel, c.ok)
		}
		if ok && l.RepoPath(rel) != c.in {
			t.Errorf("RepoPath(Rel(%q)) = %q", c.in, l.RepoPath(rel))
		}
	}
}

func TestLayerOfAndHidden(t *testing.T) {
	def := New("skills/pdf")
	custom := New("skills/pdf")
	custom.Evals = "tests/cases.json"
	custom.Frozen = []string{"LICENSE"}
	custom.Guarded = []string{"**/*.py"}
	custom.Hide = []string{"tests/answers/**"}
	for _, c := range []struct {
		name   string
		l      *Library
		rel    string
		layer  Layer
		hidden bool
	}{
		{"default eval file", def, "evals/evals.json", L0, true},
		{"default evals dir", def, "evals/files/a.pdf", L0, true},
		{"default script", def, "scripts/extract.py", L1, false},
		{"default nested script", def, "scripts/lib/x.sh", L1, false},
		{"default instructions", def, "SKILL.md", L2, false},
		{"default reference", def, "references/forms.md", L2, false},
		{"eval file outside frozen globs", custom, "tests/cases.json", L0, true},
		{"frozen file", custom, "LICENSE", L0, false},
		{"old default no longer frozen", custom, "evals/evals.json", L2, false},
		{"guarded anywhere", custom, "a/b/c.py", L1, false},
		{"guarded at root", custom, "c.py", L1, false},
		{"old default no longer guarded", custom, "scripts/x.sh", L2, false},
		{"hidden answers", custom, "tests/answers/1.txt", L2, true},
		{"test input not hidden", custom, "tests/inputs/1.txt", L2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.l.LayerOf(c.rel); got != c.layer {
				t.Errorf("LayerOf(%q) = %s, want %s", c.rel, got, c.layer)
			}
			if got := c.l.Hidden(c.rel); got != c.hidden {
				t.Errorf("Hidden(%q) = %v, want %v", c.rel, got, c.hidden)
			}
		})
	}
	// Frozen wins over guarded.
	both := New("lib")
	both.Frozen, both.Guarded = []string{"scripts/keep.sh"}, []string{"scripts/**"}
	if got := both.LayerOf("scripts/keep.sh"); got != L0 {
		t.Errorf("frozen and guarded: LayerOf = %s, want L0", got)
	}
}

func TestLayoutDir(t *testing.T) {
	for _, c := range []struct{ layout, want string }{
		{"", "skills/pdf-audit"},
		{"repo", "skills/pdf-audit"},
		{"claude", ".claude/skills/audit"},
		{"root", ""},
		{".", ""},
		{"./agents/pdf/", "agents/pdf"},
		{"agents", "agents"},
	} {
		l := New("skills/pdf-audit")
		l.Name = "audit"
		l.Layout = c.layout
		if got := l.LayoutDir(); got != c.want {
			t.Errorf("LayoutDir with layout %q = %q, want %q", c.layout, got, c.want)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	l := New("./skills/pdf-audit/")
	if l.Name != "pdf-audit" || l.Path != "skills/pdf-audit" || l.Layout != DefaultLayout || l.Scorer != DefaultScorer ||
		l.Timeout != DefaultTimeout || l.Minibatch != DefaultMinibatch || l.Delta != DefaultDelta {
		t.Errorf("New = %+v", l)
	}
	if L0.String() != "L0" || L2.String() != "L2" {
		t.Errorf("Layer strings %s %s", L0, L2)
	}
}
