package cli

import (
	"fmt"
	"strings"
	"testing"
)

// On a terminal, long output goes through the pager git would use; not
// with --no-pager, not with GIT_PAGER=cat, and never when not a terminal.
func TestPageUsesGitsPager(t *testing.T) {
	ctx, repo, te := newLibrary(t)
	t.Setenv("GIT_PAGER", `sed 's/^/paged: /'`)
	t.Setenv("GIT_PAGER_IN_USE", "")
	write := func() string {
		te.stdout.Reset()
		w, done := te.env.page(ctx, repo)
		fmt.Fprintln(w, "one")
		fmt.Fprintln(w, "two")
		done()
		return te.stdout.String()
	}
	if got := write(); got != "one\ntwo\n" {
		t.Errorf("not a terminal: %q, want it unpaged", got)
	}
	te.env.terminal = func(any) bool { return true }
	if got := write(); got != "paged: one\npaged: two\n" {
		t.Errorf("a terminal: %q, want it through GIT_PAGER", got)
	}
	te.env.noPager = true
	if got := write(); got != "one\ntwo\n" {
		t.Errorf("--no-pager: %q, want it unpaged", got)
	}
	te.env.noPager = false
	t.Setenv("GIT_PAGER", "cat")
	if got := write(); got != "one\ntwo\n" {
		t.Errorf("GIT_PAGER=cat: %q, want it unpaged", got)
	}
	// A pager that quits at once: the writes after it vanish, no error.
	t.Setenv("GIT_PAGER", "head -c 0")
	te.stdout.Reset()
	w, done := te.env.page(ctx, repo)
	for range 10000 {
		if _, err := fmt.Fprintln(w, strings.Repeat("x", 100)); err != nil {
			t.Fatalf("a write after the pager quit: %v", err)
		}
	}
	done()
}
