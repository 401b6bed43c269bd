package eval

import (
	"errors"
	"strings"
	"testing"
)

// TestParseErrors checks the whole message of every kind of malformed
// input: file:line, then the field, then the problem.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, file, data, want string
	}{
		// JSON syntax and shape.
		{"syntax", "x.json", "[\n {\"id\": 1, \"prompt\": \"a\"},\n {\"id\": 2 \"prompt\": \"b\"}\n]",
			`x.json:3: invalid JSON: invalid character '"' after object key:value pair`},
		{"truncated", "x.json", "[\n {\"id\": 1,",
			`x.json:2: invalid JSON: unexpected end of input`},
		{"trailing data", "x.json", "[{\"id\": 1, \"prompt\": \"a\"}]\n\n]",
			`x.json:3: invalid JSON: unexpected data after the value`},
		{"top level string", "x.json", `"tasks"`,
			`x.json:1: want an object with "evals" or an array of evals, found string`},
		{"evals missing", "x.json", "{\n  \"skill_name\": \"s\"\n}",
			`x.json:1: evals: missing`},
		{"evals not array", "x.json", "{\n  \"evals\":\n {\"id\": 1}}",
			`x.json:3: evals: want array, found object`},
		{"item not object", "x.json", "{\"evals\": [\n  {\"id\": 1, \"prompt\": \"a\"},\n  \"two\"\n]}",
			`x.json:3: evals[1]: want object, found string`},
		{"prompt missing", "evals/evals.json", `{
  "evals": [
    {"id": 1, "prompt": "a"},
    {"id": 2, "prompt": "b"},
    {"id": 3, "prompt": "c"},
    {
      "id": 4,
      "expected_output": "x"
    }
  ]
}`, `evals/evals.json:6: evals[3].prompt: missing`},
		{"prompt null", "x.json", `[{"id": 1, "prompt": null}]`, `x.json:1: [0].prompt: missing`},
		{"id missing", "x.json", `{"evals": [{"prompt": "a"}]}`, `x.json:1: evals[0].id: missing`},
		{"id empty", "x.json", "{\"evals\": [{\"prompt\": \"a\",\n \"id\": \"  \"}]}", `x.json:2: evals[0].id: empty`},
		{"id boolean", "x.json", `{"evals": [{"id": true, "prompt": "a"}]}`,
			`x.json:1: evals[0].id: want number or string, found boolean`},
		{"prompt number", "x.json", "{\"evals\": [{\"id\": 1,\n\n \"prompt\": 5}]}",
			`x.json:3: evals[0].prompt: want string, found number`},
		{"prompt blank", "x.json", `{"evals": [{"id": 1, "prompt": " \n "}]}`, `x.json:1: evals[0].prompt: empty`},
		{"expected number", "x.json", `{"evals": [{"id": 1, "prompt": "a", "expected_output": 4}]}`,
			`x.json:1: evals[0].expected_output: want string, found number`},
		{"files string", "x.json", `{"evals": [{"id": 1, "prompt": "a", "files": "a.txt"}]}`,
			`x.json:1: evals[0].files: want array of strings, found string`},
		{"files element number", "x.json", "{\"evals\": [{\"id\": 1, \"prompt\": \"a\", \"files\": [\"a.txt\",\n 7]}]}",
			`x.json:2: evals[0].files[1]: want string, found number`},
		{"expectations object", "x.json", `{"evals": [{"id": 1, "prompt": "a", "expectations": {"a": 1}}]}`,
			`x.json:1: evals[0].expectations: want array of strings, found object`},
		{"expectations null element", "x.json", `{"evals": [{"id": 1, "prompt": "a", "expectations": [null]}]}`,
			`x.json:1: evals[0].expectations[0]: want string, found null`},

		// Bad paths in files.
		{"absolute path", "x.json", `[{"id": 1, "prompt": "a", "files": ["/etc/passwd"]}]`,
			`x.json:1: [0].files[0]: path "/etc/passwd": must be relative to the library root`},
		{"dotdot path", "x.json", `[{"id": 1, "prompt": "a", "files": ["../secret"]}]`,
			`x.json:1: [0].files[0]: path "../secret": must not contain ".."`},
		{"inner dotdot path", "x.json", `[{"id": 1, "prompt": "a", "files": ["ok.txt", "a/../../b"]}]`,
			`x.json:1: [0].files[1]: path "a/../../b": must not contain ".."`},
		{"backslash path", "x.json", `[{"id": 1, "prompt": "a", "files": ["a\\b.txt"]}]`,
			`x.json:1: [0].files[0]: path "a\\b.txt": must be slash-separated`},
		{"drive path", "x.json", `[{"id": 1, "prompt": "a", "files": ["C:/x.txt"]}]`,
			`x.json:1: [0].files[0]: path "C:/x.txt": must be relative to the library root`},
		{"empty path", "x.json", `[{"id": 1, "prompt": "a", "files": [""]}]`,
			`x.json:1: [0].files[0]: empty path`},
		{"root path", "x.json", `[{"id": 1, "prompt": "a", "files": ["./"]}]`,
			`x.json:1: [0].files[0]: path "./": names the library root, not a file`},

		// Duplicates name both lines.
		{"duplicate json", "x.json", "{\"evals\": [\n {\"id\": 1, \"prompt\": \"a\"},\n {\"id\": 2, \"prompt\": \"b\"},\n {\"id\": \"1\", \"prompt\": \"c\"}\n]}",
			`x.json:4: evals[2].id: duplicate id "1", first defined at line 2`},

		// JSONL.
		{"jsonl not object", "x.jsonl", "{\"id\": 1, \"prompt\": \"a\"}\n[1]\n",
			`x.jsonl:2: want an eval object, found array`},
		{"jsonl syntax", "x.jsonl", "{\"id\": 1, \"prompt\": \"a\"}\n\n{\"id\": 2, \"prompt\": }\n",
			`x.jsonl:3: invalid JSON: invalid character '}' looking for beginning of value`},
		{"jsonl two values", "x.jsonl", `{"id": 1, "prompt": "a"} {"id": 2, "prompt": "b"}`,
			`x.jsonl:1: invalid JSON: unexpected data after the value`},
		{"jsonl prompt missing", "x.jsonl", "{\"id\": 1, \"prompt\": \"a\"}\n{\"id\": 2, \"prompt\": \"b\"}\n{\"id\": 3}\n",
			`x.jsonl:3: prompt: missing`},
		{"jsonl bad path", "x.jsonl", `{"id": 1, "prompt": "a", "files": ["/abs"]}`,
			`x.jsonl:1: files[0]: path "/abs": must be relative to the library root`},
		{"jsonl duplicate", "x.jsonl", "{\"id\": 1, \"prompt\": \"a\"}\n{\"id\": 2, \"prompt\": \"b\"}\n{\"id\": 1, \"prompt\": \"c\"}\n",
			`x.jsonl:3: id: duplicate id "1", first defined at line 1`},

		// CSV.
		{"csv prompt column missing", "tasks.csv", "id,question\n1,a\n",
			`tasks.csv:1: column "prompt": missing from the header`},
		{"csv id column missing", "tasks.csv", "prompt\na\n",
			`tasks.csv:1: column "id": missing from the header`},
		{"csv column twice", "tasks.csv", "id,prompt,expected,expected_output\n1,a,b,c\n",
			`tasks.csv:1: column "expected_output": appears twice in the header`},
		{"csv field count", "tasks.csv", "id,prompt,files\n1,a,\n2,b\n",
			`tasks.csv:3: row has 2 columns, header has 3`},
		{"csv bare quote", "tasks.csv", "id,prompt\n1,a \"quoted\" b\n",
			`tasks.csv:2: invalid CSV: bare " in non-quoted-field`},
		{"csv id empty", "tasks.csv", "id,prompt\n1,a\n  ,b\n",
			`tasks.csv:3: column "id": empty`},
		{"csv prompt empty", "tasks.csv", "id,prompt\n1,\n",
			`tasks.csv:2: column "prompt": empty`},
		{"csv files invalid JSON array", "tasks.csv",
			"id,prompt,files\n1,a,\n2,b,\n3,c,\n4,d,\n5,e,\n6,f,\"[\"\"a.txt\"\",]\"\n",
			`tasks.csv:7: column "files": invalid JSON array: invalid character ']' looking for beginning of value`},
		{"csv expectations JSON array of numbers", "tasks.csv", "id,prompt,expectations\n1,a,[1]\n",
			`tasks.csv:2: column "expectations": invalid JSON array: json: cannot unmarshal number into Go value of type string`},
		{"csv bad path in list", "tasks.csv", "id,prompt,files\n1,a,ok.txt; ../x\n",
			`tasks.csv:2: column "files": path "../x": must not contain ".."`},
		{"csv bad path on a later line of the row", "tasks.csv", "id,prompt,files\n1,\"two\nlines\",/abs\n",
			`tasks.csv:3: column "files": path "/abs": must be relative to the library root`},
		{"csv duplicate", "tasks.csv", "id,prompt\n1,a\n2,b\n 1 ,c\n",
			`tasks.csv:4: column "id": duplicate id "1", first defined at line 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := Parse(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("Parse succeeded with %d tasks, want error %q", len(tasks), tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != tt.file || ie.Line == 0 {
				t.Errorf("error %v is not an *InputError with file %q and a line", err, tt.file)
			}
			if !strings.HasPrefix(err.Error(), tt.file+":") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}
