package cli

import (
	"encoding/json"
	"testing"
)

func TestStatusOfFreshLibrary(t *testing.T) {
	ctx, _, te := newLibrary(t)
	if err := runStatus(ctx, te.env, statusOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := te.stdout.String(), "codes (skills/codes)\n  not evolved yet: git descent evolve skills/codes\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	te.stdout.Reset()
	if err := runStatus(ctx, te.env, statusOptions{library: "codes", json: true}); err != nil {
		t.Fatal(err)
	}
	var all []libraryStatus
	if err := json.Unmarshal(te.stdout.Bytes(), &all); err != nil {
		t.Fatalf("status --json: %v\n%s", err, te.stdout)
	}
	if len(all) != 1 {
		t.Fatalf("status --json: %d libraries, want 1", len(all))
	}
	st := all[0]
	if st.Name != "codes" || st.Path != "skills/codes" || !st.Dev.IsZero() || !st.Stable.IsZero() || st.Undecided != 0 || len(st.Workers) != 0 || len(st.Outcomes) != 0 {
		t.Errorf("status --json: %+v", st)
	}
}
