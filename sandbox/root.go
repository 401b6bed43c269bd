package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// tmpfsMagic is the file system type statfs reports for tmpfs.
const tmpfsMagic = 0x01021994

// minTmpfsFree is the free space below which a tmpfs is not used for
// workspaces: they live in memory.
const minTmpfsFree = 1 << 30

// shm is where Linux mounts a tmpfs for every user.
var shm = "/dev/shm"

// WorkspaceRoot is where rollout workspaces go when the library names no
// other place: $TMPDIR when the user set it; else a directory of the user's
// own on tmpfs (/dev/shm/git-descent-<uid>) when there is one with at least
// 1 GiB free, since a rollout creates and deletes a tree of files and, on a
// disk, file creation after many deletions is slow; else the system
// temporary directory. It is decided once per process and safe for
// concurrent use.
func WorkspaceRoot() string { return rootOnce() }

var rootOnce = sync.OnceValue(func() string {
	dir, ok := "", false
	if os.Getenv("TMPDIR") == "" {
		dir, ok = tmpfsRoot(shm)
	}
	if !ok {
		dir = os.TempDir()
	}
	CleanDead(dir)
	return dir
})

// tmpfsRoot returns the user's directory under mount when mount is a
// writable tmpfs with room.
func tmpfsRoot(mount string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(mount, &st); err != nil || int64(st.Type) != tmpfsMagic {
		return "", false
	}
	if int64(st.Bavail)*int64(st.Bsize) < minTmpfsFree {
		return "", false
	}
	dir := filepath.Join(mount, fmt.Sprintf("git-descent-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false
	}
	// A directory another user made first is not ours to use.
	if fi, err := os.Stat(dir); err != nil || !owned(fi) {
		return "", false
	}
	return dir, true
}

func owned(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}

// CleanDead removes the workspaces under root that git-descent processes no
// longer running left behind (killed before they could remove them: their
// prompts, expected answers and agents' files; on tmpfs they would also
// hold memory until the next boot). A workspace's name starts with
// "descent-" and carries the id of the process that made it (see
// NewWorkspace); nothing else under root is touched.
func CleanDead(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "descent-") {
			continue
		}
		if pid, ok := maker(e.Name()); ok && pid != os.Getpid() && !running(pid) {
			(&Workspace{Dir: filepath.Join(root, e.Name())}).Remove()
		}
	}
}

// maker reads the process id from a workspace name "<pattern>p<pid>-<rand>".
func maker(name string) (int, bool) {
	i := strings.LastIndex(name, "-p")
	if i < 0 {
		return 0, false
	}
	rest := name[i+2:]
	j := strings.IndexByte(rest, '-')
	if j <= 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:j])
	return pid, err == nil && pid > 0
}

// running reports whether a process with that id exists (EPERM: it does,
// and is another user's).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
