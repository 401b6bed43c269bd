// Package merge is the text merge git runs as git-descent's merge driver
// (`git descent merge-driver`): a three-way merge like git merge-file, with
// same-place insertions kept from both sides and identical edits made once.
// git runs it for library files during the aggregator's merges; the
// aggregation that drives those merges is package aggregate.
package merge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
)

// ErrBinary is returned for input git refuses to merge as text: a NUL byte
// in its first 8000 bytes, git's own test.
var ErrBinary = errors.New("binary file")

// DefaultMarkerSize is the conflict marker length when none is asked for,
// git's default.
const DefaultMarkerSize = 7

// TextRequest is a three-way merge of one file's contents.
type TextRequest struct {
	Ours, Base, Theirs []byte
	// Labels name ours, base and theirs in the conflict markers left in
	// the result; an empty label leaves the marker bare.
	Labels [3]string
	// MarkerSize is the length of the conflict markers left in the
	// result; 0 means DefaultMarkerSize.
	MarkerSize int
}

// TextResult is a merged file. When Conflicts is 0, Merged is the clean
// result; otherwise Merged holds Conflicts regions in diff3 style.
type TextResult struct {
	Merged    []byte
	Conflicts int // conflict regions left in Merged
	Fused     int // conflict regions a fusion rule resolved
}

// MergeText merges like `git merge-file`, then resolves two kinds of
// conflict region by fusion:
//
//   - both sides only inserted at the same place (the base section is
//     empty): keep both, ours first;
//   - both sides made the same edit: keep it once. Edits that differ only
//     in whether the file ends with a newline count as the same, and keep
//     the newline.
//
// Wherever git merges cleanly the result is git's output byte for byte.
// Conflicts left for the user are rendered as `git merge-file --diff3`
// renders them, with req's labels and marker size, each side byte-exact
// (git ends a side that lacks a final newline with one, so the next marker
// starts a line). Fused + Conflicts is the number of conflicts git found.
// Binary input is an error wrapping ErrBinary.
//
// MergeText runs git, logging the command to log at Debug (nil discards);
// it is safe for concurrent use.
func MergeText(ctx context.Context, log *slog.Logger, req TextRequest) (TextResult, error) {
	for _, data := range [][]byte{req.Ours, req.Base, req.Theirs} {
		if git.Binary(data) {
			return TextResult{}, fmt.Errorf("merge text: %w", ErrBinary)
		}
	}
	size := privateMarkerSize(req.Ours, req.Base, req.Theirs)
	out, n, err := git.MergeFile(ctx, log, git.MergeFileRequest{
		Ours:       req.Ours,
		Base:       req.Base,
		Theirs:     req.Theirs,
		Labels:     [3]string{"ours", "base", "theirs"},
		MarkerSize: size,
		Diff3:      true,
	})
	if err != nil {
		return TextResult{}, fmt.Errorf("merge text: %w", err)
	}
	if n == 0 {
		return TextResult{Merged: out}, nil
	}
	segs, err := parseMerge(out, size, [3][]byte{req.Ours, req.Base, req.Theirs})
	if err != nil {
		return TextResult{}, fmt.Errorf("merge text: %w", err)
	}
	// git's exit status counts conflicts but stops at 127.
	if found := countConflicts(segs); found != n && !(n == 127 && found > n) {
		return TextResult{}, fmt.Errorf("merge text: git merge-file reported %d conflicts, output has %d", n, found)
	}
	return fuseSegments(segs, req.Labels, req.MarkerSize), nil
}

// privateMarkerSize is a marker length no input line starts with, so the
// markers in git's output cannot be confused with content.
func privateMarkerSize(texts ...[]byte) int {
	size := 41
	for _, text := range texts {
		for line := range bytes.Lines(text) {
			if n := markerRun(line); n >= size {
				size = n + 1
			}
		}
	}
	return size
}

// markerRun is the number of times the first byte of line repeats at its
// start, if that byte is a conflict marker character; otherwise 0.
func markerRun(line []byte) int {
	if len(line) == 0 || bytes.IndexByte([]byte("<|=>"), line[0]) < 0 {
		return 0
	}
	n := 1
	for n < len(line) && line[n] == line[0] {
		n++
	}
	return n
}

// A textSegment is a stretch of merge output: clean text, or one conflict
// region when conflict is set.
type textSegment struct {
	text     []byte
	conflict *textConflict
}

// A textConflict is one conflict region of a three-way merge.
type textConflict struct {
	sides [3][]byte // ours, base, theirs: byte-exact
	eol   string    // ending of the region's marker lines: "\n", or "\r\n" in CRLF text
}

// Indexes of the sides of a conflict.
const (
	sideOurs = iota
	sideBase
	sideTheirs
)

// Marker kinds, in the order they appear in a diff3 conflict: the marker
// of kind k opens the section of side k, and markEnd closes the region.
const (
	markOurs   = iota // <<<<<<<
	markBase          // |||||||
	markTheirs        // =======
	markEnd           // >>>>>>>
)

// parseMerge splits `git merge-file --diff3` output made with markers of
// length size into clean text and conflicts. inputs are ours, base and
// theirs, needed to undo the newline git adds to a side without one.
func parseMerge(out []byte, size int, inputs [3][]byte) ([]textSegment, error) {
	var segs []textSegment
	var clean []byte
	var cur *textConflict
	in := -1 // the side whose section is being read; -1 outside conflicts
	for line := range bytes.Lines(out) {
		kind := markerKind(line, size)
		switch {
		case kind < 0 && in < 0:
			clean = append(clean, line...)
		case kind < 0:
			cur.sides[in] = append(cur.sides[in], line...)
		case kind != in+1:
			return nil, fmt.Errorf("parse git merge-file output: unexpected conflict marker %q", line)
		case kind == markOurs:
			if len(clean) > 0 {
				segs = append(segs, textSegment{text: clean})
				clean = nil
			}
			cur = &textConflict{eol: lineEnd(line)}
			in = sideOurs
		case kind == markEnd:
			segs = append(segs, textSegment{conflict: cur})
			in = -1
		default:
			in = kind
		}
	}
	if in >= 0 {
		return nil, errors.New("parse git merge-file output: unterminated conflict")
	}
	if len(clean) > 0 {
		return append(segs, textSegment{text: clean}), nil
	}
	if len(segs) > 0 {
		return segs, segs[len(segs)-1].conflict.trimAddedNewlines(inputs)
	}
	return segs, nil
}

// markerKind is the kind of conflict marker line is, for markers of length
// size, or -1 when line is content.
func markerKind(line []byte, size int) int {
	if markerRun(line) != size {
		return -1
	}
	if len(line) > size { // a bare marker ends the text
		if c := line[size]; c != ' ' && c != '\r' && c != '\n' {
			return -1
		}
	}
	return bytes.IndexByte([]byte("<|=>"), line[0])
}

// lineEnd is the line ending of a complete line.
func lineEnd(line []byte) string {
	if bytes.HasSuffix(line, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// trimAddedNewlines undoes what git does to a side without a final newline
// whose last line falls in a conflict: it prints the line with the
// marker's line ending so the next marker starts a line. Only a conflict
// that ends the output can hold such a line (a line without a newline ends
// its file, and git prints the text after a region from the sides); such a
// conflict holds the end of every side it has text from.
func (c *textConflict) trimAddedNewlines(inputs [3][]byte) error {
	for i, in := range inputs {
		if len(in) == 0 || in[len(in)-1] == '\n' || len(c.sides[i]) == 0 {
			continue
		}
		side, ok := bytes.CutSuffix(c.sides[i], []byte(c.eol))
		if !ok {
			return fmt.Errorf("parse git merge-file output: conflict side %q lacks the expected line ending", c.sides[i])
		}
		c.sides[i] = side
	}
	return nil
}

// countConflicts is the number of conflict regions in segs.
func countConflicts(segs []textSegment) int {
	n := 0
	for _, s := range segs {
		if s.conflict != nil {
			n++
		}
	}
	return n
}

// fuseSegments resolves the conflicts a fusion rule covers and renders the
// rest with markers of length size (0 means DefaultMarkerSize).
func fuseSegments(segs []textSegment, labels [3]string, size int) TextResult {
	if size <= 0 {
		size = DefaultMarkerSize
	}
	var res TextResult
	var buf bytes.Buffer
	for _, s := range segs {
		switch {
		case s.conflict == nil:
			buf.Write(s.text)
		case s.conflict.fusable():
			buf.Write(s.conflict.fused())
			res.Fused++
		default:
			s.conflict.render(&buf, labels, size)
			res.Conflicts++
		}
	}
	res.Merged = buf.Bytes()
	return res
}

// fusable reports whether a fusion rule resolves c: both sides made the
// same edit, or both only inserted text (the base section is empty). Sides
// that differ only in the final newline of the file count as the same
// edit: git prints them alike, and keeping both would repeat a line.
func (c *textConflict) fusable() bool {
	return len(c.sides[sideBase]) == 0 || c.sameEdit()
}

// sameEdit reports whether ours and theirs are equal as git prints them.
func (c *textConflict) sameEdit() bool {
	return bytes.Equal(c.printed(sideOurs), c.printed(sideTheirs))
}

// fused is the text of a fusable conflict: the edit once, or the union of
// both insertions (unionLines): each side's lines in order, lines both
// inserted once, ours first where they differ. The union ends the way the
// side its last line came from ends (a final line without a newline stays
// so); a common last line ends as theirs does, as in ours-then-theirs.
func (c *textConflict) fused() []byte {
	switch {
	case bytes.Equal(c.sides[sideOurs], c.sides[sideTheirs]):
		return c.sides[sideOurs]
	case c.sameEdit():
		return c.printed(sideOurs)
	}
	out, lastFromOurs, ok := unionLines(c.printed(sideOurs), c.printed(sideTheirs))
	if !ok {
		return append(c.printed(sideOurs), c.sides[sideTheirs]...)
	}
	last := c.sides[sideTheirs]
	if lastFromOurs {
		last = c.sides[sideOurs]
	}
	if len(last) > 0 && last[len(last)-1] != '\n' {
		out = bytes.TrimSuffix(out, []byte(c.eol))
	}
	return out
}

// printed is side i of c as git prints it inside a conflict: with the
// region's line ending added when its last line has none. The result does
// not alias c.
func (c *textConflict) printed(i int) []byte {
	side := bytes.Clone(c.sides[i])
	if len(side) > 0 && side[len(side)-1] != '\n' {
		side = append(side, c.eol...)
	}
	return side
}

// render writes c in diff3 style with markers of length size, byte for
// byte as `git merge-file --diff3` would.
func (c *textConflict) render(buf *bytes.Buffer, labels [3]string, size int) {
	marker := func(ch byte, label string) {
		buf.Write(bytes.Repeat([]byte{ch}, size))
		if label != "" {
			buf.WriteString(" " + label)
		}
		buf.WriteString(c.eol)
	}
	marker('<', labels[0])
	buf.Write(c.printed(sideOurs))
	marker('|', labels[1])
	buf.Write(c.printed(sideBase))
	marker('=', "")
	buf.Write(c.printed(sideTheirs))
	marker('>', labels[2])
}

// RunDriver implements `git descent merge-driver %O %A %B %L %P`: it merges
// the files base (%O), ours (%A) and theirs (%B) with MergeText, replaces
// ours with the result (atomically, keeping its mode) and returns the
// number of conflicts left, which git expects as the exit status: 0 when
// clean, non-zero when conflicts remain. markerSize is %L (0 means
// DefaultMarkerSize); path (%P, may be empty) names the file in labels and
// errors. It logs the git command it runs to log at Debug (nil discards).
func RunDriver(ctx context.Context, log *slog.Logger, base, ours, theirs string, markerSize int, path string) (conflicts int, err error) {
	name := path
	if name == "" {
		name = ours
	}
	var texts [3][]byte
	for i, file := range []string{ours, base, theirs} {
		if texts[i], err = os.ReadFile(file); err != nil {
			return 0, fmt.Errorf("merge %q: %w", name, err)
		}
	}
	res, err := MergeText(ctx, log, TextRequest{
		Ours:       texts[0],
		Base:       texts[1],
		Theirs:     texts[2],
		Labels:     driverLabels(path),
		MarkerSize: markerSize,
	})
	if err != nil {
		return 0, fmt.Errorf("merge %q: %w", name, err)
	}
	if err := replaceFile(ours, res.Merged); err != nil {
		return 0, fmt.Errorf("merge %q: %w", name, err)
	}
	return res.Conflicts, nil
}

// driverLabels are the conflict labels for the file at path.
func driverLabels(path string) [3]string {
	labels := [3]string{"ours", "base", "theirs"}
	if path != "" {
		for i := range labels {
			labels[i] += ":" + path
		}
	}
	return labels
}

// replaceFile replaces the contents of file with data through a temporary
// file in the same directory and a rename, keeping file's permissions.
func replaceFile(file string, data []byte) error {
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".descent-merge-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(info.Mode().Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// TreeRequest is the merge of theirs into ours through git-descent's merge
// driver: MergeTree runs the driver's text merge (MergeText) in process
// for the files git would give to the driver, where it can be sure to.
func TreeRequest(ours, theirs git.Hash) git.MergeTreeRequest {
	return git.MergeTreeRequest{Ours: ours, Theirs: theirs, Driver: hooks.DriverName, DriverCommand: hooks.DriverCommand, Text: inProcess}
}

// inProcess is the driver's merge of one file, as RunDriver would make it
// with git's default marker size.
func inProcess(ctx context.Context, path string, base, ours, theirs []byte) ([]byte, bool, error) {
	res, err := MergeText(ctx, nil, TextRequest{Ours: ours, Base: base, Theirs: theirs, Labels: driverLabels(path)})
	if err != nil {
		return nil, false, err
	}
	return res.Merged, res.Conflicts == 0, nil
}
