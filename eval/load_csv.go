package eval

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// csvAliases maps accepted header names (lower case) to column keys.
var csvAliases = map[string]string{
	"id":              "id",
	"prompt":          "prompt",
	"expected_output": "expected_output",
	"expected":        "expected_output",
	"files":           "files",
	"expectations":    "expectations",
}

// parseCSV parses a header row naming the columns, then one task per row.
// Columns may come in any order; unknown ones are ignored; rows whose cells
// are all blank are skipped.
func parseCSV(name string, data []byte) ([]located, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	cols, err := csvColumns(name, header)
	if err != nil {
		return nil, err
	}
	var found []located
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, &InputError{File: name, Line: line,
				Err: fmt.Errorf("row has %d columns, header has %d", len(rec), len(header))}
		}
		if blankRow(rec) {
			continue
		}
		row := csvRow{name: name, line: line, cols: cols, rec: rec, pos: r.FieldPos}
		t, err := row.task()
		if err != nil {
			return nil, err
		}
		found = append(found, t)
	}
}

// csvColumns maps column keys to their index in the header.
func csvColumns(name string, header []string) (map[string]int, error) {
	cols := map[string]int{}
	for i, h := range header {
		key, ok := csvAliases[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			continue
		}
		if _, dup := cols[key]; dup {
			return nil, &InputError{File: name, Line: 1, Field: fmt.Sprintf("column %q", key),
				Err: errors.New("appears twice in the header")}
		}
		cols[key] = i
	}
	for _, key := range []string{"id", "prompt"} {
		if _, ok := cols[key]; !ok {
			return nil, &InputError{File: name, Line: 1, Field: fmt.Sprintf("column %q", key),
				Err: errors.New("missing from the header")}
		}
	}
	return cols, nil
}

// csvRow is one data row being converted to a task.
type csvRow struct {
	name string
	line int // where the row starts
	cols map[string]int
	rec  []string
	pos  func(field int) (line, column int)
}

func (r csvRow) task() (located, error) {
	t := Task{
		ID:       strings.TrimSpace(r.cell("id")),
		Prompt:   r.cell("prompt"),
		Expected: r.cell("expected_output"),
		Source:   fmt.Sprintf("%s:%d", r.name, r.line),
	}
	switch {
	case t.ID == "":
		return located{}, r.errorf("id", "empty")
	case strings.TrimSpace(t.Prompt) == "":
		return located{}, r.errorf("prompt", "empty")
	}
	var err error
	if t.Files, err = r.list("files", checkPath); err != nil {
		return located{}, err
	}
	if t.Expectations, err = r.list("expectations", nil); err != nil {
		return located{}, err
	}
	return located{task: t, line: r.line, idField: `column "id"`}, nil
}

// cell returns the row's value for a column key, "" when there is no such
// column.
func (r csvRow) cell(key string) string {
	if i, ok := r.cols[key]; ok {
		return r.rec[i]
	}
	return ""
}

// list parses a list cell: a JSON array of strings, or values separated by
// ";" (trimmed, empties dropped). check, when not nil, validates and
// rewrites each value.
func (r csvRow) list(key string, check func(string) (string, error)) ([]string, error) {
	cell := strings.TrimSpace(r.cell(key))
	var values []string
	if strings.HasPrefix(cell, "[") {
		if err := json.Unmarshal([]byte(cell), &values); err != nil {
			return nil, r.errorf(key, "invalid JSON array: %v", err)
		}
	} else {
		for v := range strings.SplitSeq(cell, ";") {
			if v = strings.TrimSpace(v); v != "" {
				values = append(values, v)
			}
		}
	}
	if check == nil {
		return values, nil
	}
	for i, v := range values {
		var err error
		if values[i], err = check(v); err != nil {
			return nil, r.errorf(key, "%v", err)
		}
	}
	return values, nil
}

// errorf reports a problem with the cell of a column key, at the line where
// that cell starts (quoted cells may span lines).
func (r csvRow) errorf(key, format string, args ...any) error {
	line, _ := r.pos(r.cols[key])
	return &InputError{File: r.name, Line: line, Field: fmt.Sprintf("column %q", key), Err: fmt.Errorf(format, args...)}
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{File: name, Line: pe.Line, Err: fmt.Errorf("invalid CSV: %w", pe.Err)}
	}
	return &InputError{File: name, Err: fmt.Errorf("read CSV: %w", err)}
}

func blankRow(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
