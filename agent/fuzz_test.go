package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseReply reads arbitrary model replies: never a panic, and every
// path an edit block names either stays inside the skill directory or is
// refused.
func FuzzParseReply(f *testing.F) {
	f.Add("RATIONALE: Add a rule\nEDIT: SKILL.md\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n")
	f.Add("FILE: ../../etc/passwd\nroot\nEND FILE\n")
	f.Add("EDIT: .git/config\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n")
	f.Fuzz(func(t *testing.T, reply string) {
		_, blocks, err := parseReply(reply)
		if err != nil {
			return
		}
		dir := t.TempDir()
		for _, b := range blocks {
			clean, err := checkEditPath(dir, b.path, editRules{evals: "evals/evals.json"})
			if err != nil {
				continue
			}
			full := filepath.Join(dir, filepath.FromSlash(clean))
			if rel, err := filepath.Rel(dir, full); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("path %q from the reply leaves the directory as %q", b.path, clean)
			}
		}
	})
}
