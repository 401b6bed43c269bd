package eval

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Extensions lists the task file extensions Parse understands, for messages.
var Extensions = []string{".json", ".jsonl", ".csv"}

// ErrUnsupportedFormat is wrapped by Parse when a file's extension is not
// one of Extensions.
var ErrUnsupportedFormat = errors.New("unsupported task file format")

// ErrNoTasks is wrapped by Parse when a well-formed file defines no task.
var ErrNoTasks = errors.New("no tasks")

// InputError is a malformed task file. Its message reads
// "file:line: field: problem", e.g.
// `evals/evals.json:14: evals[3].prompt: missing`; Line is 0 and Field is
// empty when they do not apply, and are then left out of the message.
type InputError struct {
	File  string // the file name as given to Parse or Load
	Line  int    // 1-based
	Field string // e.g. "evals[3].prompt" or `column "files"`
	Err   error
}

// Error returns "file:line: field: problem".
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the problem, for errors.Is and errors.As.
func (e *InputError) Unwrap() error { return e.Err }

// Load reads the task file at path and parses it like Parse, naming it by
// path as given.
func Load(path string) ([]Task, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a task file's contents by the extension of name (matched
// case-insensitively): .json (a skill-creator evals object, or an array of
// eval objects), .jsonl (one eval object per non-blank line) or .csv (a
// header row naming the columns). Tasks come back in file order, each with
// Source set to "name:line". The result is never empty: a file without
// tasks is an error wrapping ErrNoTasks. Malformed input is an
// *InputError naming the file, the line and the field.
func Parse(name string, data []byte) ([]Task, error) {
	data = trimBOM(data)
	var (
		found []located
		err   error
	)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".json":
		found, err = parseJSON(newJSONDoc(name, data), data)
	case ".jsonl":
		found, err = parseJSONL(newJSONDoc(name, data), data)
	case ".csv":
		found, err = parseCSV(name, data)
	default:
		if ext == "" {
			ext = "(none)"
		}
		return nil, fmt.Errorf("%q: %w, extension %s: supported extensions are %s",
			name, ErrUnsupportedFormat, ext, strings.Join(Extensions, ", "))
	}
	if err != nil {
		return nil, err
	}
	return collect(name, found)
}

// located is a parsed task with where its id was defined, for duplicate
// messages.
type located struct {
	task    Task
	line    int
	idField string
}

// collect checks the parsed tasks for duplicate ids and emptiness.
func collect(name string, found []located) ([]Task, error) {
	if len(found) == 0 {
		return nil, fmt.Errorf("%w in %q", ErrNoTasks, name)
	}
	first := make(map[string]int, len(found))
	tasks := make([]Task, 0, len(found))
	for _, l := range found {
		if line, ok := first[l.task.ID]; ok {
			return nil, &InputError{File: name, Line: l.line, Field: l.idField,
				Err: fmt.Errorf("duplicate id %q, first defined at line %d", l.task.ID, line)}
		}
		first[l.task.ID] = l.line
		tasks = append(tasks, l.task)
	}
	return tasks, nil
}

// checkPath validates one entry of a task's files and returns it cleaned.
func checkPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case strings.Contains(p, `\`):
		return "", fmt.Errorf("path %q: must be slash-separated", p)
	case strings.HasPrefix(p, "/") || isDrivePath(p):
		return "", fmt.Errorf("path %q: must be relative to the library root", p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("path %q: must not contain %q", p, "..")
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", fmt.Errorf("path %q: names the library root, not a file", p)
	}
	return clean, nil
}

// isDrivePath reports whether p starts with a Windows drive letter, "C:".
func isDrivePath(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return 'a' <= c && c <= 'z'
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}

// lineIndex maps byte offsets of a document to 1-based line numbers.
type lineIndex []int // offsets of '\n'

func newLineIndex(data []byte) lineIndex {
	var idx lineIndex
	for i, c := range data {
		if c == '\n' {
			idx = append(idx, i)
		}
	}
	return idx
}

// line returns the line holding byte offset off.
func (idx lineIndex) line(off int) int {
	return sort.SearchInts(idx, off) + 1
}
