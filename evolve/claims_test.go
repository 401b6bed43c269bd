package evolve

import (
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// The first step to measure a fix claims its tasks: another step's proposal
// fixing only those is a duplicate; a claim holds while its proposal is
// undecided or re-filed, for older snapshots once it is committed, and a
// rejection frees the task.
func TestClaimsLeaveAFixToTheFirstProposal(t *testing.T) {
	c := newClaims()
	if !c.stake("1", 0, []string{"a", "b"}) {
		t.Fatal("the first stake on free tasks was refused")
	}
	if c.stake("2", 0, []string{"a"}) {
		t.Error("a second proposal fixing only a claimed task was not found a duplicate")
	}
	if !c.stake("2", 0, []string{"a", "c"}) {
		t.Error("a proposal that also fixes a free task was found a duplicate")
	}
	if !c.stake("3", 0, nil) {
		t.Error("a proposal that fixes none of its tasks was found a duplicate")
	}
	if !c.claimed("", 0, "a") || c.claimed("1", 0, "b") || c.claimed("", 0, "d") {
		t.Error("claimed: want a claimed, b not against its own step, d free")
	}
	// Step 1's proposal, rebased, fixes b only; step 2's wrote nothing.
	c.written("1", "p1", []string{"b"})
	c.drop("2")
	if c.claimed("", 0, "a") || c.claimed("", 0, "c") || !c.claimed("", 0, "b") {
		t.Fatal("after step 1 wrote a proposal fixing b and step 2 wrote none: want only b claimed")
	}
	c.settle([]ledger.Decision{{Proposal: "p1", Outcome: ledger.Stale}}, 0)
	if !c.claimed("", 0, "b") {
		t.Error("a re-filed proposal's claim went")
	}
	c.settle([]ledger.Decision{{Proposal: "p1", Outcome: ledger.Committed}}, 3)
	if !c.claimed("", 2, "b") || c.claimed("", 3, "b") {
		t.Error("a proposal committed at dev version 3: want b claimed for a snapshot of version 2, free for one of 3")
	}
	c.written("4", "p4", []string{"e"})
	c.settle([]ledger.Decision{{Proposal: "p4", Outcome: ledger.Rejected}, {Proposal: git.Hash("unknown"), Outcome: ledger.Rejected}}, 3)
	if c.claimed("", 0, "e") {
		t.Error("a rejected proposal still claims its task")
	}
}
