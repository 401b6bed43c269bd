package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// RefUpdate is one compare-and-swap in a transaction.
type RefUpdate struct {
	Ref     string // full ref name
	Hash    Hash   // new value
	OldHash Hash   // expected current value; zero means the ref must not exist
}

// UpdateRefsRequest is a set of ref updates made all together or not at
// all.
type UpdateRefsRequest struct {
	Updates []RefUpdate
	Reason  string // reflog message of every update
}

// UpdateRefs applies every update of req in one `git update-ref --stdin`
// transaction (start, prepare, commit): either all refs move or none does,
// whatever instant the process dies. A ref whose current value is not the
// expected one aborts the transaction with a *RefChangedError naming it
// when git does.
func (r *Repo) UpdateRefs(ctx context.Context, req UpdateRefsRequest) error {
	if len(req.Updates) == 0 {
		return nil
	}
	var in strings.Builder
	in.WriteString("start\n")
	for _, u := range req.Updates {
		if strings.ContainsAny(u.Ref, " \n\x00") {
			return fmt.Errorf("update ref %q: not a valid ref name", u.Ref)
		}
		old := u.OldHash
		if old == "" {
			old = ZeroHash
		}
		fmt.Fprintf(&in, "update %s %s %s\n", u.Ref, u.Hash, old)
	}
	in.WriteString("prepare\ncommit\n")
	args := []string{"update-ref", "--create-reflog", "--stdin"}
	if req.Reason != "" {
		args = append(args, "-m", req.Reason)
	}
	_, err := r.run(ctx, cmd{stdin: []byte(in.String())}, args...)
	var ce *CommandError
	if !errors.As(err, &ce) {
		return err
	}
	ref, changed := refChanged(ce.Stderr)
	if !changed {
		return err
	}
	lost := &RefChangedError{Ref: ref, Stderr: ce.Stderr}
	for _, u := range req.Updates {
		if u.Ref == lost.Ref {
			lost.Expected = u.OldHash
		}
	}
	return lost
}
