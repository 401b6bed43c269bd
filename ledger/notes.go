package ledger

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
)

// writeNotes attaches each decision's note to its proposal commit in
// NotesRef, as one notes commit (compare-and-swap, retried when another
// writer moved the notes ref in between). A proposal decided again gets its
// note replaced by the newest decision.
func writeNotes(ctx context.Context, repo *git.Repo, ds []Decision) error {
	var edits []git.TreeEdit
	for i := range ds {
		d := &ds[i]
		if d.Proposal.IsZero() {
			continue
		}
		blob, err := repo.HashObject(ctx, []byte(d.Note()))
		if err != nil {
			return fmt.Errorf("write note: %w", err)
		}
		p := string(d.Proposal)
		// git may have fanned the notes tree out (ab/cdef...); keep one copy.
		edits = append(edits, git.TreeEdit{Path: p[:2] + "/" + p[2:]}, git.TreeEdit{Path: p, Hash: blob})
	}
	if len(edits) == 0 {
		return nil
	}
	const attempts = 5
	var err error
	for i := 0; i < attempts; i++ {
		if err = writeNotesOnce(ctx, repo, edits, len(edits)/2); err == nil {
			return nil
		}
		if _, lost := err.(*git.RefChangedError); !lost {
			break
		}
	}
	return fmt.Errorf("write notes to %s: %w", NotesRef, err)
}

func writeNotesOnce(ctx context.Context, repo *git.Repo, edits []git.TreeEdit, n int) error {
	old, err := resolveOrZero(ctx, repo, NotesRef)
	if err != nil {
		return err
	}
	var base git.Hash
	parents := []git.Hash{}
	if !old.IsZero() {
		if base, err = repo.TreeOf(ctx, old, ""); err != nil {
			return err
		}
		parents = append(parents, old)
	}
	tree, err := repo.EditTree(ctx, base, edits)
	if err != nil {
		return err
	}
	c, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: fmt.Sprintf("git-descent: %d decision notes\n", n)})
	if err != nil {
		return err
	}
	return repo.SetRef(ctx, git.SetRefRequest{Ref: NotesRef, Hash: c, OldHash: old, Reason: "git-descent: notes"})
}
