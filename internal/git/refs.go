package git

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ResolveRef returns the object a ref or revision names. It returns
// ErrRefNotFound when it does not exist.
func (r *Repo) ResolveRef(ctx context.Context, rev string) (Hash, error) {
	if h, ok, err := r.readRef(rev); ok {
		if errors.Is(err, ErrRefNotFound) {
			return "", fmt.Errorf("%s: %w", rev, err)
		}
		return h, err
	}
	// "^{object}" makes git check that the object exists; after a colon
	// (commit:path) it would be read as part of the path.
	spec := rev
	if !strings.Contains(rev, ":") && !strings.HasSuffix(rev, "}") {
		spec += "^{object}"
	}
	out, err := r.run(ctx, cmd{}, "rev-parse", "--verify", "--quiet", "--end-of-options", spec)
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && ce.ExitCode == 1 {
			return "", fmt.Errorf("%s: %w", rev, ErrRefNotFound)
		}
		return "", err
	}
	return parseHash(out)
}

// Head returns the commit HEAD points at.
func (r *Repo) Head(ctx context.Context) (Hash, error) {
	h, err := r.ResolveRef(ctx, "HEAD")
	if errors.Is(err, ErrRefNotFound) {
		return "", errors.New("HEAD has no commit yet: commit your files first")
	}
	return h, err
}

// SetRefRequest is a compare-and-swap update of one ref.
type SetRefRequest struct {
	Ref     string // full ref name, e.g. refs/heads/descent/x/dev
	Hash    Hash   // new value
	OldHash Hash   // expected current value; zero means the ref must not exist
	Reason  string // reflog message
}

// SetRef updates a ref only if it still has the expected old value. A lost
// race is a *RefChangedError.
func (r *Repo) SetRef(ctx context.Context, req SetRefRequest) error {
	old := req.OldHash
	if old == "" {
		old = ZeroHash
	}
	args := []string{"update-ref", "--create-reflog"}
	if req.Reason != "" {
		args = append(args, "-m", req.Reason)
	}
	args = append(args, req.Ref, string(req.Hash), string(old))
	_, err := r.run(ctx, cmd{}, args...)
	var ce *CommandError
	if errors.As(err, &ce) {
		if ref, lost := refChanged(ce.Stderr); lost {
			if ref == "" {
				ref = req.Ref
			}
			return &RefChangedError{Ref: ref, Expected: req.OldHash, Stderr: ce.Stderr}
		}
	}
	return err
}

// lockRefMessage is how update-ref starts every refusal to move a ref: the
// old value differs, the ref exists or is missing, or another writer holds
// its lock.
var lockRefMessage = regexp.MustCompile(`cannot lock ref '([^']+)'`)

// refChanged reports whether update-ref's stderr says a compare-and-swap
// lost, and which ref it names ("" when the message names none). git runs
// in the C locale (gitEnv), so these English messages are the only ones to
// expect.
func refChanged(stderr string) (ref string, lost bool) {
	if m := lockRefMessage.FindStringSubmatch(stderr); m != nil {
		return m[1], true
	}
	for _, s := range []string{"but expected", "reference already exists", "unable to resolve reference"} {
		if strings.Contains(stderr, s) {
			return "", true
		}
	}
	return "", false
}

// Ref is a ref and the object it points at.
type Ref struct {
	Name string
	Hash Hash
}

// ListRefs returns the refs under prefix (e.g. "refs/heads/descent/"),
// sorted by name.
func (r *Repo) ListRefs(ctx context.Context, prefix string) ([]Ref, error) {
	out, err := r.run(ctx, cmd{}, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		h, name, _ := strings.Cut(line, " ")
		refs = append(refs, Ref{Name: name, Hash: Hash(h)})
	}
	return refs, nil
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b Hash) (bool, error) {
	_, code, err := r.runCode(ctx, cmd{okCodes: []int{1}}, "merge-base", "--is-ancestor", string(a), string(b))
	if err != nil {
		return false, err
	}
	return code == 0, nil
}

// MergeBase returns the best common ancestor of a and b, or the zero hash
// when they share none.
func (r *Repo) MergeBase(ctx context.Context, a, b Hash) (Hash, error) {
	out, code, err := r.runCode(ctx, cmd{okCodes: []int{1}}, "merge-base", string(a), string(b))
	if err != nil || code == 1 {
		return ZeroHash, err
	}
	return Hash(strings.TrimSpace(string(out))), nil
}

// literal turns paths into literal pathspecs, so that no character in a
// user's path is read as pathspec magic.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}
