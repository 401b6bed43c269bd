package git

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// readRef resolves a full ref name in process, as git's files backend
// stores it: the loose file under the git directory, else its line in
// packed-refs. ok is false when the name or the repository is one only git
// should resolve (a symbolic ref, a per-worktree ref, a name with revision
// syntax, the reftable backend): the caller asks git then. Unlike
// `rev-parse --verify`, it does not check that the object exists; every
// reader of the object does.
func (r *Repo) readRef(name string) (h Hash, ok bool, err error) {
	if !inProcessRef(name) || r.reftable() {
		return "", false, nil
	}
	data, err := os.ReadFile(filepath.Join(r.gitDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		line := strings.TrimSpace(string(data))
		if strings.HasPrefix(line, "ref:") {
			return "", false, nil // symbolic: git follows it
		}
		h, err := parseHash([]byte(line))
		if err != nil {
			return "", false, nil // something git may know better
		}
		return h, true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
	default:
		return "", false, nil
	}
	packed, err := r.packed.read(filepath.Join(r.gitDir, "packed-refs"))
	if err != nil {
		return "", false, nil
	}
	if h, found := packed[name]; found {
		return h, true, nil
	}
	return "", true, ErrRefNotFound
}

// inProcessRef reports a ref name readRef may resolve: under the shared
// namespaces git-descent reads (never per-worktree ones), made only of
// characters git allows, without revision syntax.
func inProcessRef(name string) bool {
	shared := false
	for _, p := range []string{"refs/heads/", "refs/descent/", "refs/notes/", "refs/tags/", "refs/remotes/"} {
		shared = shared || strings.HasPrefix(name, p)
	}
	if !shared || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") || strings.Contains(name, "/.") {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c == 0x7f || strings.ContainsRune(`~^:?*[\`, c) {
			return false
		}
	}
	return true
}

// reftable reports a repository whose refs git keeps in a reftable, which
// only git reads.
func (r *Repo) reftable() bool {
	r.reftableOnce.Do(func() {
		_, err := os.Stat(filepath.Join(r.gitDir, "reftable"))
		r.isReftable = err == nil
	})
	return r.isReftable
}

// packedRefs caches the parsed packed-refs file, re-read whenever its
// size, modification time or inode changes (git replaces it by rename).
type packedRefs struct {
	mu   sync.Mutex
	key  [4]int64
	refs map[string]Hash
}

func (p *packedRefs) read(path string) (map[string]Hash, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := [4]int64{fi.Size(), fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		key[2], key[3] = int64(st.Ino), st.Ctim.Nano()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refs != nil && p.key == key {
		return p.refs, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	refs := map[string]Hash{}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, name, found := strings.Cut(line, " ")
		if h, err := parseHash([]byte(hash)); found && err == nil {
			refs[name] = h
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	p.key, p.refs = key, refs
	return refs, nil
}
