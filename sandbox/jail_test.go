package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// requireBwrap skips t where bubblewrap does not work, and fails it there
// when DESCENT_REQUIRE_BWRAP is set: .ci/run installs bubblewrap and sets
// it, so CI runs these.
func requireBwrap(t *testing.T) {
	t.Helper()
	_, err := probeOnce()
	switch {
	case err != nil && os.Getenv("DESCENT_REQUIRE_BWRAP") != "":
		t.Fatalf("DESCENT_REQUIRE_BWRAP is set but the bwrap level does not work: %v", err)
	case err != nil:
		t.Skipf("bwrap level unavailable: %v", err)
	}
}

func runIn(t *testing.T, j Jail, dir, command string) (Result, error) {
	t.Helper()
	return Run(context.Background(), Spec{Command: command, Dir: dir, Env: Environ(nil, nil, ""), Jail: j, Timeout: 20 * time.Second})
}

// survivors returns the ids of the sleep processes whose argument starts
// with mark (not bwrap's, whose arguments hold the whole script), and kills
// them.
func survivors(t *testing.T, mark string) []int {
	t.Helper()
	pids := sleeping(mark)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}

// A child that leaves the process group with setsid survives the none
// level; under bwrap it dies with its rollout, whether the rollout ends or
// times out, and so does one orphaned by a double fork.
func TestBwrapLeavesNoSurvivors(t *testing.T) {
	requireBwrap(t)
	for i, level := range []string{LevelNone, LevelBwrap} {
		mark := "99" + strconv.Itoa(i) + "." + strconv.Itoa(os.Getpid()) // sleep takes it for a number
		cmd := "setsid sleep " + mark + "1 >/dev/null 2>&1 & (sh -c 'sleep " + mark + "2 >/dev/null 2>&1 &' &); sleep 0.3; echo done"
		res, err := runIn(t, Jail{Level: level}, t.TempDir(), cmd)
		if err != nil || strings.TrimSpace(string(res.Stdout)) != "done" {
			t.Fatalf("%s: %q, %v", level, res.Stdout, err)
		}
		// And one whose rollout timed out.
		spec := Spec{Command: "setsid sleep " + mark + "3 >/dev/null 2>&1 & sleep 30", Dir: t.TempDir(), Env: Environ(nil, nil, ""),
			Jail: Jail{Level: level}, Timeout: 300 * time.Millisecond}
		if _, err := Run(context.Background(), spec); !errors.Is(err, ErrTimeout) {
			t.Fatalf("%s: %v, want a timeout", level, err)
		}
		time.Sleep(200 * time.Millisecond) // the kernel tears a PID namespace down asynchronously
		left := survivors(t, mark)
		switch {
		case level == LevelNone && len(left) != 2:
			t.Errorf("none: %d survivors, want the 2 setsid ones this level cannot stop (is the probe broken?)", len(left))
		case level == LevelBwrap && len(left) != 0:
			t.Errorf("bwrap: processes %v outlived their rollout", left)
		}
	}
}

// A bwrap process sees no other process's /proc entry (git-descent's
// environment with its keys), no file of the user's home, the repository
// or the temporary directories, and writes nowhere but its workspace.
func TestBwrapHidesAndConfines(t *testing.T) {
	requireBwrap(t)
	t.Setenv("DESCENT_JAIL_SECRET", "s3cr3t-"+strconv.Itoa(os.Getpid()))
	repo := t.TempDir()
	secretFile := filepath.Join(repo, ".env")
	if err := os.WriteFile(secretFile, []byte("KEY=hidden\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(repo, "agent.sh")
	if err := os.WriteFile(script, []byte("echo script-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "escaped")
	ws := t.TempDir()
	probe := strings.Join([]string{
		"cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c s3cr3t",
		"cat " + secretFile + " 2>/dev/null || echo no-secret-file",
		"echo x > " + outside + " 2>/dev/null; echo x > /etc/descent-escaped 2>/dev/null || echo no-etc",
		"echo kept > kept",
		"sh " + script,
		"grep -c eth /proc/net/dev",
	}, "; ")
	for _, level := range []string{LevelNone, LevelBwrap} {
		res, err := runIn(t, Jail{Level: level, Hide: []string{repo}}.For("sh "+script, Environ(nil, nil, "")), ws, probe)
		out := string(res.Stdout)
		_, outErr := os.Stat(outside)
		if level == LevelNone {
			// The same probe on the none level finds what bwrap hides: the
			// test can tell the two apart.
			if !strings.Contains(out, "KEY=hidden") || outErr != nil {
				t.Errorf("none: the probe found nothing (%q): it cannot fail", out)
			}
			os.Remove(outside)
			continue
		}
		if err == nil {
			t.Fatalf("bwrap: want the last grep to fail (no network devices), got %q", out)
		}
		want := "0\nno-secret-file\nno-etc\nscript-ran\n0\n"
		if out != want {
			t.Errorf("bwrap: probe printed %q, want %q", out, want)
		}
		if outErr == nil {
			t.Errorf("bwrap: a write outside the workspace reached %s", outside)
		}
		if data, _ := os.ReadFile(filepath.Join(ws, "kept")); string(data) != "kept\n" {
			t.Errorf("bwrap: the workspace write was lost: %q", data)
		}
	}
}

// Network is off under bwrap unless the jail allows it.
func TestBwrapNetwork(t *testing.T) {
	requireBwrap(t)
	for _, allow := range []bool{false, true} {
		res, _ := runIn(t, Jail{Level: LevelBwrap, Network: allow}, t.TempDir(), "tail -n +3 /proc/net/dev | grep -vc ' lo:'")
		n, _ := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
		if hostHasNet := hostDevices(t) > 0; allow && hostHasNet && n == 0 || !allow && n != 0 {
			t.Errorf("network %v: %d devices besides lo", allow, n)
		}
	}
}

func hostDevices(t *testing.T) int {
	data, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n")[2:] {
		if strings.Contains(l, ":") && !strings.Contains(l, " lo:") {
			n++
		}
	}
	return n
}

// The limits hold on every level, cannot be raised, and stop a spinning
// process.
func TestJailLimits(t *testing.T) {
	levels := []string{LevelNone}
	if _, err := probeOnce(); err == nil {
		levels = append(levels, LevelBwrap)
	}
	for _, level := range levels {
		j := Jail{Level: level, CPU: time.Second, Memory: 64 << 20}
		res, err := runIn(t, j, t.TempDir(), "ulimit -t; ulimit -d; (ulimit -t unlimited 2>/dev/null && echo raised) || echo held")
		if err != nil || string(res.Stdout) != "1\n65536\nheld\n" {
			t.Errorf("%s: %q, %v", level, res.Stdout, err)
		}
		_, err = runIn(t, j, t.TempDir(), "while :; do :; done")
		var exit *ExitError
		if !errors.As(err, &exit) || exit.ExitCode == 0 {
			t.Errorf("%s: a spinning process was not stopped by its CPU limit: %v", level, err)
		}
		// sort holds its one 100 MB line in memory: over the 64 MiB it
		// has, it fails (and with room, it sorts).
		res, err = runIn(t, j, t.TempDir(), hog)
		if !errors.As(err, &exit) || exit.ExitCode == 0 || !strings.Contains(string(res.Stderr), "memory exhausted") {
			t.Errorf("%s: a process over its memory limit went on: %v, %q", level, err, res.Stderr)
		}
	}
	if _, err := runIn(t, Jail{Level: LevelNone, Memory: 1 << 30}, t.TempDir(), hog); err != nil {
		t.Errorf("the memory hog fails with 1 GiB too: %v", err)
	}
}

// hog needs more than 64 MiB of memory.
const hog = "head -c 100000000 /dev/zero | sort >/dev/null"

func TestResolve(t *testing.T) {
	if level, _, err := Resolve(LevelNone); level != LevelNone || err != nil {
		t.Errorf("none: %s, %v", level, err)
	}
	if _, _, err := Resolve("jail"); err == nil || !strings.Contains(err.Error(), "must be auto, bwrap or none") {
		t.Errorf("a bad level: %v", err)
	}
	saved := bwrapPath
	bwrapPath, probeOnce = "descent-no-such-bwrap", sync.OnceValues(probe)
	defer func() { bwrapPath, probeOnce = saved, sync.OnceValues(probe) }()
	if _, _, err := Resolve(LevelBwrap); err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("bwrap without bubblewrap: %v, want the fix", err)
	}
	if level, why, err := Resolve(LevelAuto); level != LevelNone || err != nil || !strings.Contains(why, "not installed") {
		t.Errorf("auto without bubblewrap: %s (%s), %v", level, why, err)
	}
	// Installed, but the kernel refuses its namespaces (a container, or
	// unprivileged user namespaces off): the error says so and names the
	// fixes.
	broken := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bwrapPath, probeOnce = broken, sync.OnceValues(probe)
	_, _, err := Resolve(LevelBwrap)
	if err == nil || !strings.Contains(err.Error(), "bubblewrap 0.8.0 does not work here") || !strings.Contains(err.Error(), "No permissions to creating new namespace") ||
		!strings.Contains(err.Error(), "kernel.unprivileged_userns_clone=1") || !strings.Contains(err.Error(), "isolation = none") {
		t.Errorf("bwrap that cannot make its namespaces: %v, want the reason and the fixes", err)
	}
	if level, why, err := Resolve(LevelAuto); level != LevelNone || err != nil || !strings.Contains(why, "does not work here") {
		t.Errorf("auto with a bubblewrap that does not work: %s (%s), %v", level, why, err)
	}
}

// Under bwrap a locked file inside the writable workspace is a read-only
// mount: not even root rewrites it.
func TestBwrapLock(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	locked := filepath.Join(ws, "tests", "check.sh")
	if err := os.MkdirAll(filepath.Dir(locked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locked, []byte("exit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Spec{Command: "echo 'exit 0' > tests/check.sh || echo refused; echo x > free", Dir: ws,
		Env: Environ(nil, nil, ""), Jail: Jail{Level: LevelBwrap}, Lock: []string{locked}})
	if err != nil || !strings.Contains(string(res.Stdout), "refused") {
		t.Errorf("%q, %v: want the write refused", res.Stdout, err)
	}
	if data, _ := os.ReadFile(locked); string(data) != "exit 1\n" {
		t.Errorf("the locked file became %q", data)
	}
	if _, err := os.Stat(filepath.Join(ws, "free")); err != nil {
		t.Errorf("the rest of the workspace is not writable: %v", err)
	}
}

// A process whose git-descent dies (kill -9) dies with it: its whole PID
// namespace under bwrap, its process group on the none level. The helper
// is this test binary, re-run as a stand-in git-descent.
func TestLifeline(t *testing.T) {
	if level := os.Getenv("DESCENT_LIFELINE_LEVEL"); level != "" {
		mark := os.Getenv("DESCENT_LIFELINE_MARK")
		Run(context.Background(), Spec{Command: "setsid sleep " + mark + "1 & sleep " + mark + "2", Dir: os.TempDir(),
			Env: Environ(nil, nil, ""), Jail: Jail{Level: level}})
		os.Exit(0)
	}
	levels := []string{LevelNone}
	if _, err := probeOnce(); err == nil || os.Getenv("DESCENT_REQUIRE_BWRAP") != "" {
		levels = append(levels, LevelBwrap)
	}
	for i, level := range levels {
		mark := "98" + strconv.Itoa(i) + "." + strconv.Itoa(os.Getpid())
		helper := exec.Command(os.Args[0], "-test.run=^TestLifeline$")
		helper.Env = append(os.Environ(), "DESCENT_LIFELINE_LEVEL="+level, "DESCENT_LIFELINE_MARK="+mark)
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for both sleeps, then kill the stand-in git-descent.
		for try := 0; len(sleeping(mark)) < 2; try++ {
			if try == 500 {
				t.Fatalf("%s: the sleeps never started", level)
			}
			time.Sleep(10 * time.Millisecond)
		}
		helper.Process.Kill()
		helper.Wait()
		var left []int
		for try := 0; try < 100; try++ {
			if left = sleeping(mark); len(left) == 0 || level == LevelNone && len(left) == 1 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		survivors(t, mark)
		switch {
		case level == LevelNone && len(left) != 1:
			t.Errorf("none: %d processes left after git-descent died, want only the setsid one", len(left))
		case level == LevelBwrap && len(left) != 0:
			t.Errorf("bwrap: processes %v outlived git-descent", left)
		}
	}
}

// sleeping returns the ids of the sleep processes whose argument starts with
// mark.
func sleeping(mark string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(data), "sleep\x00"+mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}
