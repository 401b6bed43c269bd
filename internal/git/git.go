// Package git is the only code in git-descent that runs the git binary or
// opens a repository with go-git.
//
// Writes (refs, commits, trees, blobs, config, merges) go through the git
// binary, so they honour the user's lock protocol, attributes and
// credentials; it runs no hooks and gets only the environment it needs.
// In-process reads of trees, blobs, commit parents and messages use go-git
// behind a mutex (go-git is not safe for concurrent use), and are kept.
//
// A Repo is safe for concurrent use by multiple goroutines.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
)

// MinVersion is the oldest git that git-descent supports: it needs
// `merge-tree --write-tree` (2.38).
var MinVersion = Version{2, 38, 0}

// Repo is a git repository on disk.
type Repo struct {
	top    string // top of the main working tree; "" for a bare repository
	gitDir string // the common git directory (shared by all worktrees)
	format string // object format: "sha1" or "sha256"
	log    *slog.Logger

	mu sync.Mutex // guards gg
	gg *gogit.Repository

	paths  sync.Map    // object + "\x00" + path → Hash, for TreeOf (objects never change)
	cache  objectCache // trees, blobs and parents read in process
	merges sync.Map    // ours + ".." + theirs → merged, for MergeTree
	attrs  sync.Map    // what in-process merges read once: a path's merge attribute, whether a driver is configured
	packed packedRefs  // packed-refs, parsed, for readRef

	reftableOnce sync.Once
	isReftable   bool

	ownWritesOnce sync.Once // see readWriteConfig
	canWrite      bool
	canCommit     bool
}

// Open finds the repository containing dir, like git does from a working
// directory. It returns ErrNotRepository when dir is not inside one. The
// Repo logs every git command it runs to log at Debug (nil discards).
func Open(ctx context.Context, dir string, log *slog.Logger) (*Repo, error) {
	if log == nil {
		log = nopLogger
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{log: log}
	out, err := r.run(ctx, cmd{dir: abs}, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-common-dir", "--show-object-format")
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "not a git repository") {
			return nil, fmt.Errorf("%q: %w", abs, ErrNotRepository)
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	common := lines[2]
	r.format = lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(abs, common)
	}
	r.gitDir = filepath.Clean(common)
	if lines[0] != "true" {
		top, err := r.run(ctx, cmd{dir: abs}, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, err
		}
		r.top = strings.TrimSpace(string(top))
	}
	return r, nil
}

// Top is the top directory of the repository's main working tree, or ""
// for a bare repository.
func (r *Repo) Top() string { return r.top }

// GitDir is the repository's common git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// DescentDir is the directory under the git directory that holds
// git-descent's caches and scratch: everything in it can be deleted.
func (r *Repo) DescentDir() string { return filepath.Join(r.gitDir, "descent") }

// Version is a git version number.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// ParseVersion reads the output of `git version`, e.g.
// "git version 2.39.5" or "git version 2.45.1.windows.1".
func ParseVersion(s string) (Version, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return Version{}, fmt.Errorf("parse git version %q", s)
	}
	parts := strings.SplitN(f[2], ".", 4)
	var v Version
	for i, dst := range []*int{&v.Major, &v.Minor, &v.Patch} {
		if i >= len(parts) {
			break
		}
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return Version{}, fmt.Errorf("parse git version %q", s)
		}
		*dst = n
	}
	return v, nil
}

// CheckVersion returns an error naming the installed version when git is
// missing or older than MinVersion. It logs the command to log at Debug
// (nil discards).
func CheckVersion(ctx context.Context, log *slog.Logger) (Version, error) {
	out, _, err := runGit(ctx, log, cmd{}, "version")
	if err != nil && ctx.Err() != nil {
		return Version{}, err
	}
	if err != nil {
		return Version{}, fmt.Errorf("%w (git-descent needs git %s or newer on PATH)", err, MinVersion)
	}
	v, err := ParseVersion(string(out))
	if err != nil {
		return Version{}, err
	}
	if v.Less(MinVersion) {
		return v, fmt.Errorf("git %s is too old: git-descent needs git %s or newer (for merge-tree --write-tree); upgrade git", v, MinVersion)
	}
	return v, nil
}

// cmd describes one invocation of git. Whether it may take optional locks
// is not the caller's to say: runGit decides from the subcommand (readOnly).
type cmd struct {
	dir     string   // working directory; defaults to the repository top or git dir
	stdin   []byte   // standard input
	env     []string // extra environment, "K=V"; overrides gitEnv's
	okCodes []int    // non-zero exit codes that are not errors
}

// CommandError is a git command that exited with an unexpected status.
type CommandError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	name := "git"
	if len(e.Args) > 0 {
		name += " " + e.Args[0]
	}
	return name + ": " + msg
}

// run executes git and returns its standard output. A non-zero exit status
// not listed in c.okCodes is a *CommandError carrying git's stderr.
func (r *Repo) run(ctx context.Context, c cmd, args ...string) ([]byte, error) {
	out, _, err := r.runCode(ctx, c, args...)
	return out, err
}

// runCode is run that also returns the exit code.
func (r *Repo) runCode(ctx context.Context, c cmd, args ...string) ([]byte, int, error) {
	if c.dir == "" {
		c.dir = r.top
		if c.dir == "" {
			c.dir = r.gitDir
		}
	}
	return runGit(ctx, r.log, c, args...)
}

// runGit runs git in c.dir ("" is the process's working directory) and logs
// the command to log at Debug (nil discards). It is the only place that
// starts git.
func runGit(ctx context.Context, log *slog.Logger, c cmd, args ...string) ([]byte, int, error) {
	if log == nil {
		log = nopLogger
	}
	dir := c.dir
	// No hook runs for git-descent's own commands: a hook is code anyone
	// who reached the repository could have put there (decision 60).
	x := exec.CommandContext(ctx, "git", append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
	x.Dir = dir
	x.Env = gitEnv()
	if readOnly(args) {
		x.Env = append(x.Env, "GIT_OPTIONAL_LOCKS=0")
	}
	x.Env = append(x.Env, c.env...)
	if c.stdin != nil {
		x.Stdin = bytes.NewReader(c.stdin)
	}
	var stdout, stderr bytes.Buffer
	x.Stdout = &stdout
	x.Stderr = &stderr
	start := time.Now()
	err := x.Run()
	log.Debug("git", "args", args, "dir", dir, "took", time.Since(start).Round(time.Microsecond))
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, -1, fmt.Errorf("run git %s: %w", args[0], err)
		}
		code = ee.ExitCode()
		ok := false
		for _, c := range c.okCodes {
			ok = ok || c == code
		}
		if !ok {
			if ctx.Err() != nil {
				return nil, code, fmt.Errorf("git %s: %w", args[0], ctx.Err())
			}
			return stdout.Bytes(), code, &CommandError{Args: args, ExitCode: code, Stderr: stderr.String()}
		}
	}
	return stdout.Bytes(), code, nil
}

// gitEnv is the environment for git subprocesses: of the caller's, only
// what git needs (gitKeeps), with the directory of the running git-descent
// binary first on PATH so that git finds `git-descent merge-driver` even
// when the binary is not installed (for example under `go run`). Nothing
// else reaches git, or a driver or helper it starts: API keys above all.
//
// git runs in the C locale, so its messages are English whatever the user's
// locale: the package reads a few of them (see refChanged). LC_ALL=C alone
// would do, as gettext ignores LANGUAGE in the C locale; LANGUAGE is dropped
// all the same so no translation can come back through it.
func gitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return !gitKeeps(k)
	})
	env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if p := ExecutablePath(); p != "" {
		env = append(env, "PATH="+p)
	}
	return env
}

// gitKeeps reports whether git's environment keeps variable k: what finds
// the repository and the user's configuration, credentials (an SSH agent's
// socket, an askpass program), proxies and certificates, and the dates
// git-descent's commits take (decision 15). GIT_INDEX_FILE is dropped:
// git-descent names its own index where it uses one.
func gitKeeps(k string) bool {
	switch k {
	case "PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "XDG_CONFIG_HOME",
		"SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_ASKPASS", "DISPLAY",
		"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE":
		return true
	case "GIT_INDEX_FILE":
		return false
	}
	return strings.HasPrefix(k, "GIT_")
}

var exeDirOnce = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return filepath.Dir(exe)
})

// ExecutablePath returns the process PATH with the directory of the running
// executable first, or "" when that directory cannot be found. Subprocesses
// that must be able to run `git-descent` use it.
func ExecutablePath() string {
	dir := exeDirOnce()
	if dir == "" {
		return ""
	}
	path := os.Getenv("PATH")
	for _, p := range filepath.SplitList(path) {
		if p == dir {
			return path
		}
	}
	return dir + string(os.PathListSeparator) + path
}
