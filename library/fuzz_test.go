package library

import (
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

// FuzzParse reads a library section from arbitrary "key=value" lines, as
// git config hands them over from .descent: never a panic, and a library
// that parses has a clean path below the repository's top.
func FuzzParse(f *testing.F) {
	f.Add("path=skills/s\nrun=echo {{prompt}}\nsplit=50/30/20\nfrozen=evals/**\nmax-file-size=1m")
	f.Add("path=../x\ndelta=2\nrepeats=-1\nlayout=/abs")
	f.Add("path=skills/s\nmodel=gpt\ngpt.input-price=3\nbinary=yes\ntimeout=1h")
	f.Fuzz(func(t *testing.T, data string) {
		var es []git.ConfigEntry
		for _, line := range strings.Split(data, "\n") {
			k, v, _ := strings.Cut(line, "=")
			es = append(es, git.ConfigEntry{Key: k, Value: v})
		}
		l, err := parse("s", es, nil)
		if err != nil {
			return
		}
		if l.Path == "" || strings.HasPrefix(l.Path, "/") || l.Path == ".." || strings.HasPrefix(l.Path, "../") {
			t.Fatalf("library path %q from %q", l.Path, data)
		}
	})
}
