package evolve

import (
	"fmt"
	"os"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/rollout"
)

// CacheUsage is what a library's rollout cache holds.
type CacheUsage struct {
	Records int   // cached rollouts
	Bytes   int64 // their size on disk
}

// ClearCache deletes a library's rollout cache, holding the library's lock
// so that no evolve is writing to it meanwhile, and returns what it held.
// The cache is only a cache: the next run rolls out again what it needs.
func ClearCache(repo *git.Repo, lib *library.Library) (CacheUsage, error) {
	l, err := lockLibrary(repo.DescentDir(), lib.Name)
	if err != nil {
		return CacheUsage{}, fmt.Errorf("clear the cache of %q: %w", lib.Name, err)
	}
	defer l.release()
	dir := CacheDir(repo, lib)
	var u CacheUsage
	if u.Records, u.Bytes, err = rollout.Usage(dir); err != nil {
		return u, fmt.Errorf("clear the cache of %q: %w", lib.Name, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return u, fmt.Errorf("clear the cache of %q: %w", lib.Name, err)
	}
	return u, nil
}
