package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// Heads is where the journal last left dev and stable. git-descent moves
// them only with a journal record (Record keeps Heads), so finding either
// anywhere else means something that is not git-descent moved it — a
// person, or a proposer or agent that reached the repository — and nothing
// it put there passed a gate (decision 60).
type Heads struct {
	Dev    git.Hash `json:"dev"`
	Stable git.Hash `json:"stable"`
}

// MovedError is dev or stable found where the journal did not leave it.
type MovedError struct {
	Library   string
	Ref       string
	Want, Got git.Hash // Got zero: the ref was deleted
}

func (e *MovedError) Error() string {
	if e.Got.IsZero() {
		return fmt.Sprintf("%s was deleted outside git-descent (the journal left it at %s)\n  put it back:  git update-ref %s %s",
			Short(e.Ref), e.Want.Short(), e.Ref, e.Want)
	}
	return fmt.Sprintf("%s was moved outside git-descent: the journal left it at %s, it is now %s, and no gate passed that\n"+
		"  see what changed:  git log %s..%s\n"+
		"  put it back:       git update-ref %s %s %s\n"+
		"  or, if you moved it yourself, keep it:  git descent keep %s",
		Short(e.Ref), e.Want.Short(), e.Got.Short(), e.Want.Short(), e.Got.Short(), e.Ref, e.Want, e.Got, e.Library)
}

// CheckHeads returns a *MovedError when dev or stable is not where the
// journal at head left it. A journal written before Heads existed has none
// to check.
func CheckHeads(ctx context.Context, repo *git.Repo, library string, head JournalHead) error {
	moved, err := movedHeads(ctx, repo, library, head)
	if err != nil || len(moved) == 0 {
		return err
	}
	return &moved[0]
}

// movedHeads returns dev and stable, those of them that are not where the
// journal at head left them, dev first.
func movedHeads(ctx context.Context, repo *git.Repo, library string, head JournalHead) ([]MovedError, error) {
	refs := Refs{library}
	var moved []MovedError
	for _, h := range []struct {
		ref  string
		want git.Hash
	}{{refs.Dev(), head.State.Heads.Dev}, {refs.Stable(), head.State.Heads.Stable}} {
		if h.want.IsZero() {
			continue
		}
		got, err := resolveOrZero(ctx, repo, h.ref)
		if err != nil {
			return nil, err
		}
		if got != h.want {
			moved = append(moved, MovedError{Library: library, Ref: h.ref, Want: h.want, Got: got})
		}
	}
	return moved, nil
}

// heads is where e leaves dev and stable, on top of head: its moves
// applied. A journal without Heads (written by an earlier version) takes
// the refs as they are, once.
func (j *Journal) heads(ctx context.Context, head JournalHead, e Entry) (Heads, error) {
	h := head.State.Heads
	for _, m := range e.Moves {
		switch m.Ref {
		case j.refs.Dev():
			h.Dev = m.To
		case j.refs.Stable():
			h.Stable = m.To
		}
	}
	var err error
	if h.Dev.IsZero() {
		h.Dev, err = resolveOrZero(ctx, j.repo, j.refs.Dev())
	}
	if err == nil && h.Stable.IsZero() {
		h.Stable, err = resolveOrZero(ctx, j.repo, j.refs.Stable())
	}
	for _, x := range []*git.Hash{&h.Dev, &h.Stable} {
		if x.IsZero() {
			*x = "" // not created yet
		}
	}
	return h, err
}

// Kept is a ref Keep recorded where it found it.
type Kept struct {
	Ref      string
	From, To git.Hash // where the journal had left it, and where it is
}

// Keep records dev and stable where they are now, for when a person moved
// them on purpose (git update-ref, git branch -f): one journal record whose
// moves leave each where it is, so CheckHeads accepts it from then on. The
// versions the journal had left them at stay reachable from it. A deleted
// ref cannot be kept. It returns what it kept (nothing when both are where
// the journal left them).
func Keep(ctx context.Context, repo *git.Repo, library string) ([]Kept, error) {
	j := OpenJournal(repo, library)
	head, err := j.Head(ctx)
	if err != nil {
		return nil, err
	}
	moved, err := movedHeads(ctx, repo, library, head)
	if err != nil {
		return nil, err
	}
	var kept []Kept
	var moves []Move
	var keep []git.Hash
	var msg []string
	for _, m := range moved {
		if m.Got.IsZero() {
			return nil, &m
		}
		kept = append(kept, Kept{Ref: m.Ref, From: m.Want, To: m.Got})
		moves = append(moves, Move{Ref: m.Ref, From: m.Got, To: m.Got})
		keep = append(keep, m.Want)
		msg = append(msg, fmt.Sprintf("%s at %s (was %s)", Short(m.Ref), m.Got.Short(), m.Want.Short()))
	}
	if len(kept) == 0 {
		return nil, nil
	}
	e := Entry{State: head.State, Moves: moves, Keep: keep,
		Message: fmt.Sprintf("descent(%s): keep %s, moved outside git-descent\n", library, strings.Join(msg, " and "))}
	if _, err := j.Record(ctx, head, e); err != nil {
		return nil, err
	}
	return kept, nil
}
