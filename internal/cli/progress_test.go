package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/evolve"
)

var testStatus = evolve.Status{
	Elapsed: 65.2, Left: 534.8, Round: 3, Doing: "deciding round 4: 2 proposals",
	Workers:    []evolve.WorkerStatus{{Worker: "w1", Doing: "rolling out 4 train tasks on dev 3e4bcb1"}, {Worker: "w2", Doing: "waiting for the next step"}},
	Rollouts:   evolve.RolloutStatus{Run: 124, Cached: 38, Running: 6, Waiting: 5, Slots: 8},
	Validation: []evolve.Point{{Score: 0.2}, {Score: 0.45}, {Score: 0.625}},
	Tokens:     12345, Cost: 0.0412,
}

func TestStatusLines(t *testing.T) {
	want := []string{
		"── 1m5s · 8m55s left · 3 rounds decided · deciding round 4: 2 proposals",
		"   w1   rolling out 4 train tasks on dev 3e4bcb1",
		"   w2   waiting for the next step",
		"   rollouts 124 run, 38 from the cache · 6 of 8 slots busy, 5 waiting",
		"   dev validation 0.20 → 0.45 → 0.62 · spent 12345 tokens, $0.04",
	}
	if got := statusLines(testStatus, 200); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range statusLines(testStatus, 30) {
		if n := len([]rune(l)); n > 29 {
			t.Errorf("%q is %d characters, wider than the 30-column terminal allows", l, n)
		}
	}
	if got, want := statusLine(testStatus), "progress: 1m5s, 3 rounds decided; 1 of 2 workers busy; rollouts 124 run, 38 from the cache, 6 running, 5 waiting; dev 0.62; 8m55s left"; got != want {
		t.Errorf("statusLine = %q, want %q", got, want)
	}
}

// screen plays what a terminal would do with the live block's output:
// lines, and the two escapes it uses (cursor up, erase line).
func screen(out string) []string {
	lines, row := []string{""}, 0
	for len(out) > 0 {
		switch {
		case strings.HasPrefix(out, "\x1b[1A"):
			row, out = max(0, row-1), out[4:]
		case strings.HasPrefix(out, "\x1b[2K"):
			lines[row], out = "", out[4:]
		case out[0] == '\n':
			row, out = row+1, out[1:]
			if row == len(lines) {
				lines = append(lines, "")
			}
		default:
			lines[row] += out[:1]
			out = out[1:]
		}
	}
	return lines[:row]
}

// Output written during a run scrolls above the block, which stays at the
// bottom, redrawn; closing removes it and leaves the output alone.
func TestLiveKeepsTheBlockUnderTheOutput(t *testing.T) {
	var b bytes.Buffer
	l := newLive(&b)
	l.Write([]byte("round 1: 2 proposals\n"))
	l.status(testStatus)
	block := statusLines(testStatus, 100)
	if got := screen(b.String()); strings.Join(got, "\n") != strings.Join(append([]string{"round 1: 2 proposals"}, block...), "\n") {
		t.Fatalf("after a status:\n%s", strings.Join(got, "\n"))
	}
	l.Write([]byte("  w1 committed\n"))
	l.Write([]byte("round 2: "))
	l.Write([]byte("1 proposal\n"))
	want := append([]string{"round 1: 2 proposals", "  w1 committed", "round 2: 1 proposal"}, block...)
	if got := screen(b.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after more output:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	l.close()
	if got := screen(b.String()); strings.Join(got, "\n") != strings.Join(want[:3], "\n") {
		t.Fatalf("after close:\n%s", strings.Join(got, "\n"))
	}
}
