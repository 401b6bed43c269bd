package merge

import (
	"bytes"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// maxUnionLines bounds the distinct lines unionLines handles: go-diff maps
// each distinct line to one rune.
const maxUnionLines = 50000

// unionLines merges two insertions made at the same place: the result holds
// every line of ours and of theirs in their own order, and the lines they
// have in common (a longest common subsequence, found with go-diff) once.
// Where they differ, ours comes first. Both inputs end with a line ending.
// ok is false when the texts are too large to diff; the caller then keeps
// both whole.
func unionLines(ours, theirs []byte) (out []byte, lastFromOurs bool, ok bool) {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // exact, however long: inputs are one conflict region
	r1, r2, lines := dmp.DiffLinesToRunes(string(ours), string(theirs))
	if len(lines) > maxUnionLines {
		return nil, false, false
	}
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(r1, r2, false), lines)
	var buf bytes.Buffer
	var onlyOurs, onlyTheirs bytes.Buffer
	flush := func() {
		if onlyOurs.Len() > 0 {
			lastFromOurs = true
		}
		if onlyTheirs.Len() > 0 {
			lastFromOurs = false
		}
		buf.Write(onlyOurs.Bytes())
		buf.Write(onlyTheirs.Bytes())
		onlyOurs.Reset()
		onlyTheirs.Reset()
	}
	for _, d := range diffs {
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			onlyOurs.WriteString(d.Text)
		case diffmatchpatch.DiffInsert:
			onlyTheirs.WriteString(d.Text)
		case diffmatchpatch.DiffEqual:
			flush()
			buf.WriteString(d.Text)
			lastFromOurs = false
		}
	}
	flush()
	return buf.Bytes(), lastFromOurs, true
}
