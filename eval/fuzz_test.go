package eval

import (
	"errors"
	"testing"
)

// FuzzParse loads arbitrary eval files in each format: never a panic, and
// either tasks with ids or an error that says what is wrong.
func FuzzParse(f *testing.F) {
	f.Add("evals.json", []byte(`{"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expected_output": "x", "files": ["evals/files/a.txt"]}]}`))
	f.Add("evals.jsonl", []byte("{\"id\": \"a\", \"prompt\": \"p\"}\n\n{\"id\": \"b\", \"prompt\": \"q\", \"expectations\": [\"e\"]}\n"))
	f.Add("evals.csv", []byte("id,prompt,expected_output\na,p,x\nb,\"q, r\",y\n"))
	f.Add("evals.json", []byte(`[{"id": "a", "prompt": "p", "files": ["../../etc/passwd"]}]`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		tasks, err := Parse(name, data)
		if err != nil {
			var in *InputError
			if !errors.As(err, &in) && !errors.Is(err, ErrNoTasks) && len(tasks) != 0 {
				t.Fatalf("error %v with %d tasks", err, len(tasks))
			}
			return
		}
		if len(tasks) == 0 {
			t.Fatal("no tasks and no error")
		}
		for _, task := range tasks {
			if task.ID == "" {
				t.Fatalf("a task without an id from %q", data)
			}
		}
	})
}
