package cli

import (
	"testing"
)

// A library that has never been evolved has no journal: log --json prints
// an empty list (never null), and the table form says what to run.
func TestLogWithoutJournal(t *testing.T) {
	ctx, _, te := newLibrary(t)
	if err := runLog(ctx, te.env, logOptions{library: "codes", json: true}); err != nil {
		t.Fatal(err)
	}
	if got := te.stdout.String(); got != "[]\n" {
		t.Errorf("log --json = %q, want []", got)
	}
	te.stdout.Reset()
	if err := runLog(ctx, te.env, logOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := te.stdout.String(), "no decisions yet for codes: run git descent evolve skills/codes\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	te.stdout.Reset()
	if err := runLog(ctx, te.env, logOptions{fusion: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := te.stdout.String(), "fusions sent to the gate: 0; proposals that duplicated another (nothing to fuse): 0\n"+
		"no fusion was ranked against its singles: run evolve with --fusion-tournament (or set library.codes.fusion-tournament)\n"; got != want {
		t.Errorf("log --fusion = %q, want %q", got, want)
	}
}
