package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// The git hooks git-descent installs: a guard of the descent refs a push
// updates (see Guard.Check).
const (
	// PreReceive guards a shared bare repository: the whole push, refused
	// as one.
	PreReceive = "pre-receive"
	// PrePush guards a clone's own pushes, before they leave it.
	PrePush = "pre-push"
)

// ChainedSuffix is added to the name of a hook git-descent moved aside
// (install with Chain) to run it first.
const ChainedSuffix = ".chained"

// hookMarker is in every hook git-descent writes, and in no other: what
// tells its hooks, of any version, from the user's.
const hookMarker = "# git-descent hook:"

// HookFor is the hook Install writes in repo: PreReceive in a bare
// repository, PrePush in one with a working tree.
func HookFor(repo *git.Repo) string {
	if repo.Top() == "" {
		return PreReceive
	}
	return PrePush
}

// HooksDir is the directory git runs repo's hooks from: core.hooksPath when
// set (relative to the working tree's top, or to the git directory in a
// bare repository, as git reads it), else hooks in the git directory.
func HooksDir(ctx context.Context, repo *git.Repo) (string, error) {
	es, err := repo.ConfigList(ctx, git.EffectiveConfig, `^core\.hookspath$`)
	if err != nil {
		return "", err
	}
	// internal/git gives every git it runs -c core.hooksPath=/dev/null
	// (decision 60): the command line's value, listed last, is not the
	// user's.
	if n := len(es); n > 0 && es[n-1].Value == os.DevNull {
		es = es[:n-1]
	}
	if len(es) == 0 || es[len(es)-1].Value == "" {
		return filepath.Join(repo.GitDir(), "hooks"), nil
	}
	dir := es[len(es)-1].Value
	if dir == os.DevNull {
		return "", fmt.Errorf("core.hooksPath is %s: git runs no hooks in this repository (unset it to install one)", os.DevNull)
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("core.hooksPath %q: %w", dir, err)
		}
		dir = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(dir) {
		base := repo.Top()
		if base == "" {
			base = repo.GitDir()
		}
		dir = filepath.Join(base, dir)
	}
	return dir, nil
}

// ForeignHookError is a hook in the way that git-descent did not write.
type ForeignHookError struct {
	Path    string
	Chained string // the hook already moved aside, when that is in the way too
}

func (e *ForeignHookError) Error() string {
	if e.Chained != "" {
		return fmt.Sprintf("%s is a hook git-descent did not write, and %s is taken too: move one of them away and install again", e.Path, e.Chained)
	}
	return fmt.Sprintf("%s is a hook git-descent did not write: install with --chain to keep it and run it first (it moves to %s), or move it away", e.Path, e.Path+ChainedSuffix)
}

// InstallRequest is how to install the guard hook.
type InstallRequest struct {
	// Chain keeps a hook git-descent did not write: it moves to
	// <hook>.chained, and the guard runs it first with the same arguments
	// and input, and fails when it fails.
	Chain bool
	// Exe is the git-descent the hook runs, an absolute path; when it is
	// not there the hook runs git-descent from PATH. "": PATH only.
	Exe string
}

// Installed is what Install did.
type Installed struct {
	Hook    string // the hook's path
	Chained string // the hook it runs first ("" none)
	Changed bool   // false: it was installed already, as asked
}

// Install writes HookFor(repo) into HooksDir, a small sh script that runs
// `git-descent hooks run`. It is idempotent and replaces git-descent's own
// hooks of any version, and it never overwrites a hook git-descent did not
// write: that is a *ForeignHookError, unless req.Chain moves it aside.
func Install(ctx context.Context, repo *git.Repo, req InstallRequest) (Installed, error) {
	dir, err := HooksDir(ctx, repo)
	if err != nil {
		return Installed{}, err
	}
	name := HookFor(repo)
	path := filepath.Join(dir, name)
	out := Installed{Hook: path}
	chained := path + ChainedSuffix
	if exists(chained) {
		out.Chained = chained
	}
	want := hookScript(name, req.Exe)
	switch have, err := os.ReadFile(path); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return out, err
	case string(have) == want:
		return out, nil
	case !ourHook(have) && !req.Chain:
		return out, &ForeignHookError{Path: path}
	case !ourHook(have) && out.Chained != "":
		return out, &ForeignHookError{Path: path, Chained: chained}
	case !ourHook(have):
		if err := os.Rename(path, chained); err != nil {
			return out, fmt.Errorf("move %s aside: %w", path, err)
		}
		out.Chained = chained
	}
	if err := writeHook(path, want); err != nil {
		return out, err
	}
	out.Changed = true
	return out, nil
}

// ourHook reports whether a hook's content is one git-descent wrote.
func ourHook(content []byte) bool {
	for _, l := range strings.Split(string(content), "\n") {
		if strings.HasPrefix(l, hookMarker) {
			return true
		}
	}
	return false
}

// hookScript is the hook git-descent writes for name.
func hookScript(name, exe string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "%s %s guard of the descent refs a push updates. Written by `git descent hooks install`;\n", hookMarker, name)
	fmt.Fprintf(&b, "# `git descent hooks uninstall` removes it and puts back the hook it runs first (%s%s), if any.\n", name, ChainedSuffix)
	b.WriteString("descent=git-descent\n")
	if exe != "" {
		fmt.Fprintf(&b, "if [ -x %s ]; then descent=%s; fi\n", shellQuote(exe), shellQuote(exe))
	}
	b.WriteString("command -v \"$descent\" >/dev/null 2>&1 || {\n")
	fmt.Fprintf(&b, "\techo \"$0: git-descent is not on PATH%s, so this push is refused (or run: git descent hooks uninstall)\" >&2\n", onlyIf(exe != "", " or at "+exe))
	b.WriteString("\texit 1\n}\n")
	fmt.Fprintf(&b, "exec \"$descent\" hooks run %s --script \"$0\" -- \"$@\"\n", name)
	return b.String()
}

func onlyIf(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// shellQuote quotes s as one sh word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeHook writes an executable hook in place of path, atomically.
func writeHook(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".descent-tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // whatever the umask
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Uninstalled is what Uninstall did.
type Uninstalled struct {
	Removed  []string // git-descent's hooks it removed
	Restored []string // chained hooks put back in their place
	Foreign  []string // hooks git-descent did not write, left alone
}

// Uninstall removes git-descent's guard hooks (PreReceive and PrePush)
// from HooksDir and puts back the hooks they chain. Hooks git-descent did
// not write are left alone and listed.
func Uninstall(ctx context.Context, repo *git.Repo) (Uninstalled, error) {
	var out Uninstalled
	dir, err := HooksDir(ctx, repo)
	if err != nil {
		return out, err
	}
	for _, name := range []string{PreReceive, PrePush} {
		path := filepath.Join(dir, name)
		have, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return out, err
		case !ourHook(have):
			out.Foreign = append(out.Foreign, path)
			continue
		default:
			if err := os.Remove(path); err != nil {
				return out, err
			}
			out.Removed = append(out.Removed, path)
		}
		if chained := path + ChainedSuffix; exists(chained) {
			if err := os.Rename(chained, path); err != nil {
				return out, fmt.Errorf("put %s back: %w", chained, err)
			}
			out.Restored = append(out.Restored, path)
		}
	}
	return out, nil
}
