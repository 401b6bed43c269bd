package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
)

const foreignHook = "#!/bin/sh\necho the user's hook\n"

func TestInstallHook(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	in, err := Install(ctx, repo, InstallRequest{Exe: "/opt/descent/git-descent"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo.GitDir(), "hooks", PrePush)
	if in != (Installed{Hook: path, Changed: true}) {
		t.Errorf("Install = %+v", in)
	}
	data := readFile(t, path)
	for _, want := range []string{"#!/bin/sh\n", hookMarker, "if [ -x '/opt/descent/git-descent' ]; then descent='/opt/descent/git-descent'; fi",
		`exec "$descent" hooks run pre-push --script "$0" -- "$@"`} {
		if !strings.Contains(data, want) {
			t.Errorf("the hook does not say %q:\n%s", want, data)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the hook is not executable: %v %v", fi.Mode(), err)
	}
	// Again: nothing to do. With another executable: its own hook, replaced.
	if in, err := Install(ctx, repo, InstallRequest{Exe: "/opt/descent/git-descent"}); err != nil || in.Changed {
		t.Errorf("second Install = %+v, %v; want unchanged", in, err)
	}
	if in, err := Install(ctx, repo, InstallRequest{}); err != nil || !in.Changed || strings.Contains(readFile(t, path), "/opt/") {
		t.Errorf("Install over its own = %+v, %v:\n%s", in, err, readFile(t, path))
	}
}

func TestInstallRefusesAForeignHook(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	path := filepath.Join(repo.GitDir(), "hooks", PrePush)
	writeFile(t, path, foreignHook)
	_, err := Install(ctx, repo, InstallRequest{})
	var fe *ForeignHookError
	if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), "--chain") {
		t.Fatalf("Install over a foreign hook = %v, want a *ForeignHookError naming %s and --chain", err, path)
	}
	if got := readFile(t, path); got != foreignHook {
		t.Errorf("the foreign hook changed: %q", got)
	}
}

func TestInstallChainAndUninstall(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	path := filepath.Join(repo.GitDir(), "hooks", PrePush)
	writeFile(t, path, foreignHook)
	in, err := Install(ctx, repo, InstallRequest{Chain: true})
	if err != nil {
		t.Fatal(err)
	}
	if in.Chained != path+ChainedSuffix || !in.Changed {
		t.Errorf("Install --chain = %+v", in)
	}
	if got := readFile(t, path+ChainedSuffix); got != foreignHook {
		t.Errorf("the chained hook = %q", got)
	}
	if !ourHook([]byte(readFile(t, path))) {
		t.Errorf("the hook is not git-descent's")
	}
	// Idempotent, and a second foreign hook does not take the chained one's place.
	if in, err := Install(ctx, repo, InstallRequest{Chain: true}); err != nil || in.Changed || in.Chained == "" {
		t.Errorf("second Install --chain = %+v, %v", in, err)
	}
	ours := readFile(t, path)
	writeFile(t, path, "#!/bin/sh\necho another\n")
	var fe *ForeignHookError
	if _, err := Install(ctx, repo, InstallRequest{Chain: true}); !errors.As(err, &fe) || fe.Chained == "" {
		t.Errorf("Install --chain with the chained place taken = %v", err)
	}
	writeFile(t, path, ours)

	out, err := Uninstall(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Removed) != 1 || len(out.Restored) != 1 || len(out.Foreign) != 0 {
		t.Errorf("Uninstall = %+v", out)
	}
	if got := readFile(t, path); got != foreignHook {
		t.Errorf("after uninstall the hook is %q, want the user's back", got)
	}
	if exists(path + ChainedSuffix) {
		t.Errorf("%s is left", path+ChainedSuffix)
	}
	// The user's hook stays: it is not git-descent's.
	out, err = Uninstall(ctx, repo)
	if err != nil || len(out.Foreign) != 1 || len(out.Removed) != 0 || readFile(t, path) != foreignHook {
		t.Errorf("second Uninstall = %+v, %v", out, err)
	}
}

func TestInstallHooksPath(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	setLocalConfig(t, repo, "core.hooksPath", ".githooks")
	in, err := Install(ctx, repo, InstallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo.Top(), ".githooks", PrePush); in.Hook != want {
		t.Errorf("installed at %s, want %s (core.hooksPath)", in.Hook, want)
	}
	home := os.Getenv("HOME")
	setLocalConfig(t, repo, "core.hooksPath", "~/hooks")
	if dir, err := HooksDir(ctx, repo); err != nil || dir != filepath.Join(home, "hooks") {
		t.Errorf("HooksDir with ~/hooks = %s, %v", dir, err)
	}
}

func TestInstallBare(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	bare := openBare(t, repo)
	in, err := Install(ctx, bare, InstallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo.GitDir(), "hooks", PreReceive); in.Hook != want {
		t.Errorf("installed at %s, want %s", in.Hook, want)
	}
}

// openBare turns repo's git directory into a bare repository, as a server
// has, and opens it.
func openBare(t *testing.T, repo *git.Repo) *git.Repo {
	t.Helper()
	setLocalConfig(t, repo, "core.bare", "true")
	bare, err := git.Open(context.Background(), repo.GitDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bare.Top() != "" {
		t.Fatalf("%s is not bare", repo.GitDir())
	}
	return bare
}

func TestRunChainsAndGuards(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	dir := t.TempDir()
	script := filepath.Join(dir, PrePush)
	log := filepath.Join(dir, "log")
	writeFile(t, script+ChainedSuffix, "#!/bin/sh\necho \"args $*\" >> "+log+"\ncat >> "+log+"\necho from the chained hook\nexit ${CHAINED_EXIT:-0}\n")
	if err := os.Chmod(script+ChainedSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	input := "refs/heads/main " + string(git.EmptyTree) + " refs/heads/main " + string(git.ZeroHash) + "\n"
	var stdout bytes.Buffer
	req := RunRequest{Hook: PrePush, Script: script, Args: []string{"origin", "/srv/x.git"}, Stdin: strings.NewReader(input), Stdout: &stdout}
	if err := Run(ctx, repo, req); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, log), "args origin /srv/x.git\n"+input; got != want {
		t.Errorf("the chained hook got %q, want %q", got, want)
	}
	if !strings.Contains(stdout.String(), "from the chained hook") {
		t.Errorf("its output is not passed on: %q", stdout.String())
	}
	t.Setenv("CHAINED_EXIT", "3")
	req.Stdin = strings.NewReader(input)
	var ce *ChainedError
	if err := Run(ctx, repo, req); !errors.As(err, &ce) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Run with a failing chained hook = %v", err)
	}
}

func TestRunRefuses(t *testing.T) {
	g := newGuarded(t)
	p := g.commit(g.start, map[string]string{evals: "{}"})
	writeFile(t, filepath.Join(g.repo.Top(), ".descent"), "[library \"codes\"]\n\tpath = skills/codes\n")
	input := "refs/heads/x " + string(p) + " " + g.refs.Worker("1") + " " + string(git.ZeroHash) + "\n"
	err := Run(g.ctx, g.repo, RunRequest{Hook: PrePush, Stdin: strings.NewReader(input)})
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "push refused:\n  "+g.refs.Worker("1")+" "+p.Short()+": changes frozen (L0)") {
		t.Errorf("Run = %v", err)
	}
}

func TestParseUpdates(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	ups, err := parseUpdates(PreReceive, []byte(a+" "+b+" refs/heads/x\n\n"))
	if err != nil || len(ups) != 1 || ups[0] != (Update{Ref: "refs/heads/x", Old: git.Hash(a), New: git.Hash(b)}) {
		t.Errorf("pre-receive: %+v, %v", ups, err)
	}
	ups, err = parseUpdates(PrePush, []byte("refs/heads/l "+b+" refs/heads/r "+a+"\n"))
	if err != nil || len(ups) != 1 || ups[0] != (Update{Ref: "refs/heads/r", Old: git.Hash(a), New: git.Hash(b)}) {
		t.Errorf("pre-push: %+v, %v", ups, err)
	}
	if _, err := parseUpdates(PreReceive, []byte("x y\n")); err == nil {
		t.Error("a short line is not an error")
	}
	if err := Run(context.Background(), nil, RunRequest{Hook: "update", Stdin: strings.NewReader("")}); err == nil {
		t.Error("an unknown hook is not an error")
	}
}
