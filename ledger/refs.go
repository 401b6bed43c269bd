// Package ledger is git-descent's record of a run, kept in git refs: the dev
// and stable branches, the worker branches holding proposals, the journal of
// decisions, and the notes that show those decisions in `git log`.
//
// Every ref update is a compare-and-swap, so a crash at any instant leaves
// refs the next run resumes from, and two aggregators can never silently
// overwrite each other.
package ledger

import (
	"fmt"
	"strconv"
)

// Refs names the refs of one library.
type Refs struct{ Library string }

// Dev is the branch of accepted proposals.
func (r Refs) Dev() string { return "refs/heads/descent/" + r.Library + "/dev" }

// Stable is the branch fast-forwarded to dev once dev has held up.
func (r Refs) Stable() string { return "refs/heads/descent/" + r.Library + "/stable" }

// Worker is the branch holding a worker's latest proposal.
func (r Refs) Worker(id string) string { return "refs/heads/descent/" + r.Library + "/w/" + id }

// WorkerPrefix is the prefix of all worker branches of the library.
func (r Refs) WorkerPrefix() string { return "refs/heads/descent/" + r.Library + "/w/" }

// Journal is the aggregator's private record of decisions and state.
func (r Refs) Journal() string { return "refs/descent/" + r.Library + "/journal" }

// Short strips refs/heads/ for display: what a user types to `git log`.
func Short(ref string) string {
	const p = "refs/heads/"
	if len(ref) > len(p) && ref[:len(p)] == p {
		return ref[len(p):]
	}
	return ref
}

// NotesRef holds a note on every decided proposal commit; show them with
// `git log --notes=descent`.
const NotesRef = "refs/notes/descent"

// WorkerID names worker i (counting from 1).
func WorkerID(i int) string { return fmt.Sprint(i) }

// WorkerLess orders worker ids numerically when both are numbers (so w10
// comes after w9), else as strings.
func WorkerLess(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x < y
	}
	return a < b
}
