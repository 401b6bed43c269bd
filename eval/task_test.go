package eval

import (
	"regexp"
	"testing"
)

func TestTaskHash(t *testing.T) {
	base := Task{
		ID:           "1",
		Prompt:       "Summarise the file",
		Expected:     "A summary",
		Files:        []string{"evals/files/a.txt"},
		Expectations: []string{"mentions the title"},
		Source:       "evals/evals.json:3",
	}
	h := base.Hash()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("Hash() = %q, want 64 hex digits", h)
	}
	if again := base.Hash(); again != h {
		t.Fatalf("Hash() not deterministic: %q then %q", h, again)
	}

	moved := base
	moved.Source = "other.jsonl:40"
	if moved.Hash() != h {
		t.Errorf("Hash() changed with Source only")
	}

	changes := map[string]func(*Task){
		"id":                   func(t *Task) { t.ID = "2" },
		"prompt":               func(t *Task) { t.Prompt += "." },
		"expected":             func(t *Task) { t.Expected = "" },
		"files":                func(t *Task) { t.Files = []string{"evals/files/b.txt"} },
		"files appended":       func(t *Task) { t.Files = append([]string{}, "evals/files/a.txt", "x") },
		"expectations":         func(t *Task) { t.Expectations = nil },
		"file to expectation":  func(t *Task) { t.Files, t.Expectations = nil, []string{"evals/files/a.txt", "mentions the title"} },
		"field boundary moved": func(t *Task) { t.ID, t.Prompt = "1S", "ummarise the file" },
	}
	seen := map[string]string{h: "base"}
	for name, change := range changes {
		c := base
		change(&c)
		got := c.Hash()
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: Hash() equals that of %s", name, prev)
		}
		seen[got] = name
	}
}

func TestTaskHashNilEqualsEmpty(t *testing.T) {
	a := Task{ID: "1", Prompt: "p"}
	b := Task{ID: "1", Prompt: "p", Files: []string{}, Expectations: []string{}}
	if a.Hash() != b.Hash() {
		t.Errorf("nil and empty lists hash differently")
	}
}

// TestTaskHashGolden pins the encoding: caches keyed by Hash are
// invalidated if it changes, so a change must be deliberate.
func TestTaskHashGolden(t *testing.T) {
	task := Task{ID: "1", Prompt: "p", Expected: "e", Files: []string{"a"}, Expectations: []string{"x"}}
	const want = "f9c04186bf4950c42284a2ee710abbfc1c64b2378718f4628cdad65c4b465140"
	if got := task.Hash(); got != want {
		t.Errorf("Hash() = %s, want %s", got, want)
	}
}
