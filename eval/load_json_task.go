package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jsonValue is a member's value and its offset in the file.
type jsonValue struct {
	raw json.RawMessage
	off int
}

// taskKeys are the members of an eval object that become a Task.
var taskKeys = []string{"id", "prompt", "expected_output", "files", "expectations"}

// task parses one eval object starting at off; path names it in messages
// ("evals[3]", or "" for a JSONL line).
func (d *jsonDoc) task(raw json.RawMessage, off int, path string) (located, error) {
	members := map[string]jsonValue{}
	err := eachMember(raw, off, func(key string, v json.RawMessage, voff int) error {
		if jsonKind(v) != "null" {
			members[key] = jsonValue{v, voff}
		}
		if !slices.Contains(taskKeys, key) {
			d.note(voff, path, key, taskKeys)
		}
		return nil
	})
	if err != nil {
		return located{}, err
	}
	f := taskFields{doc: d, path: path, off: off, members: members}
	t := Task{
		ID:           f.id(),
		Prompt:       f.text("prompt", true),
		Expected:     f.text("expected_output", false),
		Files:        f.list("files", checkPath),
		Expectations: f.list("expectations", nil),
		Source:       fmt.Sprintf("%s:%d", d.name, d.lines.line(off)),
	}
	return located{task: t, line: d.lines.line(off), idField: f.name("id")}, f.err
}

// taskFields converts the members of one eval object, keeping the first
// error.
type taskFields struct {
	doc     *jsonDoc
	path    string
	off     int
	members map[string]jsonValue
	err     error
}

func (f *taskFields) name(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

func (f *taskFields) fail(off int, field, format string, args ...any) {
	if f.err == nil {
		f.err = f.doc.errorf(off, field, format, args...)
	}
}

// id returns the id as text: a string trimmed, or a number's decimal text.
func (f *taskFields) id() string {
	v, ok := f.members["id"]
	if !ok {
		f.fail(f.off, f.name("id"), "missing")
		return ""
	}
	var id string
	switch kind := jsonKind(v.raw); kind {
	case "string":
		_ = json.Unmarshal(v.raw, &id)
		id = strings.TrimSpace(id)
	case "number":
		id = numberText(string(v.raw))
	default:
		f.fail(v.off, f.name("id"), "want number or string, found %s", kind)
		return ""
	}
	if id == "" {
		f.fail(v.off, f.name("id"), "empty")
	}
	return id
}

// text returns a string member; required ones must not be blank.
func (f *taskFields) text(key string, required bool) string {
	v, ok := f.members[key]
	if !ok {
		if required {
			f.fail(f.off, f.name(key), "missing")
		}
		return ""
	}
	if kind := jsonKind(v.raw); kind != "string" {
		f.fail(v.off, f.name(key), "want string, found %s", kind)
		return ""
	}
	var s string
	_ = json.Unmarshal(v.raw, &s)
	if required && strings.TrimSpace(s) == "" {
		f.fail(v.off, f.name(key), "empty")
	}
	return s
}

// list returns an array-of-strings member, each element passed through
// check when it is not nil.
func (f *taskFields) list(key string, check func(string) (string, error)) []string {
	v, ok := f.members[key]
	if !ok {
		return nil
	}
	if kind := jsonKind(v.raw); kind != "array" {
		f.fail(v.off, f.name(key), "want array of strings, found %s", kind)
		return nil
	}
	var out []string
	err := eachElement(v.raw, v.off, func(i int, e json.RawMessage, eoff int) error {
		field := fmt.Sprintf("%s[%d]", f.name(key), i)
		if kind := jsonKind(e); kind != "string" {
			f.fail(eoff, field, "want string, found %s", kind)
			return nil
		}
		var s string
		_ = json.Unmarshal(e, &s)
		if check != nil {
			var err error
			if s, err = check(s); err != nil {
				f.fail(eoff, field, "%v", err)
			}
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		f.fail(v.off, f.name(key), "%v", err)
	}
	return out
}

// numberText returns a JSON number as text: integer values in plain decimal
// ("1", also for 1.0 or 1e2), anything else as written.
func numberText(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return s
}
