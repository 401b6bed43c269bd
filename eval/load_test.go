package eval

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// skillCreatorJSON is the shape skill-creator writes to evals/evals.json.
const skillCreatorJSON = `{
  "skill_name": "pdf-forms",
  "evals": [
    {
      "id": 1,
      "prompt": "Fill in evals/files/form.pdf for Alice Smith, born 1990-04-01.",
      "expected_output": "A filled PDF with the name and birth date set",
      "files": ["evals/files/form.pdf"],
      "expectations": [
        "The output PDF has name = Alice Smith",
        "The birth date field reads 1990-04-01"
      ]
    },
    {
      "id": 2,
      "prompt": "List the fields of evals/files/form.pdf",
      "expected_output": "",
      "files": [],
      "expectations": [],
      "notes": "unknown fields are ignored"
    },
    {"id": "three", "prompt": "No files here"}
  ]
}
`

func TestParseSkillCreator(t *testing.T) {
	got, err := Parse("evals/evals.json", []byte(skillCreatorJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{
		{
			ID:       "1",
			Prompt:   "Fill in evals/files/form.pdf for Alice Smith, born 1990-04-01.",
			Expected: "A filled PDF with the name and birth date set",
			Files:    []string{"evals/files/form.pdf"},
			Expectations: []string{
				"The output PDF has name = Alice Smith",
				"The birth date field reads 1990-04-01",
			},
			Source: "evals/evals.json:4",
		},
		{ID: "2", Prompt: "List the fields of evals/files/form.pdf", Source: "evals/evals.json:14"},
		{ID: "three", Prompt: "No files here", Source: "evals/evals.json:22"},
	}
	assertTasks(t, got, want)
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             []Task
	}{
		{
			name: "json array",
			file: "tasks.json",
			data: "[\n {\"id\": 7, \"prompt\": \"a\"},\n {\"id\": \"x\", \"prompt\": \"b\", \"expected_output\": \"B\"}\n]",
			want: []Task{
				{ID: "7", Prompt: "a", Source: "tasks.json:2"},
				{ID: "x", Prompt: "b", Expected: "B", Source: "tasks.json:3"},
			},
		},
		{
			name: "integer ids in any spelling",
			file: "ids.json",
			data: `[{"id": 10, "prompt": "a"}, {"id": 2.0, "prompt": "b"}, {"id": 3e1, "prompt": "c"}, {"id": 1.5, "prompt": "d"}, {"id": -4, "prompt": "e"}, {"id": " 5 ", "prompt": "f"}]`,
			want: []Task{
				{ID: "10", Prompt: "a", Source: "ids.json:1"},
				{ID: "2", Prompt: "b", Source: "ids.json:1"},
				{ID: "30", Prompt: "c", Source: "ids.json:1"},
				{ID: "1.5", Prompt: "d", Source: "ids.json:1"},
				{ID: "-4", Prompt: "e", Source: "ids.json:1"},
				{ID: "5", Prompt: "f", Source: "ids.json:1"},
			},
		},
		{
			name: "null optional fields",
			file: "n.json",
			data: `{"evals": [{"id": 1, "prompt": "a", "expected_output": null, "files": null}]}`,
			want: []Task{{ID: "1", Prompt: "a", Source: "n.json:1"}},
		},
		{
			name: "jsonl with blank lines and CRLF",
			file: "evals/tasks.jsonl",
			data: "{\"id\": 1, \"prompt\": \"one\"}\r\n\r\n   \n{\"id\": \"b\", \"prompt\": \"two\", \"files\": [\"./in/a.txt\"], \"expectations\": [\"e1\"]}\n",
			want: []Task{
				{ID: "1", Prompt: "one", Source: "evals/tasks.jsonl:1"},
				{ID: "b", Prompt: "two", Files: []string{"in/a.txt"}, Expectations: []string{"e1"}, Source: "evals/tasks.jsonl:4"},
			},
		},
		{
			name: "csv with ; lists, JSON cells, any column order and case",
			file: "tasks.csv",
			data: "Prompt,ID,Expected,Files,Expectations,comment\n" +
				"What is 2+2?,1,4,,,ignored\n" +
				"\"Read a and b\",2,ok,in/a.txt; in/b.txt ;,\"first; second\",\n" +
				"\"multi\nline\",3,,\"[\"\"in/c.txt\"\", \"\"in/d e.txt\"\"]\",\"[\"\"has; semicolon\"\"]\",\n" +
				",,,,,\n" +
				"last,4,,,,\n",
			want: []Task{
				{ID: "1", Prompt: "What is 2+2?", Expected: "4", Source: "tasks.csv:2"},
				{ID: "2", Prompt: "Read a and b", Expected: "ok", Files: []string{"in/a.txt", "in/b.txt"},
					Expectations: []string{"first", "second"}, Source: "tasks.csv:3"},
				{ID: "3", Prompt: "multi\nline", Files: []string{"in/c.txt", "in/d e.txt"},
					Expectations: []string{"has; semicolon"}, Source: "tasks.csv:4"},
				{ID: "4", Prompt: "last", Source: "tasks.csv:7"},
			},
		},
		{
			name: "csv with BOM and expected_output",
			file: "T.CSV",
			data: "\uFEFFid,prompt,expected_output\r\n1,p,e\r\n",
			want: []Task{{ID: "1", Prompt: "p", Expected: "e", Source: "T.CSV:2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			assertTasks(t, got, tt.want)
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "evals.json")
	if err := os.WriteFile(path, []byte(skillCreatorJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 || tasks[0].Source != path+":4" {
		t.Errorf("Load(%q) = %d tasks, first from %q; want 3, from %q", path, len(tasks), tasks[0].Source, path+":4")
	}

	_, err = Load(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Load(missing) error = %v, want not-exist naming the file", err)
	}
}

func TestParseUnsupported(t *testing.T) {
	for _, name := range []string{"tasks.yaml", "tasks"} {
		_, err := Parse(name, []byte("id: 1"))
		if !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("Parse(%q) error = %v, want ErrUnsupportedFormat", name, err)
			continue
		}
		for _, want := range []string{`"` + name + `"`, ".json, .jsonl, .csv"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) error = %q, want it to contain %q", name, err, want)
			}
		}
	}
}

func TestParseNoTasks(t *testing.T) {
	for _, tt := range []struct{ file, data string }{
		{"x.json", ""},
		{"x.json", "  \n"},
		{"x.json", "[]"},
		{"x.json", `{"skill_name": "s", "evals": []}`},
		{"x.jsonl", "\n\n"},
		{"x.csv", ""},
		{"x.csv", "id,prompt\n"},
		{"x.csv", "id,prompt\n,\n"},
	} {
		_, err := Parse(tt.file, []byte(tt.data))
		if !errors.Is(err, ErrNoTasks) || err.Error() != `no tasks in "`+tt.file+`"` {
			t.Errorf("Parse(%q, %q) error = %v, want `no tasks in %q`", tt.file, tt.data, err, tt.file)
		}
	}
}

func assertTasks(t *testing.T, got, want []Task) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tasks, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(normalizeTask(got[i]), normalizeTask(want[i])) {
			t.Errorf("task %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// normalizeTask treats nil and empty lists alike.
func normalizeTask(t Task) Task {
	if len(t.Files) == 0 {
		t.Files = nil
	}
	if len(t.Expectations) == 0 {
		t.Expectations = nil
	}
	return t
}
