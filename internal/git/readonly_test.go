package git

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadOnly(t *testing.T) {
	for args, want := range map[string]bool{
		"rev-parse --verify HEAD":                         true,
		"status --porcelain=v1 -z":                        true,
		"merge-tree --write-tree --name-only -z a b":      true,
		"config --local --null --get-regexp .":            true,
		"config --get merge.descent.driver":               true,
		"config --file .descent --unset-all k":            false,
		"config --local merge.descent.driver x":           false,
		"hash-object --stdin":                             true,
		"hash-object -w --stdin":                          false,
		"-c commit.gpgSign=false commit-tree t -F -":      false,
		"-c core.hooksPath=/dev/null worktree add --lock": false,
		"worktree list":                                   true,
		"update-ref refs/heads/x a b":                     false,
		"merge-file -p ours base theirs":                  false,
		"-c core.sparseCheckout=true status":              true,
	} {
		if got := readOnly(strings.Fields(args)); got != want {
			t.Errorf("readOnly(git %s) = %v, want %v", args, got, want)
		}
	}
}

// A read leaves the index alone even when git status would refresh it: the
// file's timestamp moved since it was staged.
func TestStatusDoesNotRefreshIndex(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t)
	file := filepath.Join(r.Top(), "f.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitAll(ctx, "m", DescentSignature); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(r.GitDir(), "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if dirty, err := r.DirtyPaths(ctx, "."); err != nil || len(dirty) != 0 {
		t.Fatalf("DirtyPaths = %v, %v; want none", dirty, err)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(before, after) {
		t.Error("git status rewrote the index: it ran without GIT_OPTIONAL_LOCKS=0")
	}
}
