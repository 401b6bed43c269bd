package cli

import (
	"testing"
)

func TestShowNonProposal(t *testing.T) {
	ctx, repo, te := newLibrary(t)
	head, err := repo.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{
		"HEAD":              "commit " + head.Short() + " is not a git-descent proposal (no Descent-Library trailer); it may be where dev started (git show " + head.Short() + " shows it)",
		"descent/codes/w/1": `"descent/codes/w/1" names no commit (give a proposal hash, a worker branch such as descent/<lib>/w/1, or descent/<lib>/dev)`,
	} {
		if err := runShow(ctx, te.env, showOptions{rev: rev, color: "never"}); err == nil || err.Error() != want {
			t.Errorf("show %s: %v, want %q", rev, err, want)
		}
	}
	if te.stdout.Len() > 0 {
		t.Errorf("printed %q", te.stdout)
	}
}
