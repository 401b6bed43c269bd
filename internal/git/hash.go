package git

import (
	"errors"
	"fmt"
	"strings"
)

// Hash is a full hexadecimal object name. The zero value means "none".
type Hash string

// ZeroHash is git's all-zero object name, which update-ref reads as "the ref
// must not exist".
const ZeroHash Hash = "0000000000000000000000000000000000000000"

// IsZero reports whether h names no object.
func (h Hash) IsZero() bool { return h == "" || h == ZeroHash }

// Short is the first 7 characters of h, for display.
func (h Hash) Short() string {
	if len(h) > 7 {
		return string(h[:7])
	}
	return string(h)
}

func (h Hash) String() string { return string(h) }

func parseHash(out []byte) (Hash, error) {
	s := strings.TrimSpace(string(out))
	if len(s) != 40 && len(s) != 64 {
		return "", fmt.Errorf("expected an object name, got %q", s)
	}
	return Hash(s), nil
}

var (
	// ErrNotRepository means the directory is not inside a git repository.
	ErrNotRepository = errors.New("not a git repository (run git-descent inside one, or pass -C <dir>)")
	// ErrRefNotFound means a ref or revision does not exist.
	ErrRefNotFound = errors.New("ref not found")
	// ErrPathNotFound means a path does not exist in a tree.
	ErrPathNotFound = errors.New("path not found")
)

// RefChangedError is a compare-and-swap ref update that lost: the ref no
// longer had the expected value.
type RefChangedError struct {
	Ref      string // the ref that moved, as git's message names it
	Expected Hash   // the value the update expected; zero: the ref must not exist
	Stderr   string // git's message, in the C locale
}

func (e *RefChangedError) Error() string {
	if e.Expected.IsZero() {
		return fmt.Sprintf("update %s: it already exists (another git-descent may be running): %s", e.Ref, strings.TrimSpace(e.Stderr))
	}
	return fmt.Sprintf("update %s: it moved away from %s (another git-descent may be running): %s", e.Ref, e.Expected.Short(), strings.TrimSpace(e.Stderr))
}

// IsFullHash reports whether h is a whole object name (40 lowercase
// hexadecimal digits), not an abbreviation or a ref.
func IsFullHash(h Hash) bool { return isObjectName(h) }
