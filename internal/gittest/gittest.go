// Package gittest sets up real git repositories for tests: isolated from
// the user's and the system's git configuration, with fixed identities and
// dates so that hashes are stable.
//
// Tests build and inspect repositories through internal/git and the
// helpers here, never with git argument lists of their own. For what
// git-descent itself never does (reading notes and reflogs, `git merge` in
// a working tree) the helpers run the git binary, the one place outside
// internal/git that does; they are for tests only.
package gittest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// Date is the author and committer date of every commit made in a test.
const Date = "2026-11-29T12:00:00Z"

// Isolate gives the test a private HOME (returned) and XDG_CONFIG_HOME, no
// system config, and fixed author and committer names, emails and dates.
func Isolate(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test Author",
		"GIT_AUTHOR_EMAIL":    "author@example.com",
		"GIT_COMMITTER_NAME":  "Test Committer",
		"GIT_COMMITTER_EMAIL": "committer@example.com",
		"GIT_AUTHOR_DATE":     Date,
		"GIT_COMMITTER_DATE":  Date,
	} {
		t.Setenv(k, v)
	}
	return home
}

// NewRepo isolates the test and creates an empty repository in a temporary
// directory.
func NewRepo(t testing.TB) (context.Context, *git.Repo) {
	t.Helper()
	Isolate(t)
	ctx := context.Background()
	repo, err := git.InitRepo(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, repo
}
