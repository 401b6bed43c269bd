package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-descent/git-descent/internal/fakellm"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/sandbox"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-descent": func() {
			if os.Getenv(asyncEnv) == "1" {
				os.Args = withAsync(os.Args)
			}
			os.Exit(run())
		},
	})
}

// asyncEnv, set by TestScriptsAsync, makes every `git-descent evolve` of a
// script run the asynchronous pipeline.
const asyncEnv = "DESCENT_TEST_ASYNC"

// withAsync adds --async to an evolve command line that does not choose a
// runtime itself.
func withAsync(args []string) []string {
	if len(args) < 2 || args[1] != "evolve" || slices.Contains(args, "--sync") || slices.Contains(args, "--async") {
		return args
	}
	return append([]string{args[0], "evolve", "--async"}, args[2:]...)
}

// TestScripts runs the end-to-end scripts in testdata/scripts, one behaviour
// each, against real git in a fresh HOME with fixed identities and dates.
func TestScripts(t *testing.T) {
	p := scriptParams()
	p.Dir = scriptDir
	testscript.Run(t, p)
}

// scriptCondition knows [bwrap]: the bwrap isolation level works here (with
// DESCENT_REQUIRE_BWRAP set, as .ci/run sets it, it is always true, so that
// a machine where bwrap fails fails those scripts rather than skipping
// them), and [chromium], likewise.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "bwrap":
		_, _, err := sandbox.Resolve(sandbox.LevelBwrap)
		return err == nil || os.Getenv("DESCENT_REQUIRE_BWRAP") != "", nil
	case "chromium":
		// Debian's chromium, for the report's browser test; with
		// DESCENT_REQUIRE_CHROMIUM set (.ci/run sets it) a machine without
		// it fails those scripts rather than skipping them.
		_, err := exec.LookPath("chromium")
		return err == nil || os.Getenv("DESCENT_REQUIRE_CHROMIUM") != "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// scriptDir holds the end-to-end scripts.
var scriptDir = filepath.Join("..", "..", "testdata", "scripts")

// scriptParams are how every end-to-end script runs.
func scriptParams() testscript.Params {
	return testscript.Params{
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setupScript,
		Condition:           scriptCondition,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			// A local OpenAI-compatible server serving the script's scripted replies.
			"fakellm": fakellm.Cmd,
			// The remote ledger's invariants after workers and aggregators.
			"checkremote": checkRemote,
		},
	}
}

// TestScriptsAsync runs the end-to-end scripts that do not choose a
// runtime (none says --sync: those check what synchronous rounds decide
// together) again with every evolve on the asynchronous pipeline: it must
// pass the same tests.
func TestScriptsAsync(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(scriptDir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "git-descent evolve") && !strings.Contains(string(data), "--sync") {
			files = append(files, p)
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d scripts run evolve without --sync", len(files))
	}
	p := scriptParams()
	p.Files = files
	p.Setup = func(e *testscript.Env) error {
		e.Setenv(asyncEnv, "1")
		return setupScript(e)
	}
	testscript.Run(t, p)
}

func setupScript(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	gitconfig := "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test User",
		"GIT_AUTHOR_EMAIL":    "test@example.com",
		"GIT_COMMITTER_NAME":  "Test User",
		"GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_AUTHOR_DATE":     "2026-11-29T12:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-11-29T12:00:00Z",
		"NO_COLOR":            "1",
		// Never reach a real provider, whatever the machine's environment.
		"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
		"OPENAI_API_KEY":  "",
	} {
		e.Setenv(k, v)
	}
	return nil
}

// checkRemote is the script command `checkremote <repo> <library> <log>`:
// every proposal a push queued on the remote repository <repo> (the lines
// its post-receive hook wrote to <log>) is held by the journal there, none
// has more than one final decision (one that does not re-file it or pool
// it), and none is left queued. It prints how many were pushed, decided
// and waiting, and fails on any lost.
func checkRemote(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: checkremote <repo> <library> <post-receive log>")
	}
	ctx := context.Background()
	repo, err := git.Open(ctx, ts.MkAbs(args[0]), nil)
	ts.Check(err)
	lib, log := args[1], ts.ReadFile(args[2])
	refs := ledger.Refs{Library: lib}
	pushed := map[git.Hash]bool{}
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasPrefix(f[2], refs.QueuePrefix()) && git.Hash(f[0]).IsZero() {
			pushed[git.Hash(f[1])] = true
		}
	}
	j := ledger.OpenJournal(repo, lib)
	ds, err := j.Decisions(ctx)
	ts.Check(err)
	known, err := j.Known(ctx)
	ts.Check(err)
	final := map[git.Hash]int{}
	for _, d := range ds {
		if !d.Proposal.IsZero() && !d.Outcome.Refiled() && d.Outcome != ledger.Promising {
			final[d.Proposal]++
		}
	}
	queued, err := repo.ListRefs(ctx, refs.QueuePrefix())
	ts.Check(err)
	lost, twice, waiting := 0, 0, 0
	for p := range pushed {
		switch {
		case !known[p]:
			lost++
			ts.Logf("lost: %s", p)
		case final[p] == 0:
			waiting++
		case final[p] > 1:
			twice++
			ts.Logf("decided %d times: %s", final[p], p)
		}
	}
	fmt.Fprintf(ts.Stdout(), "pushed %d, decided %d, waiting %d, queued %d, lost %d, decided twice %d\n",
		len(pushed), len(pushed)-lost-waiting-twice, waiting, len(queued), lost, twice)
	if len(pushed) == 0 || lost > 0 || twice > 0 || len(queued) > 0 {
		ts.Fatalf("the remote's ledger lost or double-decided proposals, or left some queued")
	}
}
