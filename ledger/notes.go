package ledger

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
)

// noteEdits are the tree edits that attach each decision's note to its
// proposal commit in NotesRef. A proposal decided again gets its note
// replaced by the newest decision.
func noteEdits(ctx context.Context, repo *git.Repo, ds []Decision) ([]git.TreeEdit, error) {
	var edits []git.TreeEdit
	for i := range ds {
		d := &ds[i]
		if d.Proposal.IsZero() {
			continue
		}
		blob, err := repo.HashObject(ctx, []byte(d.Note()))
		if err != nil {
			return nil, fmt.Errorf("write note: %w", err)
		}
		p := string(d.Proposal)
		// git may have fanned the notes tree out (ab/cdef...); keep one copy.
		edits = append(edits, git.TreeEdit{Path: p[:2] + "/" + p[2:]}, git.TreeEdit{Path: p, Hash: blob})
	}
	return edits, nil
}

// notesCommit writes edits as a notes commit on top of NotesRef as it is
// now. It returns the update that moves NotesRef to it (compare-and-swap
// against the value read here), or false when there is nothing to note.
func notesCommit(ctx context.Context, repo *git.Repo, edits []git.TreeEdit) (git.RefUpdate, bool, error) {
	if len(edits) == 0 {
		return git.RefUpdate{}, false, nil
	}
	old, err := resolveOrZero(ctx, repo, NotesRef)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	var base git.Hash
	parents := []git.Hash{}
	if !old.IsZero() {
		if base, err = repo.TreeOf(ctx, old, ""); err != nil {
			return git.RefUpdate{}, false, err
		}
		parents = append(parents, old)
	}
	tree, err := repo.EditTree(ctx, base, edits)
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	msg := fmt.Sprintf("git-descent: %d decision notes\n", len(edits)/2)
	c, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: msg})
	if err != nil {
		return git.RefUpdate{}, false, err
	}
	return git.RefUpdate{Ref: NotesRef, Hash: c, OldHash: old}, true, nil
}
