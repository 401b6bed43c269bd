package merge

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// driverEnv makes the test binary act as `git descent merge-driver`, so
// that a real git can run it in TestDriverInGit.
const driverEnv = "DESCENT_TEST_MERGE_DRIVER"

// TestDriverProcess is not a test: it is the merge driver that
// TestDriverInGit has git run, `<test binary> -test.run=^TestDriverProcess$
// -- %O %A %B %L %P` standing in for `git descent merge-driver`.
func TestDriverProcess(t *testing.T) {
	if os.Getenv(driverEnv) != "1" {
		t.Skip("run by git in TestDriverInGit")
	}
	os.Exit(runTestDriver(flag.Args()))
}

// isolateGit keeps the user's and the system's git config out of the git
// commands run during the test, MergeText's included.
func isolateGit(t testing.TB) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
}

// runTestDriver is what the CLI's merge-driver command does with
// `%O %A %B %L %P`: exit 0 when clean, 1 with conflicts, 2 on error.
func runTestDriver(args []string) int {
	if len(args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: merge-driver %O %A %B %L %P")
		return 2
	}
	size, err := strconv.Atoi(args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	n, err := RunDriver(context.Background(), nil, args[0], args[1], args[2], size, args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if n > 0 {
		return 1
	}
	return 0
}

// gitMergeFile runs `git merge-file -p` with labels o, b and t and the
// options in opt (diff3, marker size, a favoured side), as the reference
// MergeText is checked against. It returns the output and the exit status
// (the number of conflicts, at most 127).
func gitMergeFile(t testing.TB, ours, base, theirs []byte, opt git.MergeFileRequest) ([]byte, int) {
	t.Helper()
	opt.Ours, opt.Base, opt.Theirs, opt.Labels = ours, base, theirs, testLabels
	out, n, err := git.MergeFile(context.Background(), nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out, n
}

var testLabels = [3]string{"o", "b", "t"}

func TestMergeText(t *testing.T) {
	isolateGit(t)
	for _, tc := range []struct {
		name                string
		ours, base, theirs  string
		size                int // marker size; 0 for the default
		want                string
		conflicts, fused    int
		sameAsGitDiff3      bool // no fusion: the result is git's diff3 output
		sameAsGitMergeClean bool // git merges cleanly: the result is git's
	}{
		{
			name: "clean", base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n",
			want: "A\nb\nC\n", sameAsGitMergeClean: true,
		},
		{
			name: "insertions at one place", base: "a\nb\n", ours: "a\nX\nb\n", theirs: "a\nY\nb\n",
			want: "a\nX\nY\nb\n", fused: 1,
		},
		{
			name: "multi-line insertions", base: "a\nb\n", ours: "a\nX1\nX2\nb\n", theirs: "a\nY1\nY2\nY3\nb\n",
			want: "a\nX1\nX2\nY1\nY2\nY3\nb\n", fused: 1,
		},
		{
			name: "a line both inserted is kept once", base: "a\nb\n", ours: "a\nS\nX\nb\n", theirs: "a\nS\nY\nb\n",
			want: "a\nS\nX\nY\nb\n", fused: 1,
		},
		{
			name: "between shared lines, ours then theirs", base: "- a\n- z\n", ours: "- a\n- c\n- k\n- m\n- z\n", theirs: "- a\n- b\n- k\n- x\n- z\n",
			want: "- a\n- c\n- b\n- k\n- m\n- x\n- z\n", fused: 1,
		},
		{
			name: "each side keeps its order", base: "a\nb\n", ours: "a\nS\nX\nb\n", theirs: "a\nY\nS\nb\n",
			want: "a\nY\nS\nX\nb\n", fused: 1,
		},
		{
			name: "union without final newline ends as its last side", base: "a\n", ours: "a\nX\nS", theirs: "a\nS",
			want: "a\nX\nS", fused: 1,
		},
		{
			name: "identical edits", base: "a\nb\nc\n", ours: "a\nB\nc\n", theirs: "a\nB\nc\n",
			want: "a\nB\nc\n", sameAsGitMergeClean: true,
		},
		{
			name: "identical edits but for the final newline", base: "a\nb\n", ours: "a\nB", theirs: "a\nB\n",
			want: "a\nB\n", fused: 1,
		},
		{
			name: "identical insertions but for the final newline", base: "a\n", ours: "a\nX\n", theirs: "a\nX",
			want: "a\nX\n", fused: 1,
		},
		{
			name: "conflict", base: "a\nb\nc\n", ours: "a\nB1\nc\n", theirs: "a\nB2\nc\n",
			want:      "a\n<<<<<<< o\nB1\n||||||| b\nb\n=======\nB2\n>>>>>>> t\nc\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "conflict with long markers", size: 11, base: "a\nb\nc\n", ours: "a\nB1\nc\n", theirs: "a\nB2\nc\n",
			want:      "a\n<<<<<<<<<<< o\nB1\n||||||||||| b\nb\n===========\nB2\n>>>>>>>>>>> t\nc\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "conflict next to a fusion", base: "a\nb\nc\nd\ne\n", ours: "a\nX\nb\nc\nD1\ne\n", theirs: "a\nY\nb\nc\nD2\ne\n",
			want:      "a\nX\nY\nb\nc\n<<<<<<< o\nD1\n||||||| b\nd\n=======\nD2\n>>>>>>> t\ne\n",
			conflicts: 1, fused: 1,
		},
		{
			name: "delete against modify", base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n",
			want:      "a\n<<<<<<< o\n||||||| b\nb\n=======\nB\n>>>>>>> t\nc\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "CRLF insertions", base: "a\r\nb\r\n", ours: "a\r\nX\r\nb\r\n", theirs: "a\r\nY\r\nb\r\n",
			want: "a\r\nX\r\nY\r\nb\r\n", fused: 1,
		},
		{
			name: "CRLF conflict", base: "a\r\nb\r\nc\r\n", ours: "a\r\nB1\r\nc\r\n", theirs: "a\r\nB2\r\nc\r\n",
			want:      "a\r\n<<<<<<< o\r\nB1\r\n||||||| b\r\nb\r\n=======\r\nB2\r\n>>>>>>> t\r\nc\r\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "CRLF ours, LF theirs", base: "a\r\nb\r\n", ours: "a\r\nB\r\n", theirs: "a\nC\n",
			want:      "<<<<<<< o\na\r\nB\r\n||||||| b\na\r\nb\r\n=======\na\nC\n>>>>>>> t\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "ours without final newline", base: "a\nb\n", ours: "a\nB", theirs: "a\nC\n",
			want:      "a\n<<<<<<< o\nB\n||||||| b\nb\n=======\nC\n>>>>>>> t\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "no final newlines", base: "a\nb", ours: "a\nB", theirs: "a\nC",
			want:      "a\n<<<<<<< o\nB\n||||||| b\nb\n=======\nC\n>>>>>>> t\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "CRLF without final newline", base: "a\r\nb\r\n", ours: "a\r\nB", theirs: "a\r\nC\r\n",
			want:      "a\r\n<<<<<<< o\r\nB\r\n||||||| b\r\nb\r\n=======\r\nC\r\n>>>>>>> t\r\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "a bare CR ends ours", base: "a\nb\n", ours: "a\nB\r", theirs: "a\nC\n",
			want:      "a\n<<<<<<< o\nB\r\n||||||| b\nb\n=======\nC\n>>>>>>> t\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "insertions at the end without final newline", base: "a\n", ours: "a\nX", theirs: "a\nY",
			want: "a\nX\nY", fused: 1,
		},
		{
			name: "insertions at the end, theirs with final newline", base: "a\n", ours: "a\nX", theirs: "a\nY\n",
			want: "a\nX\nY\n", fused: 1,
		},
		{
			name: "insertions clean after a clean tail", base: "a\nz", ours: "a\nX\nz", theirs: "a\nY\nz",
			want: "a\nX\nY\nz", fused: 1,
		},
		{name: "all empty", want: "", sameAsGitMergeClean: true},
		{name: "ours adds to empty", ours: "x\n", want: "x\n", sameAsGitMergeClean: true},
		{name: "both delete everything", base: "a\n", want: "", sameAsGitMergeClean: true},
		{
			name: "both fill an empty file", ours: "x\n", theirs: "y\n",
			want: "x\ny\n", fused: 1,
		},
		{
			name: "both fill an empty file without newlines", ours: "x", theirs: "y",
			want: "x\ny", fused: 1,
		},
		{
			name: "delete everything against modify", base: "a\n", ours: "", theirs: "b\n",
			want:      "<<<<<<< o\n||||||| b\na\n=======\nb\n>>>>>>> t\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "unicode", base: "α\nω\n", ours: "α\nβ — ünïcödé\nω\n", theirs: "α\n日本語 🎉\nω\n",
			want: "α\nβ — ünïcödé\n日本語 🎉\nω\n", fused: 1,
		},
		{
			name: "unicode conflict", base: "α\nβ\nω\n", ours: "α\nβ′\nω\n", theirs: "α\nβ″\nω\n",
			want:      "α\n<<<<<<< o\nβ′\n||||||| b\nβ\n=======\nβ″\n>>>>>>> t\nω\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
		{
			name: "content that looks like markers",
			base: "<<<<<<< x\n=======\n>>>>>>> y\n", ours: "<<<<<<< x\n=======\nA\n>>>>>>> y\n", theirs: "<<<<<<< x\n=======\nB\n>>>>>>> y\n",
			want: "<<<<<<< x\n=======\nA\nB\n>>>>>>> y\n", fused: 1,
		},
		{
			name: "content with markers as long as the private ones",
			base: strings.Repeat("=", 41) + "\nb\n" + strings.Repeat("<", 60) + "\n",
			ours: strings.Repeat("=", 41) + "\nB1\n" + strings.Repeat("<", 60) + "\n", theirs: strings.Repeat("=", 41) + "\nB2\n" + strings.Repeat("<", 60) + "\n",
			want:      strings.Repeat("=", 41) + "\n<<<<<<< o\nB1\n||||||| b\nb\n=======\nB2\n>>>>>>> t\n" + strings.Repeat("<", 60) + "\n",
			conflicts: 1, sameAsGitDiff3: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, base, theirs := []byte(tc.ours), []byte(tc.base), []byte(tc.theirs)
			res, err := MergeText(t.Context(), nil, TextRequest{Ours: ours, Base: base, Theirs: theirs, Labels: testLabels, MarkerSize: tc.size})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Merged) != tc.want || res.Conflicts != tc.conflicts || res.Fused != tc.fused {
				t.Errorf("MergeText = %q, %d conflicts, %d fused; want %q, %d, %d",
					res.Merged, res.Conflicts, res.Fused, tc.want, tc.conflicts, tc.fused)
			}
			size := orDefault(tc.size, DefaultMarkerSize)
			if tc.sameAsGitDiff3 {
				ref, _ := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{Diff3: true, MarkerSize: size})
				if !bytes.Equal(res.Merged, ref) {
					t.Errorf("MergeText = %q, git merge-file --diff3 = %q", res.Merged, ref)
				}
			}
			if ref, n := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{}); (n == 0) != tc.sameAsGitMergeClean {
				t.Errorf("git merge-file clean = %v, want %v", n == 0, tc.sameAsGitMergeClean)
			} else if n == 0 && !bytes.Equal(res.Merged, ref) {
				t.Errorf("MergeText = %q, git merge-file = %q", res.Merged, ref)
			}
		})
	}
}

// orDefault is v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func TestMergeTextBinary(t *testing.T) {
	isolateGit(t)
	text := []byte("a\n")
	for i := range 3 {
		texts := [3][]byte{text, text, text}
		texts[i] = []byte("a\x00b\n")
		_, err := MergeText(t.Context(), nil, TextRequest{Ours: texts[0], Base: texts[1], Theirs: texts[2]})
		if !errors.Is(err, ErrBinary) {
			t.Errorf("side %d binary: err = %v, want ErrBinary", i, err)
		}
	}
}

// TestFuseRules covers the fusion rules on conflicts git itself never
// reports (it resolves identical edits on its own).
func TestFuseRules(t *testing.T) {
	same := &textConflict{sides: [3][]byte{[]byte("x\n"), []byte("a\n"), []byte("x\n")}, eol: "\n"}
	both := &textConflict{sides: [3][]byte{[]byte("x\n"), nil, []byte("x\n")}, eol: "\n"}
	segs := []textSegment{{text: []byte("1\n")}, {conflict: same}, {text: []byte("2\n")}, {conflict: both}}
	res := fuseSegments(segs, testLabels, 0)
	if want := "1\nx\n2\nx\n"; string(res.Merged) != want || res.Fused != 2 || res.Conflicts != 0 {
		t.Errorf("fuse = %q, %d fused, %d conflicts; want %q, 2, 0", res.Merged, res.Fused, res.Conflicts, want)
	}
}

// pickSide is merge output with each conflict resolved to one side, for
// comparing the parsed sides with `git merge-file --ours` and `--theirs`.
func pickSide(segs []textSegment, side int) []byte {
	var buf bytes.Buffer
	for _, s := range segs {
		if s.conflict == nil {
			buf.Write(s.text)
		} else {
			buf.Write(s.conflict.sides[side])
		}
	}
	return buf.Bytes()
}

// lineCounts counts the lines of text, line endings stripped.
func lineCounts(text []byte) map[string]int {
	counts := map[string]int{}
	for line := range bytes.Lines(text) {
		counts[string(bytes.TrimRight(line, "\r\n"))]++
	}
	return counts
}

// hasMarkerLine reports whether a line of text starts like a conflict
// marker of the default size or longer.
func hasMarkerLine(text []byte) bool {
	for line := range bytes.Lines(text) {
		if markerRun(line) >= DefaultMarkerSize {
			return true
		}
	}
	return false
}

// tripleGen generates random versions of one file: a base and two edits of
// it. Lines the edits add are unique ("o#3", "t#7"), except insertions
// made identically on both sides ("s#2").
type tripleGen struct {
	rng  *rand.Rand
	seq  int
	rate int // chance in 40 that edit deletes a line, and that it replaces one
}

var genLines = []string{"alpha", "beta", "gamma", "", "  indented", "δέλτα", "日本語", "emoji 🎉", "x", "end."}

func (g *tripleGen) next() (ours, base, theirs []byte) {
	n := g.rng.IntN(12)
	if g.rng.IntN(20) == 0 {
		n = 0
	}
	baseLines := make([]string, n)
	for i := range baseLines {
		if g.rng.IntN(2) == 0 {
			baseLines[i] = genLines[g.rng.IntN(len(genLines))]
		} else {
			baseLines[i] = fmt.Sprintf("line %d", i)
		}
	}
	// Anchors where both sides insert: the place both edits touch.
	anchors := map[int]bool{}
	for range max(0, g.rng.IntN(5)-2) {
		anchors[g.rng.IntN(n+1)] = true
	}
	shared := map[int]string{}
	for _, a := range slices.Sorted(maps.Keys(anchors)) { // in order: the seed fixes the cases
		if g.rng.IntN(4) == 0 {
			shared[a] = g.unique("s")
		}
	}
	g.rate = g.rng.IntN(4)
	oursLines := g.edit(baseLines, "o", anchors, shared)
	theirsLines := g.edit(baseLines, "t", anchors, shared)
	eol := [3]string{"\n", "\n", "\n"}
	if g.rng.IntN(4) == 0 {
		eol = [3]string{"\r\n", "\r\n", "\r\n"}
	}
	if g.rng.IntN(20) == 0 {
		eol[g.rng.IntN(3)] = "\r\n"
	}
	mixed := g.rng.IntN(20) == 0
	var texts [3][]byte
	for i, lines := range [][]string{oursLines, baseLines, theirsLines} {
		texts[i] = g.join(lines, eol[i], mixed)
		if g.rng.IntN(40) == 0 {
			texts[i] = nil
		}
	}
	return texts[0], texts[1], texts[2]
}

func (g *tripleGen) unique(tag string) string {
	g.seq++
	return fmt.Sprintf("%s#%d", tag, g.seq)
}

// edit copies base, deleting, replacing and inserting lines at random, and
// inserting at each anchor (the shared line there, or lines of its own).
func (g *tripleGen) edit(base []string, tag string, anchors map[int]bool, shared map[int]string) []string {
	var out []string
	for i := 0; i <= len(base); i++ {
		switch {
		case shared[i] != "":
			out = append(out, shared[i])
		case anchors[i]:
			for range 1 + g.rng.IntN(3) {
				out = append(out, g.unique(tag))
			}
		case g.rng.IntN(40) < g.rate:
			out = append(out, g.unique(tag))
		}
		if i == len(base) {
			break
		}
		switch r := g.rng.IntN(40); {
		case r < g.rate && !anchors[i] && !anchors[i+1]:
			// deleted
		case r < 2*g.rate && !anchors[i] && !anchors[i+1]:
			out = append(out, g.unique(tag)+" "+base[i])
		default:
			out = append(out, base[i])
		}
	}
	return out
}

// join ends each line with eol (or, when mixed, with a random ending) and
// sometimes leaves the last line without one.
func (g *tripleGen) join(lines []string, eol string, mixed bool) []byte {
	var buf bytes.Buffer
	for _, line := range lines {
		buf.WriteString(line)
		if mixed && g.rng.IntN(2) == 0 {
			buf.WriteString("\r\n")
		} else {
			buf.WriteString(eol)
		}
	}
	out := buf.Bytes()
	if len(out) > 0 && g.rng.IntN(6) == 0 {
		out = bytes.TrimSuffix(bytes.TrimSuffix(out, []byte("\n")), []byte("\r"))
	}
	return out
}

// TestMergeTextDifferential checks MergeText against `git merge-file` on
// random merges: identical wherever git is clean, the same conflicts where
// nothing was fused, sides byte-exact, each fused insertion kept once.
func TestMergeTextDifferential(t *testing.T) {
	isolateGit(t)
	cases := 500
	if testing.Short() {
		cases = 60
	}
	g := &tripleGen{rng: rand.New(rand.NewPCG(20261129, 1))}
	var clean, conflicted, fusedAny, fullyFused int
	for i := range cases {
		ours, base, theirs := g.next()
		size := []int{0, 7, 9, 15}[g.rng.IntN(4)]
		res, err := MergeText(t.Context(), nil, TextRequest{Ours: ours, Base: base, Theirs: theirs, Labels: testLabels, MarkerSize: size})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		describe := func() string {
			return fmt.Sprintf("case %d: ours %q, base %q, theirs %q:\nMergeText = %q (%d conflicts, %d fused)",
				i, ours, base, theirs, res.Merged, res.Conflicts, res.Fused)
		}
		ref, n := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{})
		if n == 0 {
			clean++
			if !bytes.Equal(res.Merged, ref) || res.Conflicts != 0 || res.Fused != 0 {
				t.Fatalf("%s\ngit merge-file = %q (clean)", describe(), ref)
			}
			continue
		}
		conflicted++
		checkAgainstGit(t, ours, base, theirs, res, orDefault(size, DefaultMarkerSize), true, describe)
		if res.Fused > 0 {
			fusedAny++
			if res.Conflicts == 0 {
				fullyFused++
			}
		}
	}
	t.Logf("%d cases: %d clean in git, %d conflicted; %d with fusions, %d of them fully fused",
		cases, clean, conflicted, fusedAny, fullyFused)
	if !testing.Short() && (fusedAny < cases/10 || fullyFused < cases/20) {
		t.Errorf("generator too tame: only %d cases with fusions, %d fully fused", fusedAny, fullyFused)
	}
}

// checkAgainstGit checks a merge git left conflicts in.
// With uniqueLines, lines starting "o#" and "t#" occur once in ours and
// theirs, as the generator makes them, and nowhere else.
func checkAgainstGit(t *testing.T, ours, base, theirs []byte, res TextResult, size int, uniqueLines bool, describe func() string) {
	t.Helper()
	private := privateMarkerSize(ours, base, theirs)
	out, _ := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{Diff3: true, MarkerSize: private})
	segs, err := parseMerge(out, private, [3][]byte{ours, base, theirs})
	if err != nil {
		t.Fatalf("%s\n%v", describe(), err)
	}
	for side, favor := range map[int]git.MergeFavor{sideOurs: git.FavorOurs, sideTheirs: git.FavorTheirs} {
		if want, _ := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{Favor: favor}); !bytes.Equal(pickSide(segs, side), want) {
			t.Fatalf("%s\nparsed sides give %q, git merge-file --%s = %q", describe(), pickSide(segs, side), favor, want)
		}
	}
	if res.Conflicts+res.Fused != countConflicts(segs) {
		t.Fatalf("%s\ngit left %d conflicts", describe(), countConflicts(segs))
	}
	if res.Fused == 0 {
		want, _ := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{Diff3: true, MarkerSize: size})
		if !bytes.Equal(res.Merged, want) {
			t.Fatalf("%s\ngit merge-file --diff3 = %q", describe(), want)
		}
	}
	inputMarkers := hasMarkerLine(ours) || hasMarkerLine(base) || hasMarkerLine(theirs)
	if res.Conflicts == 0 && hasMarkerLine(res.Merged) && !inputMarkers {
		t.Fatalf("%s\nfused result has marker lines", describe())
	}
	counts := lineCounts(res.Merged)
	for _, s := range segs {
		c := s.conflict
		if c == nil || !c.fusable() {
			continue
		}
		for _, side := range []int{sideOurs, sideTheirs} {
			for line := range lineCounts(c.sides[side]) {
				if uniqueLines && (strings.HasPrefix(line, "o#") || strings.HasPrefix(line, "t#")) && counts[line] != 1 {
					t.Fatalf("%s\nfused line %q appears %d times", describe(), line, counts[line])
				}
			}
			if !subsequence(lines(c.sides[side]), lines(res.Merged)) {
				t.Fatalf("%s\nfused side %q is not kept in order", describe(), c.sides[side])
			}
		}
	}
}

// lines splits text into lines without their endings.
func lines(text []byte) []string {
	var ls []string
	for line := range bytes.Lines(text) {
		ls = append(ls, string(bytes.TrimRight(line, "\r\n")))
	}
	return ls
}

// subsequence reports whether sub appears in seq in order (not necessarily
// contiguously).
func subsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && s == sub[i] {
			i++
		}
	}
	return i == len(sub)
}

func TestRunDriver(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return file
	}
	base := write("base", "a\nb\nc\n", 0o600)
	theirs := write("theirs", "a\nY\nb\nC2\n", 0o600)
	ours := write("ours", "a\nX\nb\nC1\n", 0o640)

	n, err := RunDriver(t.Context(), nil, base, ours, theirs, 9, "skills/pdf/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "a\nX\nY\nb\n" +
		"<<<<<<<<< ours:skills/pdf/SKILL.md\nC1\n||||||||| base:skills/pdf/SKILL.md\nc\n=========\nC2\n>>>>>>>>> theirs:skills/pdf/SKILL.md\n"
	got, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || string(got) != want {
		t.Errorf("RunDriver = %d conflicts, file %q; want 1, %q", n, got, want)
	}
	if info, err := os.Stat(ours); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode after RunDriver: %v, %v; want 0640", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("RunDriver left files behind: %v", entries)
	}

	write("theirs", "a\nY\nb\nc\n", 0o600)
	write("ours", "a\nX\nb\nc\n", 0o640)
	if n, err := RunDriver(t.Context(), nil, base, ours, theirs, 0, ""); err != nil || n != 0 {
		t.Errorf("clean RunDriver = %d, %v; want 0, nil", n, err)
	}
	if got, _ := os.ReadFile(ours); string(got) != "a\nX\nY\nb\nc\n" {
		t.Errorf("clean RunDriver wrote %q", got)
	}

	write("theirs", "a\x00\n", 0o600)
	if _, err := RunDriver(t.Context(), nil, base, ours, theirs, 0, "bin"); !errors.Is(err, ErrBinary) {
		t.Errorf("binary RunDriver: err = %v, want ErrBinary", err)
	}
	if got, _ := os.ReadFile(ours); string(got) != "a\nX\nY\nb\nc\n" {
		t.Errorf("binary RunDriver changed ours to %q", got)
	}
	if _, err := RunDriver(t.Context(), nil, filepath.Join(dir, "missing"), ours, theirs, 0, "m"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing base: err = %v, want ErrNotExist", err)
	}
}

// TestDriverInGit has a real git run the driver (this test binary, in
// driver mode) in `git merge-tree` and `git merge`.
func TestDriverInGit(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	heads := map[string]git.Hash{}
	commit := func(branch, from, file, text string) {
		t.Helper()
		c := gittest.Commit(t, repo, heads[from], map[string]string{file: text}, branch+"\n")
		if err := repo.SetRef(ctx, git.SetRefRequest{Ref: "refs/heads/" + branch, Hash: c, OldHash: heads[branch]}); err != nil {
			t.Fatal(err)
		}
		heads[branch] = c
	}
	driver := fmt.Sprintf("%s=1 '%s' -test.run='^TestDriverProcess$' -- %%O %%A %%B %%L %%P", driverEnv, exe)
	if err := repo.ConfigSet(ctx, "", "merge.descent.driver", driver); err != nil {
		t.Fatal(err)
	}
	attrs := "*.md merge=descent\nlong.md conflict-marker-size=11\n"
	if err := os.WriteFile(filepath.Join(repo.GitDir(), "info", "attributes"), []byte(attrs), 0o644); err != nil {
		t.Fatal(err)
	}
	commit("main", "", "SKILL.md", "# PDF\n\nStep one.\nStep two.\n")
	commit("a", "main", "SKILL.md", "# PDF\n\nStep one.\nCheck the page count.\nStep two.\n")
	commit("b", "main", "SKILL.md", "# PDF\n\nStep one.\nKeep fonts embedded.\nStep two.\n")
	fused := "# PDF\n\nStep one.\nCheck the page count.\nKeep fonts embedded.\nStep two.\n"

	tree, err := repo.MergeTree(ctx, git.MergeTreeRequest{Ours: heads["a"], Theirs: heads["b"]})
	if err != nil {
		t.Fatalf("merge-tree a b: %v", err)
	}
	if got, err := repo.ReadFile(ctx, tree, "SKILL.md"); string(got) != fused {
		t.Errorf("merge-tree a b: SKILL.md = %q (%v), want %q", got, err, fused)
	}
	gittest.Merge(t, repo, "a", "b")
	if got, _ := os.ReadFile(filepath.Join(repo.Top(), "SKILL.md")); string(got) != fused {
		t.Errorf("git merge b into a: SKILL.md = %q, want %q", got, fused)
	}

	commit("main", "main", "long.md", "one\ntwo\n")
	commit("c", "main", "long.md", "one\n2\n")
	commit("d", "main", "long.md", "one\nII\n")
	tree, err = repo.MergeTree(ctx, git.MergeTreeRequest{Ours: heads["c"], Theirs: heads["d"]})
	var conflict *git.MergeConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("merge-tree c d = %v, want a conflict", err)
	}
	want := "one\n<<<<<<<<<<< ours:long.md\n2\n||||||||||| base:long.md\ntwo\n===========\nII\n>>>>>>>>>>> theirs:long.md\n"
	if got, err := repo.ReadFile(ctx, tree, "long.md"); string(got) != want {
		t.Errorf("merge-tree c d: long.md = %q (%v), want %q", got, err, want)
	}
}

func FuzzMergeText(f *testing.F) {
	isolateGit(f)
	for _, seed := range [][3]string{
		{"a\nX\nb\n", "a\nb\n", "a\nY\nb\n"},
		{"a\nB1\nc\n", "a\nb\nc\n", "a\nB2\nc\n"},
		{"a\nB", "a\nb", "a\nC\n"},
		{"a\r\nB\r\n", "a\r\nb\r\n", "a\nC\n"},
		{"a\nB\r", "a\nb\n", "a\nC\n"},
		{"x", "", "y"},
		{"", "a\n", "b\n"},
		{"<<<<<<< x\n=======\nA\n", "<<<<<<< x\n=======\n", "<<<<<<< x\n=======\nB\n"},
		{"α\nβ′\nω\n", "α\nβ\nω\n", "α\n日本語 🎉\nω\n"},
		{"\r", "\r\r", "\n\r"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]), []byte(seed[2]))
	}
	f.Fuzz(func(t *testing.T, ours, base, theirs []byte) {
		res, err := MergeText(t.Context(), nil, TextRequest{Ours: ours, Base: base, Theirs: theirs, Labels: testLabels})
		if git.Binary(ours) || git.Binary(base) || git.Binary(theirs) {
			if !errors.Is(err, ErrBinary) {
				t.Fatalf("binary input: err = %v, want ErrBinary", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		ref, n := gitMergeFile(t, ours, base, theirs, git.MergeFileRequest{})
		if n == 0 && (!bytes.Equal(res.Merged, ref) || res.Conflicts != 0 || res.Fused != 0) {
			t.Fatalf("git merge-file clean %q, MergeText %q (%d conflicts, %d fused)", ref, res.Merged, res.Conflicts, res.Fused)
		}
		if n != 0 {
			checkAgainstGit(t, ours, base, theirs, res, DefaultMarkerSize, false, func() string {
				return fmt.Sprintf("MergeText = %q (%d conflicts, %d fused)", res.Merged, res.Conflicts, res.Fused)
			})
		}
	})
}
