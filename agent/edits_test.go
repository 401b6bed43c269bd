package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodReply = `RATIONALE: Add the missing factor for miles
The agent had no factor for mi.

EDIT SKILL.md
<<<<<<< SEARCH
- 1 in = 2.54 cm
=======
- 1 in = 2.54 cm
- 1 mi = 1.609344 km
>>>>>>> REPLACE

FILE references/notes.md
<<<<<<< CONTENT
# Notes
>>>>>>> END
`

func skillWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var testRules = editRules{frozen: []string{"evals/**"}, evals: "evals/evals.json", wholeFileMax: 100}

func TestParseAndApplyReply(t *testing.T) {
	dir := skillWith(t, map[string]string{"SKILL.md": "# S\n- 1 in = 2.54 cm\n"})
	rat, blocks, err := parseReply(goodReply)
	if err != nil {
		t.Fatal(err)
	}
	if rat.Subject != "Add the missing factor for miles" || rat.Body != "The agent had no factor for mi." {
		t.Fatalf("rationale = %+v", rat)
	}
	changed, err := applyEdits(dir, blocks, testRules)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "SKILL.md,references/notes.md" {
		t.Fatalf("changed = %v", changed)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if string(data) != "# S\n- 1 in = 2.54 cm\n- 1 mi = 1.609344 km\n" {
		t.Fatalf("SKILL.md = %q", data)
	}
}

// Every way an edit can be wrong is refused with a message the model can
// act on, and nothing is written when any block fails.
func TestApplyEditsRefuses(t *testing.T) {
	big := strings.Repeat("x\n", 100)
	for _, c := range []struct {
		name, reply, want string
	}{
		{"missing search", "RATIONALE: r\nEDIT SKILL.md\n<<<<<<< SEARCH\nnope\n=======\ny\n>>>>>>> REPLACE\n", "SEARCH text was not found"},
		{"ambiguous", "RATIONALE: r\nEDIT SKILL.md\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "appears 2 times"},
		{"frozen", "RATIONALE: r\nFILE evals/evals.json\n<<<<<<< CONTENT\n[]\n>>>>>>> END\n", "frozen"},
		{"outside", "RATIONALE: r\nFILE ../x.md\n<<<<<<< CONTENT\nx\n>>>>>>> END\n", "inside the skill directory"},
		{"absolute", "RATIONALE: r\nFILE /etc/x.md\n<<<<<<< CONTENT\nx\n>>>>>>> END\n", "inside the skill directory"},
		{"git", "RATIONALE: r\nFILE .git/config\n<<<<<<< CONTENT\nx\n>>>>>>> END\n", ".git"},
		{"symlink", "RATIONALE: r\nFILE link/x.md\n<<<<<<< CONTENT\nx\n>>>>>>> END\n", "symlink"},
		{"big whole file", "RATIONALE: r\nFILE big.md\n<<<<<<< CONTENT\nsmall\n>>>>>>> END\n", "with EDIT blocks"},
		{"no change", "RATIONALE: r\nEDIT SKILL.md\n<<<<<<< SEARCH\nb\n=======\nb\n>>>>>>> REPLACE\n", "change nothing"},
		{"edit new file", "RATIONALE: r\nEDIT new.md\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE\n", "no such file"},
	} {
		dir := skillWith(t, map[string]string{"SKILL.md": "a\na\nb\n", "big.md": big, "evals/evals.json": "{}"})
		if err := os.Symlink(t.TempDir(), filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		_, blocks, err := parseReply(c.reply)
		if err == nil {
			_, err = applyEdits(dir, blocks, testRules)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "SKILL.md")); string(data) != "a\na\nb\n" {
			t.Errorf("%s: SKILL.md changed to %q", c.name, data)
		}
	}
}

func TestParseReplyMalformed(t *testing.T) {
	for reply, want := range map[string]string{
		"just some prose": "no RATIONALE",
		"RATIONALE: r\n":  "no EDIT or FILE blocks",
		"RATIONALE: r\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n": "without an EDIT",
		"RATIONALE: r\nEDIT a.md\n<<<<<<< SEARCH\na\n":                   "needs a",
		"RATIONALE: r\nFILE a.md\nhello\n":                               "must be followed",
		"RATIONALE: r\nFILE a.md\n<<<<<<< CONTENT\nhello\n":              "no closing",
	} {
		if _, _, err := parseReply(reply); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseReply(%q) = %v, want %q", reply, err, want)
		}
	}
}

func TestInstructionsFollowReferencesWithinBudget(t *testing.T) {
	dir := skillWith(t, map[string]string{
		"SKILL.md":            "# S\nSee [rules](references/rules.md) and `scripts/run.sh`, then references/extra.md.\n",
		"references/rules.md": "rule one\n",
		"scripts/run.sh":      "echo hi\n",
		"references/extra.md": strings.Repeat("e", 500),
		"unrelated.md":        "not referenced\n",
	})
	text, cut := Instructions(dir, 10000)
	for _, want := range []string{"# File: SKILL.md", "# File: references/rules.md", "# File: scripts/run.sh", "# File: references/extra.md"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "unrelated") || cut != "" {
		t.Errorf("unreferenced file included or cut reported: %q", cut)
	}
	if strings.Index(text, "SKILL.md") > strings.Index(text, "references/rules.md") {
		t.Error("SKILL.md is not first")
	}
	_, cut = Instructions(dir, 300)
	if !strings.Contains(cut, "left out references/extra.md (500 characters)") {
		t.Errorf("cut = %q", cut)
	}
}

func TestParseReplyNoChange(t *testing.T) {
	rat, blocks, err := parseReply("RATIONALE: Already handled by the newer edit\nNO CHANGE\n")
	if err != nil || len(blocks) != 0 || rat.Subject != "Already handled by the newer edit" {
		t.Fatalf("parseReply = %+v, %v, %v", rat, blocks, err)
	}
}
