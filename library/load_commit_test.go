package library

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/gittest"
)

func TestLoadAt(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	committed := "[library \"codes\"]\n\tpath = skills/codes\n\tfrozen = evals/**\n\tfrozen = LICENSE\n" +
		"\ton-commit = {{repo}}/tools/notify.sh\n\ton-promote = gh pr create --head descent/codes/stable\n"
	c := gittest.Commit(t, repo, "", map[string]string{FileName: committed}, "configure")
	// The working tree's .descent differs: LoadAt reads the commit's.
	setConfig(t, repo, "library.other.path=other")
	libs, err := LoadAt(ctx, repo, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 1 || libs[0].Name != "codes" || libs[0].Path != "skills/codes" {
		t.Fatalf("LoadAt = %+v", libs)
	}
	l := libs[0]
	if !reflect.DeepEqual(l.Frozen, []string{"evals/**", "LICENSE"}) || l.OnCommit != "{{repo}}/tools/notify.sh" || l.OnPromote != "gh pr create --head descent/codes/stable" {
		t.Errorf("LoadAt: frozen %q, on-commit %q, on-promote %q", l.Frozen, l.OnCommit, l.OnPromote)
	}
	// A commit without .descent configures nothing; a bad one says where.
	none := gittest.Commit(t, repo, "", map[string]string{"README.md": "hi\n"}, "no config")
	if libs, err := LoadAt(ctx, repo, none); err != nil || libs != nil {
		t.Errorf("LoadAt without .descent = %+v, %v", libs, err)
	}
	bad := gittest.Commit(t, repo, "", map[string]string{FileName: "[library \"x\"]\n\tpath = x\n\ttimeout = soon\n"}, "bad")
	if _, err := LoadAt(ctx, repo, bad); err == nil || !strings.Contains(err.Error(), "commit "+bad.Short()+": .descent: library.x.timeout") {
		t.Errorf("LoadAt of a bad .descent = %v", err)
	}
}

func TestLifecycleKeys(t *testing.T) {
	for _, k := range []string{"on-commit", "on-promote"} {
		found := false
		for _, key := range Keys {
			found = found || key == k
		}
		if !found {
			t.Errorf("Keys lacks %s", k)
		}
	}
}
