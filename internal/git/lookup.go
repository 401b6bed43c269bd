package git

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TreeOf returns the object at path inside a commit or a tree (path "" is
// the root tree). It returns ErrPathNotFound when there is no such path.
//
// Objects never change, so each (object, path) is looked up once per Repo,
// in-process; a name that is not a full object name, or a path git would
// read differently, goes to `git rev-parse`.
func (r *Repo) TreeOf(ctx context.Context, commit Hash, p string) (Hash, error) {
	key := string(commit) + "\x00" + p
	if h, ok := r.paths.Load(key); ok {
		return h.(Hash), nil
	}
	h, err := r.lookPath(commit, p)
	if errors.Is(err, errSlowPath) {
		h, err = r.ResolveRef(ctx, string(commit)+":"+p)
		if errors.Is(err, ErrRefNotFound) {
			err = fmt.Errorf("%q in %s: %w", p, commit.Short(), ErrPathNotFound)
		}
	}
	if err == nil {
		r.paths.Store(key, h)
	}
	return h, err
}

// errSlowPath sends a lookup the in-process reader does not handle to git.
var errSlowPath = errors.New("look it up with git")

// lookPath finds p below obj with go-git.
func (r *Repo) lookPath(obj Hash, p string) (Hash, error) {
	if !isObjectName(obj) || (p != "" && (path.Clean(p) != p || strings.HasPrefix(p, "/") || p == ".")) {
		return "", errSlowPath
	}
	var out Hash
	err := r.withGoGit(func(gg *gogit.Repository) error {
		tree, err := rootTree(gg, plumbing.NewHash(string(obj)))
		if err != nil {
			return err
		}
		if p == "" {
			out = Hash(tree.Hash.String())
			return nil
		}
		e, err := tree.FindEntry(p)
		if err != nil {
			return fmt.Errorf("%q in %s: %w", p, obj.Short(), ErrPathNotFound)
		}
		out = Hash(e.Hash.String())
		return nil
	})
	switch {
	case errors.Is(err, ErrPathNotFound):
		return "", err
	case err != nil:
		return "", errSlowPath // git says what is wrong
	}
	return out, nil
}

// rootTree is obj's tree: obj itself, or a commit's.
func rootTree(gg *gogit.Repository, obj plumbing.Hash) (*object.Tree, error) {
	o, err := gg.Storer.EncodedObject(plumbing.AnyObject, obj)
	if err != nil {
		return nil, err
	}
	switch o.Type() {
	case plumbing.TreeObject:
		return object.DecodeTree(gg.Storer, o)
	case plumbing.CommitObject:
		c, err := object.DecodeCommit(gg.Storer, o)
		if err != nil {
			return nil, err
		}
		return c.Tree()
	}
	return nil, fmt.Errorf("%s is a %s", obj, o.Type())
}

// isObjectName reports whether s is a full hexadecimal object name.
func isObjectName(h Hash) bool {
	if len(h) != 40 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
