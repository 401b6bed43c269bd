package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// jsonDoc is one JSON or JSONL task file being parsed. Offsets passed to
// its methods are absolute byte offsets into the file, so every error can
// name a line.
type jsonDoc struct {
	name  string
	lines lineIndex
	// What Inspect reports: the skill_name member, and keys the schema
	// does not have ("file:line: field: ...").
	skillName string
	unknown   []string
}

func newJSONDoc(name string, data []byte) *jsonDoc {
	return &jsonDoc{name: name, lines: newLineIndex(data)}
}

// parseJSON parses a skill-creator evals object or a top-level array of
// eval objects.
func parseJSON(doc *jsonDoc, data []byte) ([]located, error) {
	raw, off, err := doc.value(data, 0)
	if err != nil || raw == nil {
		return nil, err
	}
	switch kind := jsonKind(raw); kind {
	case "array":
		return doc.tasks(raw, off, "")
	case "object":
		return doc.evalsObject(raw, off)
	default:
		return nil, doc.errorf(off, "", `want an object with "evals" or an array of evals, found %s`, kind)
	}
}

// parseJSONL parses one eval object per non-blank line.
func parseJSONL(doc *jsonDoc, data []byte) ([]located, error) {
	var found []located
	start := 0
	for line := range bytes.SplitAfterSeq(data, []byte("\n")) {
		off := start
		start += len(line)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		raw, voff, err := doc.value(line, off)
		if err != nil {
			return nil, err
		}
		if kind := jsonKind(raw); kind != "object" {
			return nil, doc.errorf(voff, "", "want an eval object, found %s", kind)
		}
		t, err := doc.task(raw, voff, "")
		if err != nil {
			return nil, err
		}
		found = append(found, t)
	}
	return found, nil
}

// value decodes the single JSON value that data holds; data starts at byte
// base of the file. It returns the value and its offset, or nil for blank
// input.
func (d *jsonDoc) value(data []byte, base int) (json.RawMessage, int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	switch err := dec.Decode(&raw); {
	case errors.Is(err, io.EOF):
		return nil, 0, nil
	case err != nil:
		return nil, 0, d.syntaxError(err, data, base)
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, 0, d.errorf(base+len(data)-len(rest), "", "invalid JSON: unexpected data after the value")
	}
	return raw, base + end - len(raw), nil
}

func (d *jsonDoc) syntaxError(err error, data []byte, base int) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return d.errorf(base+int(se.Offset), "", "invalid JSON: %v", se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return d.errorf(base+len(data), "", "invalid JSON: unexpected end of input")
	}
	return d.errorf(base, "", "invalid JSON: %v", err)
}

// evalsObject parses the skill-creator schema, {"evals": [...]}.
func (d *jsonDoc) evalsObject(raw json.RawMessage, off int) ([]located, error) {
	var evals json.RawMessage
	var evalsOff int
	err := eachMember(raw, off, func(key string, v json.RawMessage, voff int) error {
		switch key {
		case "evals":
			evals, evalsOff = v, voff
		case "skill_name":
			_ = json.Unmarshal(v, &d.skillName)
		default:
			d.note(voff, "", key, []string{"evals", "skill_name"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if evals == nil || jsonKind(evals) == "null" {
		return nil, d.errorf(off, "evals", "missing")
	}
	if kind := jsonKind(evals); kind != "array" {
		return nil, d.errorf(evalsOff, "evals", "want array, found %s", kind)
	}
	return d.tasks(evals, evalsOff, "evals")
}

// tasks parses an array of eval objects; path names the array in messages.
func (d *jsonDoc) tasks(raw json.RawMessage, off int, path string) ([]located, error) {
	var found []located
	err := eachElement(raw, off, func(i int, v json.RawMessage, voff int) error {
		field := fmt.Sprintf("%s[%d]", path, i)
		if kind := jsonKind(v); kind != "object" {
			return d.errorf(voff, field, "want object, found %s", kind)
		}
		t, err := d.task(v, voff, field)
		if err != nil {
			return err
		}
		found = append(found, t)
		return nil
	})
	return found, err
}

// jsonKind names the JSON type of a value, for messages.
func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func (d *jsonDoc) errorf(off int, field, format string, args ...any) error {
	return &InputError{File: d.name, Line: d.lines.line(off), Field: field, Err: fmt.Errorf(format, args...)}
}

// note records a key the schema does not have, with the known key it most
// likely meant.
func (d *jsonDoc) note(off int, path, key string, known []string) {
	field := key
	if path != "" {
		field = path + "." + key
	}
	msg := fmt.Sprintf("%s:%d: %s: not a key git-descent reads, so it is ignored", d.name, d.lines.line(off), field)
	for _, k := range known {
		if strings.HasPrefix(k, key) || strings.HasPrefix(key, k) || strings.EqualFold(strings.ReplaceAll(key, "-", "_"), k) {
			msg += fmt.Sprintf(" (did you mean %q?)", k)
			break
		}
	}
	d.unknown = append(d.unknown, msg)
}

// Inspection is what Inspect found in a task file beyond its tasks.
type Inspection struct {
	SkillName string   // the skill-creator file's skill_name, if any
	Unknown   []string // keys that are not read, "file:line: field: ..."
}

// Inspect parses a task file like Parse and reports its skill_name and
// the keys it has that no task field reads (a typo such as "expected" for
// "expected_output" otherwise goes unnoticed). CSV files report nothing.
func Inspect(name string, data []byte) (Inspection, error) {
	data = trimBOM(data)
	doc := newJSONDoc(name, data)
	var err error
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		_, err = parseJSON(doc, data)
	case ".jsonl":
		_, err = parseJSONL(doc, data)
	}
	return Inspection{SkillName: doc.skillName, Unknown: doc.unknown}, err
}
