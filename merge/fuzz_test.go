package merge

import "testing"

// FuzzUnionLines fuses two insertions at one place (each ends with a line
// ending, as unionLines requires): every line of each side is in the
// result, in its order.
func FuzzUnionLines(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("a\nc\n"))
	f.Add([]byte("x\n"), []byte(""))
	f.Add([]byte("same\nsame\n"), []byte("same\n"))
	f.Fuzz(func(t *testing.T, ours, theirs []byte) {
		for _, side := range []*[]byte{&ours, &theirs} {
			if n := len(*side); n > 0 && (*side)[n-1] != '\n' {
				*side = append(*side, '\n')
			}
		}
		out, _, ok := unionLines(ours, theirs)
		if !ok {
			return
		}
		for _, side := range [][]byte{ours, theirs} {
			if !subsequence(lines(side), lines(out)) {
				t.Fatalf("union of %q and %q is %q: it lost lines of %q", ours, theirs, out, side)
			}
		}
	})
}

// FuzzParseMerge reads arbitrary text as git merge-file output: never a
// panic.
func FuzzParseMerge(f *testing.F) {
	f.Add([]byte("a\n<<<<<<<<<<<<<<<< ours\nb\n|||||||||||||||| base\n================\nc\n>>>>>>>>>>>>>>>> theirs\n"), 16)
	f.Add([]byte("<<<<<<< x\n=======\n"), 7)
	f.Fuzz(func(t *testing.T, out []byte, size int) {
		if size < 1 || size > 64 {
			return
		}
		_, _ = parseMerge(out, size, [3][]byte{out, nil, out})
	})
}
