// Package eval owns eval tasks: loading them from a library's task file,
// assigning them to train, validation and test splits, and scoring an
// agent's output for one task.
//
// Everything here is pure computation over values except Load (which reads
// one file) and the command scorer (which writes a temporary task file and
// runs the caller's RunFunc). Tasks, Fractions and the scorers returned by
// NewScorer are safe for concurrent use.
package eval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Task is one eval case.
type Task struct {
	ID           string // unique within a library
	Prompt       string
	Expected     string   // expected_output; may be empty
	Files        []string // input files, paths relative to the library root (slash-separated)
	Expectations []string // statements a grader checks; may be empty
	Source       string   // where it was defined, "evals/evals.json:12" (file as given, line), for messages
}

// Hash returns the hex SHA-256 of a canonical encoding of the task's
// content: ID, Prompt, Expected, Files and Expectations, in that order.
// Source is not included, so moving a task within its file keeps its hash;
// changing any content field changes it. A nil and an empty list hash the
// same. The encoding is length-prefixed, so no two different tasks share
// an encoding.
func (t Task) Hash() string {
	h := sha256.New()
	h.Write([]byte("git-descent eval.Task v1\x00"))
	for _, s := range []string{t.ID, t.Prompt, t.Expected} {
		writeString(h, s)
	}
	for _, list := range [][]string{t.Files, t.Expectations} {
		writeLength(h, len(list))
		for _, s := range list {
			writeString(h, s)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeString(h hash.Hash, s string) {
	writeLength(h, len(s))
	h.Write([]byte(s))
}

func writeLength(h hash.Hash, n int) {
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// Solved is the reward at which a task counts as passed: a rollout that
// scores it needs no proposal, and the gate counts it as a pass.
const Solved = 0.999
