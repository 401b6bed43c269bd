package ledger

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

func TestProposalMessageRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Proposal
	}{
		{
			name: "every field",
			p: Proposal{
				Commit:  "1111111111111111111111111111111111111111",
				Subject: "Check the totals column before answering",
				Body:    "Two failures summed the wrong column.\n\nThe skill now says which column to read.",
				Evidence: Evidence{
					Library: "pdf-audit", Worker: "12",
					Base:         "2222222222222222222222222222222222222222",
					Tasks:        []string{"t-001", "t-017", "invoice/42"},
					RewardBefore: 0.25, RewardAfter: 0.8125,
					Tokens: 1234567890123,
				},
			},
		},
		{
			name: "no body, no tasks, zero numbers",
			p: Proposal{
				Commit:   "3333333333333333333333333333333333333333",
				Subject:  "Reword step 2",
				Evidence: Evidence{Library: "my.lib", Worker: "1", Base: "4444444444444444444444444444444444444444"},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseProposal(c.p.Commit, c.p.Message())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Tasks) == 0 {
				got.Tasks = nil // no tasks, however spelled
			}
			if !reflect.DeepEqual(*got, c.p) {
				t.Errorf("round trip:\n got %+v\nwant %+v\nmessage:\n%s", *got, c.p, c.p.Message())
			}
		})
	}
}

// A proposal's message holds no wall-clock value: the same edit with the
// same evidence made at a fixed date is the same commit.
func TestProposalMessageHasNoTiming(t *testing.T) {
	p := Proposal{Subject: "s", Evidence: Evidence{Library: "l", Worker: "1", Seconds: 61.25}}
	q := p
	q.Seconds = 3
	if p.Message() != q.Message() || strings.Contains(p.Message(), "61.25") {
		t.Errorf("the message depends on the worker's wall time:\n%s", p.Message())
	}
	old := "s\n\nDescent-Library: l\nDescent-Worker: 1\nDescent-Seconds: 61.25\n"
	if got, err := ParseProposal("6666666666666666666666666666666666666666", old); err != nil || got.Seconds != 61.25 {
		t.Errorf("an older proposal's Descent-Seconds reads as %+v, %v", got, err)
	}
}

func TestParseProposalOfOtherCommit(t *testing.T) {
	for _, msg := range []string{
		"Initial commit\n",
		"Fix typo\n\nSigned-off-by: A <a@example.com>\n",
		"Descent-Library: pdf\n", // a subject is not a trailer
	} {
		if p, err := ParseProposal("5555555555555555555555555555555555555555", msg); err == nil {
			t.Errorf("ParseProposal(%q) = %+v, want an error", msg, p)
		} else if !strings.Contains(err.Error(), "5555555") {
			t.Errorf("error %q does not name the commit", err)
		}
	}
}

func TestWriteProposal(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	base := commitFiles(t, ctx, repo, "base", map[string]string{"skills/pdf/SKILL.md": "v1\n", "README": "r\n"})
	baseTree, err := repo.TreeOf(ctx, base, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := "refs/heads/descent/pdf/w/2"

	var commits []git.Hash
	for i, content := range []string{"v2\n", "v3\n"} {
		p := &Proposal{Subject: "set SKILL.md to " + strings.TrimSpace(content), Evidence: Evidence{Library: "pdf", Worker: "2", Base: base, Tasks: []string{"a"}}}
		tree := editTree(t, ctx, repo, baseTree, map[string]string{"skills/pdf/SKILL.md": content})
		if err := WriteProposal(ctx, repo, p, tree); err != nil {
			t.Fatalf("proposal %d: %v", i+1, err)
		}
		if p.Commit.IsZero() {
			t.Fatalf("proposal %d: Commit not filled in", i+1)
		}
		if got := resolve(t, ctx, repo, ref); got != p.Commit {
			t.Fatalf("proposal %d: %s = %s, want %s", i+1, ref, got, p.Commit)
		}
		parents, err := repo.Parents(ctx, p.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(parents, []git.Hash{base}) {
			t.Errorf("proposal %d: parents %v, want [base %s]", i+1, parents, base)
		}
		if got, err := repo.TreeOf(ctx, p.Commit, ""); err != nil || got != tree {
			t.Errorf("proposal %d: tree %s (%v), want %s", i+1, got, err, tree)
		}
		back, err := ReadProposal(ctx, repo, p.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Errorf("proposal %d: read back %+v, want %+v", i+1, back, p)
		}
		commits = append(commits, p.Commit)
	}
	// The second write moved the branch from the first proposal: the
	// reflog shows both updates, newest first.
	if got := gittest.Reflog(t, repo, ref); !reflect.DeepEqual(got, []git.Hash{commits[1], commits[0]}) {
		t.Errorf("reflog of %s: %v, want %v newest first", ref, got, commits)
	}
}

// SetRef is the compare-and-swap every ledger write relies on: a writer that
// read a ref before another moved it must lose, and leave the ref alone.
func TestSetRefCompareAndSwap(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	a := commitFiles(t, ctx, repo, "a", map[string]string{"f": "a\n"})
	b := commitFiles(t, ctx, repo, "b", map[string]string{"f": "b\n"}, a)
	c := commitFiles(t, ctx, repo, "c", map[string]string{"f": "c\n"}, b)
	const ref = "refs/heads/descent/pdf/w/1"
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: ref, Hash: a}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		old     git.Hash
		lost    bool
		wantRef git.Hash
	}{
		{"zero old on an existing ref", "", true, a},
		{"ZeroHash old on an existing ref", git.ZeroHash, true, a},
		{"stale old", b, true, a},
		{"current old", a, false, c},
		{"old value after it moved", a, true, c},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := repo.SetRef(ctx, git.SetRefRequest{Ref: ref, Hash: c, OldHash: tc.old})
			var rc *git.RefChangedError
			if tc.lost != errors.As(err, &rc) {
				t.Fatalf("SetRef(old %q) = %v, want lost=%v", tc.old, err, tc.lost)
			}
			if !tc.lost && err != nil {
				t.Fatal(err)
			}
			if tc.lost && rc.Ref != ref {
				t.Errorf("RefChangedError.Ref = %q, want %q", rc.Ref, ref)
			}
			if got := resolve(t, ctx, repo, ref); got != tc.wantRef {
				t.Errorf("%s = %s, want %s", ref, got, tc.wantRef)
			}
		})
	}
}
