package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func skillDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range Files() {
		rel, ok := strings.CutPrefix(p, Path+"/")
		if !ok {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type evalsFile struct {
	Evals []struct {
		ID       string `json:"id"`
		Prompt   string `json:"prompt"`
		Expected string `json:"expected_output"`
	} `json:"evals"`
}

func loadEvals(t *testing.T) evalsFile {
	t.Helper()
	var ev evalsFile
	if err := json.Unmarshal([]byte(Files()[Path+"/evals/evals.json"]), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The starting skill answers only the conversions it has factors for; after
// the proposer has seen every failure, the agent answers every task.
func TestProposerFixesWhatTheAgentMisses(t *testing.T) {
	dir := skillDir(t)
	ev := loadEvals(t)
	if len(ev.Evals) < 40 {
		t.Fatalf("%d tasks, want 40+", len(ev.Evals))
	}
	score := func() (int, []Failure) {
		right := 0
		var fails []Failure
		for _, e := range ev.Evals {
			got, err := Answer(dir, e.Prompt)
			if err != nil {
				t.Fatal(err)
			}
			if got == e.Expected {
				right++
			} else {
				fails = append(fails, Failure{Prompt: e.Prompt, Output: got})
			}
		}
		return right, fails
	}
	right, fails := score()
	if right == 0 || right > len(ev.Evals)/3 {
		t.Fatalf("baseline answers %d of %d; want a few", right, len(ev.Evals))
	}
	subject, body, err := Propose(dir, fails)
	if err != nil || !strings.HasPrefix(subject, "Add conversion factors for ") || !strings.Contains(body, "Failed tasks:") {
		t.Fatalf("Propose = %q, %q, %v", subject, body, err)
	}
	if right, fails = score(); right != len(ev.Evals) {
		t.Fatalf("after the proposal %d of %d right; first miss %+v", right, len(ev.Evals), fails[0])
	}
	if subject, _, err := Propose(dir, nil); subject != "" || err != nil {
		t.Fatalf("nothing to fix: Propose = %q, %v", subject, err)
	}
}

func TestAnswerUsesInverseFactors(t *testing.T) {
	dir := skillDir(t)
	for prompt, want := range map[string]string{
		"Convert 10 in to cm.":   "25.40 cm",
		"Convert 25.4 cm to in.": "10.00 in",
		"Convert 3 mi to km.":    "unknown: the skill has no factor for mi to km",
		"What time is it?":       "unknown: not a conversion question",
	} {
		if got, err := Answer(dir, prompt); err != nil || got != want {
			t.Errorf("Answer(%q) = %q, %v; want %q", prompt, got, err, want)
		}
	}
}
