// Package sandbox runs the processes git-descent starts on a user's behalf
// (agents, proposers, scorers) and hands out the throwaway directories they
// run in.
//
// A process runs in its own process group with a scrubbed environment,
// captured and capped output, and a timeout that kills the whole group, so
// an agent that forks helpers cannot outlive its rollout. Under the bwrap
// level (see Jail) it also runs in namespaces of its own, where nothing
// outside its workspace is writable and nothing of it outlives the run.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxOutput caps captured standard output when Spec.MaxOutput is 0.
const DefaultMaxOutput = 1 << 20

// maxStderr caps captured standard error, which is kept for messages only.
const maxStderr = 64 << 10

// killGrace is how long a process group gets between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// Spec describes one process to run.
type Spec struct {
	Command   string        // a shell command line, run with /bin/sh -c
	Dir       string        // working directory
	Env       []string      // the complete environment, "K=V" (see Environ)
	Stdin     []byte        // standard input; nil means empty
	Timeout   time.Duration // 0 means no limit but the context's
	MaxOutput int           // cap on captured stdout bytes; 0 means DefaultMaxOutput

	// Offline, when set, reads each line of standard output and reports
	// whether it says the process is waiting for the network. A process
	// that prints nothing else for OfflineAfter is stopped with ErrOffline:
	// a client that waits for a network forever should not burn the whole
	// Timeout.
	Offline      func(line []byte) bool
	OfflineAfter time.Duration

	// Jail is the isolation and the limits it runs under; Write are the
	// directories it may write under the bwrap level (nil: Dir), Lock
	// files inside them that stay read-only there.
	Jail  Jail
	Write []string
	Lock  []string
}

// Result is what a finished process left behind.
type Result struct {
	Stdout    []byte
	Stderr    []byte
	ExitCode  int
	Truncated bool // stdout went over the cap and was cut
	Duration  time.Duration
}

// ErrTimeout means the process ran past its timeout and its process group
// was killed.
var ErrTimeout = errors.New("timed out")

// ExitError is a process that exited with a non-zero status.
type ExitError struct {
	Command  string
	ExitCode int
	Stderr   string
	Hint     string // what to do, when the jail may be why
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s: exit status %d", clip(e.Command, 60), e.ExitCode)
	if last := lastLines(e.Stderr, 3, 300); last != "" {
		msg += ": " + last
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// jailHint explains a command the shell could not find or run under bwrap:
// it sees only the system, its workspace and the paths let in.
const jailHint = "under isolation bwrap a command sees only the system, its workspace, the program it starts and files its template names by absolute path: " +
	"list what else it needs in the library's sandbox-read, or set isolation = none"

// StartError is a process that could not be started at all (the shell
// missing, an environment or argument list too large for the system).
type StartError struct {
	Command string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("start %q: %v", clip(e.Command, 60), e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Run runs spec.Command to completion. A process that cannot start is a
// *StartError; a non-zero exit is an *ExitError (with the Result still
// filled in; ExitCode is -1 when a signal killed it); a timeout is
// ErrTimeout; one stopped for waiting on the network is ErrOffline; a
// cancelled context is the context's error. In every case the process group
// is gone when Run returns.
func Run(ctx context.Context, spec Spec) (Result, error) {
	parent := ctx // the caller's: its end is not this process's timeout
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	ctx, offline := context.WithCancelCause(ctx)
	defer offline(nil)
	max := spec.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	argv := spec.Jail.command(spec.Command, spec.Dir, spec.writable(), spec.Lock, self())
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = spec.Dir
	c.Env = env
	c.Stdin = bytes.NewReader(spec.Stdin)
	stdout := &capped{max: max}
	stderr := &capped{max: maxStderr}
	c.Stdout, c.Stderr = stdout, stderr
	var watch *offlineWatch
	if spec.Offline != nil && spec.OfflineAfter > 0 {
		watch = &offlineWatch{w: stdout, offline: spec.Offline, after: spec.OfflineAfter, fire: func() { offline(ErrOffline) }}
		c.Stdout = watch
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Orphaned grandchildren may hold the pipes open; stop waiting for them.
	c.WaitDelay = killGrace

	// The process's lifeline (see Jail.lifeline): it gets the read end;
	// the write end stays here until it is gone, and closes when this
	// process ends, however it ends.
	lifeline, hold, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer hold.Close()
	c.ExtraFiles = []*os.File{lifeline}

	start := time.Now()
	err = c.Start()
	lifeline.Close()
	if err != nil {
		return Result{}, &StartError{Command: spec.Command, Err: err}
	}
	pgid := c.Process.Pid
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			killGroup(pgid, done)
		case <-done:
		}
	}()
	err = c.Wait()
	close(done)
	// Anything the command left running in its group goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	res := Result{
		Stdout:    stdout.buf.Bytes(),
		Stderr:    stderr.buf.Bytes(),
		ExitCode:  c.ProcessState.ExitCode(),
		Truncated: stdout.over,
		Duration:  time.Since(start),
	}
	var lastOffline string
	if watch != nil {
		lastOffline = watch.stop()
	}
	switch {
	case parent.Err() != nil:
		return res, parent.Err()
	case errors.Is(context.Cause(ctx), ErrOffline):
		return res, fmt.Errorf("%s: %w after %s (its last line: %s)", clip(spec.Command, 60), ErrOffline, spec.OfflineAfter, lastOffline)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && spec.Timeout > 0:
		return res, fmt.Errorf("%s: %w after %s", clip(spec.Command, 60), ErrTimeout, spec.Timeout)
	case ctx.Err() != nil:
		return res, ctx.Err()
	case err != nil && res.ExitCode != 0:
		exit := &ExitError{Command: spec.Command, ExitCode: res.ExitCode, Stderr: string(res.Stderr)}
		if spec.Jail.Level == LevelBwrap && (exit.ExitCode == 126 || exit.ExitCode == 127) {
			exit.Hint = jailHint
		}
		return res, exit
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return res, fmt.Errorf("run %q: %w", clip(spec.Command, 60), err)
	}
	return res, nil
}

// writable is where the process may write under the bwrap level.
func (spec Spec) writable() []string {
	if spec.Write == nil && spec.Dir != "" {
		return []string{spec.Dir}
	}
	return spec.Write
}

// killGroup sends SIGTERM to the process group, then SIGKILL after a grace
// period unless the leader has exited.
func killGroup(pgid int, done <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-time.After(killGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	case <-done:
	}
}

// capped is a writer that keeps the first max bytes and drops the rest.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := w.max - w.buf.Len(); room < len(p) {
		w.over = true
		if room < 0 {
			room = 0
		}
		p = p[:room]
	}
	w.buf.Write(p)
	return n, nil
}

// clip shortens s to n bytes for messages.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// lastLines returns the last n non-blank lines of s, at most max bytes.
func lastLines(s string, n, max int) string {
	var keep []string
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	out := strings.Join(keep, " | ")
	if len(out) > max {
		out = "…" + out[len(out)-max:]
	}
	return out
}
