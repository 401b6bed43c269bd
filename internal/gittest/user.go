package gittest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// The helpers in this file do what a user does with git: look at notes and
// reflogs, check out and merge. git-descent has no such operations, so they
// run the git binary themselves; they are for tests only.

// Note returns the note git shows for object in notesRef (`git notes
// show`), exactly as stored, and whether there is one.
func Note(t testing.TB, repo *git.Repo, notesRef string, object git.Hash) (string, bool) {
	t.Helper()
	out, code := run(t, repo.Top(), []int{1}, "notes", "--ref="+notesRef, "show", string(object))
	return out, code == 0
}

// NotedObjects lists the object of every note `git notes list` finds in
// notesRef, in git's order; an object with two notes appears twice.
func NotedObjects(t testing.TB, repo *git.Repo, notesRef string) []git.Hash {
	t.Helper()
	out, _ := run(t, repo.Top(), nil, "notes", "--ref="+notesRef, "list")
	var objs []git.Hash
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, obj, ok := strings.Cut(line, " "); ok {
			objs = append(objs, git.Hash(obj))
		}
	}
	return objs
}

// Reflog lists the values ref's reflog recorded, newest first.
func Reflog(t testing.TB, repo *git.Repo, ref string) []git.Hash {
	t.Helper()
	out, _ := run(t, repo.Top(), nil, "reflog", "--format=%H", ref)
	var hs []git.Hash
	for _, h := range strings.Fields(out) {
		hs = append(hs, git.Hash(h))
	}
	return hs
}

// Merge checks out branch in the repository's main working tree, discarding
// whatever was there, and merges other into it with `git merge`, as a user
// would; merge drivers run as they do for a user.
func Merge(t testing.TB, repo *git.Repo, branch, other string) {
	t.Helper()
	run(t, repo.Top(), nil, "checkout", "--quiet", "--force", branch)
	run(t, repo.Top(), nil, "merge", "--quiet", "--no-edit", other)
}

// run runs git in dir for a test isolated by Isolate, in the C locale, and
// returns its stdout and exit code. A non-zero code not in okCodes fails the
// test.
func run(t testing.TB, dir string, okCodes []int, args ...string) (string, int) {
	t.Helper()
	if os.Getenv("GIT_CONFIG_NOSYSTEM") != "1" {
		t.Fatal("gittest: the test is not isolated from the user's git config: call Isolate or NewRepo first")
	}
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee) && slices.Contains(okCodes, ee.ExitCode()):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
	return "", 0
}
