package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunCapturesOutputAndStdin(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "cat; echo err >&2", Stdin: []byte("hello"), Env: Environ(nil, nil, "")})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "hello" || strings.TrimSpace(string(res.Stderr)) != "err" {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func TestRunExitError(t *testing.T) {
	_, err := Run(context.Background(), Spec{Command: "echo boom >&2; exit 3", Env: Environ(nil, nil, "")})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 3 || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunCapsOutput(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "yes | head -c 5000", MaxOutput: 100, Env: Environ(nil, nil, "")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 100 || !res.Truncated {
		t.Fatalf("len %d truncated %v", len(res.Stdout), res.Truncated)
	}
}

// A timed-out command's whole process group dies, including a background
// grandchild that would otherwise outlive it.
func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := "sleep 60 & echo $! > " + pidFile + "; wait"
	_, err := Run(context.Background(), Spec{Command: cmd, Timeout: 300 * time.Millisecond, Env: Environ(nil, nil, "")})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(data)) {
		pid = pid*10 + int(c-'0')
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether a process exists and is not a zombie (an orphan
// whose PID 1 does not reap it is dead all the same).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(data))
	return len(f) > 2 && f[2] != "Z"
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := Run(ctx, Spec{Command: "sleep 30", Env: Environ(nil, nil, "")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvironScrubs(t *testing.T) {
	t.Setenv("DESCENT_TEST_SECRET", "s3cret")
	t.Setenv("MY_KEY_A", "a")
	env := Environ([]string{"MY_KEY_*"}, map[string]string{"X": "1"}, "/bin:/usr/bin")
	joined := strings.Join(env, "\n")
	if strings.Contains(joined, "s3cret") {
		t.Fatalf("secret leaked: %s", joined)
	}
	for _, want := range []string{"MY_KEY_A=a", "X=1", "PATH=/bin:/usr/bin"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s in %s", want, joined)
		}
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(1)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := l.Acquire(ctx); err == nil {
		t.Fatal("second acquire succeeded past the limit")
	}
	l.Release()
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
}
