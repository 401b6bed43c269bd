package evolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lock is an exclusive hold on one library in one repository for the length
// of a run: a second evolve of the same library fails at once instead of
// racing the first for dev. The kernel releases it if the process dies, so
// a crash never leaves a stale lock. (Across machines, the refs' own
// compare-and-swap is the guard.)
type lock struct{ f *os.File }

// errLocked means another process holds the library.
var errLocked = errors.New("another git-descent evolve is running on this library")

func lockLibrary(descentDir, lib string) (*lock, error) {
	dir := filepath.Join(descentDir, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock library %q: %w", lib, err)
	}
	path := filepath.Join(dir, lib+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock library %q: %w", lib, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(data))
			if holder == "" {
				holder = "unknown"
			}
			return nil, fmt.Errorf("%w (%q, pid %s): wait for it to finish", errLocked, lib, holder)
		}
		return nil, fmt.Errorf("lock library %q: %w", lib, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lock{f: f}, nil
}

// release lets the next run in.
func (l *lock) release() {
	if l == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
