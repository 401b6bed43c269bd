package ledger

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// FuzzParseProposal reads arbitrary commit messages: never a panic, and
// once a proposal has been written (which puts each value on one line),
// reading and writing it again changes nothing.
func FuzzParseProposal(f *testing.F) {
	f.Add("Add a rule\n\nBody.\n\nDescent-Library: s\nDescent-Worker: 1\nDescent-Base: 0123456789012345678901234567890123456789\nDescent-Tasks: a,b\nDescent-Reward-Before: 0.2500\nDescent-Reward-After: 0.7500\nDescent-Tokens: 12\nDescent-Cost: unknown\nDescent-Agent: run: x\n")
	f.Add("subject only\nDescent-Library: x")
	f.Add("\n\n\nDescent-Library:\n")
	f.Fuzz(func(t *testing.T, msg string) {
		p, err := ParseProposal("0123456789012345678901234567890123456789", msg)
		if err != nil {
			return
		}
		q, err := ParseProposal(p.Commit, p.Message())
		if err != nil {
			return // a library name that writing empties: not a proposal git-descent writes
		}
		r, err := ParseProposal(q.Commit, q.Message())
		if err != nil || !reflect.DeepEqual(r.Evidence, q.Evidence) {
			t.Fatalf("evidence changed in a round trip:\n%+v\n%+v (%v)", q.Evidence, r, err)
		}
	})
}

// FuzzDecision reads arbitrary journal decision files (another machine's
// journal is input too) and renders their notes: never a panic.
func FuzzDecision(f *testing.F) {
	f.Add([]byte(`{"id": "r0001-w1", "library": "s", "worker": "1", "round": 1, "outcome": "committed", "gate": {"accept": true, "p": 0.9}}`))
	f.Add([]byte(`{"outcome": "rejected", "fused_with": ["x"], "train": [1, 2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decision
		if json.Unmarshal(data, &d) != nil {
			return
		}
		_ = d.Note()
		_ = git.Hash(d.ID).Short()
	})
}
