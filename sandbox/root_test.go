package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTmpfsRoot(t *testing.T) {
	if dir, ok := tmpfsRoot(t.TempDir()); ok {
		// Only when the test's temporary directory is itself a tmpfs.
		if !strings.HasPrefix(dir, os.TempDir()) {
			t.Fatalf("tmpfsRoot = %q outside the mount", dir)
		}
	}
	if _, err := os.Stat(shm); err != nil {
		t.Skipf("no %s here", shm)
	}
	dir, ok := tmpfsRoot(shm)
	if !ok {
		t.Skipf("%s is not a tmpfs with room here", shm)
	}
	if filepath.Dir(dir) != shm {
		t.Fatalf("tmpfsRoot(%s) = %q", shm, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || !owned(fi) {
		t.Fatalf("%s: %v, owned %v", dir, err, err == nil && owned(fi))
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, ok := tmpfsRoot(shm); ok {
		t.Fatal("a directory others can write is used")
	}
}

func TestNotTmpfs(t *testing.T) {
	if _, ok := tmpfsRoot("/proc"); ok {
		t.Fatal("/proc taken for a tmpfs")
	}
}

func TestCleanDeadRemovesOnlyTheDeads(t *testing.T) {
	root := t.TempDir()
	mine, err := NewWorkspace(root, "descent-rollout-")
	if err != nil {
		t.Fatal(err)
	}
	// A process that has exited: a child that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(root, fmt.Sprintf("descent-rollout-p%d-123", dead.Process.Pid))
	other := filepath.Join(root, "not-a-workspace")
	notOurs := filepath.Join(root, fmt.Sprintf("build-p%d-123", dead.Process.Pid))
	for _, d := range []string{gone, other, notOurs} {
		if err := os.MkdirAll(filepath.Join(d, "ws"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	CleanDead(root)
	for dir, want := range map[string]bool{mine.Dir: true, gone: false, other: true, notOurs: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	if pid, ok := maker(filepath.Base(mine.Dir)); !ok || pid != os.Getpid() {
		t.Errorf("maker(%s) = %d, %v", filepath.Base(mine.Dir), pid, ok)
	}
}
