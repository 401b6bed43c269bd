package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Isolation levels.
const (
	// LevelNone runs a process with a scrubbed environment in its own
	// process group: it can read and write whatever the user can, see
	// every process, and a child that leaves the group outlives it.
	LevelNone = "none"
	// LevelBwrap runs it under bubblewrap: its own PID namespace and /proc
	// (no other process to see or signal, none of its children outlive
	// it), the system read-only, the user's home, the repository and the
	// temporary directories hidden, only its workspace writable, no
	// network unless allowed, and gone when git-descent is.
	LevelBwrap = "bwrap"
	// LevelAuto is bwrap where it works, else none.
	LevelAuto = "auto"
)

// Jail is how one process is kept from the machine. The zero Jail is
// LevelNone without limits.
type Jail struct {
	Level   string        // LevelNone or LevelBwrap (Resolve turns auto into one)
	Network bool          // bwrap: keep the host's network
	Read    []string      // bwrap: paths visible read-only besides the system (absolute), unless one holds a Hide directory
	Hide    []string      // bwrap: directories to show empty besides those of hiddenDirs
	Memory  int64         // bytes of data (RLIMIT_DATA) each process may hold; 0: no limit
	CPU     time.Duration // CPU time (RLIMIT_CPU) each process may use; 0: no limit
}

// Resolve turns a configured level into the one processes run under, with
// a line for the user saying why: auto is bwrap when bubblewrap works on
// this machine, else none (with the reason); bwrap that does not work is an
// error that says why and what to do.
func Resolve(level string) (string, string, error) {
	switch level {
	case LevelNone:
		return LevelNone, "isolation none (set in .descent)", nil
	case LevelBwrap, LevelAuto, "":
	default:
		return "", "", fmt.Errorf("isolation %q: must be %s, %s or %s", level, LevelAuto, LevelBwrap, LevelNone)
	}
	version, err := probeOnce()
	switch {
	case err == nil:
		return LevelBwrap, "isolation bwrap (" + version + ")", nil
	case level == LevelBwrap:
		return "", "", fmt.Errorf("isolation bwrap: %w", err)
	}
	return LevelNone, "isolation none: " + err.Error(), nil
}

// bwrapPath is the bubblewrap binary the bwrap level runs.
var bwrapPath = "bwrap"

var probeOnce = sync.OnceValues(probe)

// probe runs a do-nothing process in the sandbox the bwrap level builds
// and returns bubblewrap's version, or why it does not work here.
func probe() (string, error) {
	path, err := exec.LookPath(bwrapPath)
	if err != nil {
		return "", errors.New("bubblewrap is not installed (install it: apt-get install bubblewrap, dnf install bubblewrap; or set isolation = none in .descent)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	version := strings.TrimSpace(string(out))
	if err != nil || version == "" {
		version = "bubblewrap"
	}
	args := append(bwrapArgs(Jail{Level: LevelBwrap}, "/", nil, nil, nil), "/bin/sh", "-c", "exit 0")
	c := exec.CommandContext(ctx, path, args...)
	c.Env = []string{}
	if msg, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s does not work here: %v: %s (on Debian and Ubuntu, unprivileged user namespaces must be on: sysctl kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0; in a container, run it with --privileged or a seccomp profile that allows unshare; or set isolation = none in .descent)",
			version, err, strings.TrimSpace(string(msg)))
	}
	return version, nil
}

// command is the argument list that runs the shell script under the jail,
// with its lifeline on descriptor 3 (see lifeline).
func (j Jail) command(script, dir string, write, lock, exe []string) []string {
	script = j.lifeline() + j.limits() + script
	if j.Level != LevelBwrap {
		return []string{"/bin/sh", "-c", script}
	}
	args := append([]string{bwrapPath}, bwrapArgs(j, dir, write, lock, exe)...)
	return append(args, "/bin/sh", "-c", script)
}

// lifeline is the shell prefix that ends the process when git-descent
// does, however it died: a watcher waits on descriptor 3, the read end of
// a pipe whose write end only git-descent holds, and at its end of file
// kills everything of the process (under bwrap every process of its PID
// namespace; else its process group). bwrap's own --die-with-parent misses
// a git-descent killed while bwrap was still setting up.
func (j Jail) lifeline() string {
	target := "0"
	if j.Level == LevelBwrap {
		target = "-1"
	}
	return "{ read _ <&3; kill -KILL " + target + "; } </dev/null >/dev/null 2>&1 &\nexec 3<&-\n"
}

// limits is the shell prefix that sets the jail's resource limits; dash,
// bash and busybox ulimit set the hard limit with the soft one, so a
// process cannot raise them again.
func (j Jail) limits() string {
	var b strings.Builder
	if j.CPU > 0 {
		fmt.Fprintf(&b, "ulimit -t %d || exit 125\n", max(1, int64(j.CPU/time.Second)))
	}
	if j.Memory > 0 {
		fmt.Fprintf(&b, "ulimit -d %d || exit 125\n", max(1, j.Memory>>10))
	}
	return b.String()
}

// bwrapArgs builds bubblewrap's options: new namespaces, the whole system
// read-only, the hidden directories replaced by empty ones, the read paths
// and the programs the command names put back read-only, the write paths
// writable but the lock paths in them read-only, dir the working directory.
func bwrapArgs(j Jail, dir string, write, lock, exe []string) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if j.Network {
		args = append(args, "--share-net")
	}
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	hidden := hiddenDirs(j.Hide)
	for _, d := range hidden {
		args = append(args, "--tmpfs", d)
	}
	for _, s := range dockerSockets {
		if _, err := os.Lstat(s); err == nil {
			args = append(args, "--ro-bind", "/dev/null", s)
		}
	}
	for _, p := range append(slices.Clone(j.Read), exe...) {
		if under(p, hidden) && !holdsAny(p, j.Hide) {
			args = append(args, "--ro-bind-try", p, p)
		}
	}
	for _, p := range write {
		args = append(args, "--bind", p, p)
	}
	for _, p := range lock {
		args = append(args, "--ro-bind", p, p)
	}
	return append(args, "--chdir", dir)
}

// dockerSockets would hand a sandboxed process the machine.
var dockerSockets = []string{"/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock"}

// hiddenDirs are the directories a bwrap process sees empty: the homes,
// the temporary directories (other rollouts' workspaces, the user's files),
// the user's own home and temporary directory wherever they are, and
// extra (the repository). A directory that does not exist, or that holds
// the system itself, is left out; parents come before children.
func hiddenDirs(extra []string) []string {
	dirs := []string{"/home", "/root", "/tmp", "/var/tmp", "/run/user", "/mnt", "/media", os.TempDir(), WorkspaceRoot()}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	dirs = append(dirs, extra...)
	var keep []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || holdsSystem(d) || slices.Contains(keep, d) {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		keep = append(keep, d)
	}
	slices.SortFunc(keep, func(a, b string) int { return len(a) - len(b) })
	return keep
}

// under reports whether path lies in one of dirs.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// holdsAny reports whether dir is, or holds, one of paths: a read path that
// would show the repository again.
func holdsAny(dir string, paths []string) bool {
	for _, p := range paths {
		if under(filepath.Clean(p), []string{dir}) {
			return true
		}
	}
	return false
}

// holdsSystem reports a directory that is, or holds, part of the system a
// process needs to run.
func holdsSystem(d string) bool {
	for _, s := range []string{"/", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/nix", "/dev", "/proc", "/sys", "/var", "/run"} {
		if d == s || strings.HasPrefix(s, d+"/") {
			return true
		}
	}
	return false
}

// namedFiles returns the absolute paths of existing regular files that a
// command line names as words (a script it runs, a file it reads): under
// bwrap they stay visible read-only when they lie in a hidden directory.
func namedFiles(command string) []string {
	var files []string
	split := func(r rune) bool { return strings.ContainsRune(" \t\n'\"=;|&()<>`", r) }
	for _, w := range strings.FieldsFunc(command, split) {
		if !strings.HasPrefix(w, "/") || slices.Contains(files, w) {
			continue
		}
		if fi, err := os.Stat(w); err == nil && fi.Mode().IsRegular() {
			files = append(files, w)
		}
	}
	return files
}

// needs are the paths outside the system a command template needs to see
// under the bwrap level when they lie in a hidden directory: the program it
// starts, as the PATH of env finds it, and when that is a symlink the
// directory it resolves to (an npm package, a native installer's
// versions), and the files it names by absolute path. It reads the template, never the expanded command: a
// prompt or a task cannot name what becomes visible.
func needs(template string, env []string) []string {
	var paths []string
	if prog := program(template); prog != "" {
		if path, err := LookPath(prog, env); err == nil {
			paths = append(paths, path)
			if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
				paths = append(paths, filepath.Dir(real))
			}
		}
	}
	return append(paths, namedFiles(template)...)
}

// For is the jail a command template runs in with the environment env:
// under bwrap, j with what the template needs to see (needs) readable too.
func (j Jail) For(template string, env []string) Jail {
	if j.Level == LevelBwrap {
		j.Read = append(slices.Clone(j.Read), needs(template, env)...)
	}
	return j
}

// self is the directory of git-descent itself, first on every PATH it
// sets, so `git-descent` subcommands run under bwrap too.
func self() []string {
	if exe, err := os.Executable(); err == nil {
		return []string{filepath.Dir(exe)}
	}
	return nil
}

// program is the first word of a command line after any variable
// assignments.
func program(command string) string {
	for _, w := range strings.Fields(command) {
		if !strings.Contains(w, "=") || strings.HasPrefix(w, "/") {
			return strings.Trim(w, `'"`)
		}
	}
	return ""
}

// LookPath finds prog on the PATH of env: an executable regular file.
func LookPath(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		if filepath.IsAbs(prog) {
			return prog, nil
		}
		return "", errors.New("relative")
	}
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(path) {
				p := filepath.Join(d, prog)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", exec.ErrNotFound
}
