package killtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-descent/git-descent/demo"
	"github.com/git-descent/git-descent/internal/cli"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

func TestMain(m *testing.M) {
	// The test binary is git-descent too, on PATH as testscript sets it up.
	testscript.Main(m, map[string]func(){
		"git-descent": func() {
			if err := cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "git-descent:", err)
				os.Exit(1)
			}
		},
	})
}

// TestKillAnywhere kills `git descent evolve` (kill -9) at random instants
// and checks the ledger after every kill and after every run that ends by
// itself: `git fsck` finds nothing wrong, dev and stable are where the
// journal left them and stable is an ancestor of dev, each proposal merged
// into dev is recorded as committed, each committed decision's merge is on
// dev, no proposal is decided again after a final decision, and no proposal
// a worker made is lost undecided; under the bwrap isolation level, no
// child of an agent or proposer (each leaves a setsid one) outlives it or
// the killed run; after a run that ended by itself, no workspace, seat or
// proposer's directory is left. Runs resume in the same repository until
// one ends by itself; then a fresh repository starts. 100 kills; 20 with
// -short. KILL_SEED replays a run.
func TestKillAnywhere(t *testing.T) {
	kills := 100
	if testing.Short() {
		kills = 20
	}
	exe, err := exec.LookPath("git-descent")
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KILL_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("KILL_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	template := demoRepo(t, exe)
	tmp := t.TempDir() // the runs' TMPDIR: their workspaces, seats and control directories
	killed, finished := 0, 0
	for killed < kills {
		dir := filepath.Join(t.TempDir(), "repo")
		if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
		for killed < kills {
			delay := time.Duration(rng.Int64N(int64(4 * time.Second)))
			runtime := runtimes[rng.IntN(len(runtimes))]
			out, done := evolveFor(t, exe, dir, tmp, delay, runtime)
			if done {
				finished++
			} else {
				killed++
			}
			err := checkLedger(dir, demo.Name)
			if err == nil && jailed() {
				err = checkNoSurvivors()
			}
			if err == nil && done {
				err = checkNoLeftovers(tmp, filepath.Join(dir, ".git", "descent", "tmp"))
			}
			if err != nil {
				t.Fatalf("after %s (%v, kill %d, KILL_SEED=%d): %v\n%s", what(done, delay), runtime, killed, seed, err, out)
			}
			if done {
				break
			}
		}
	}
	t.Logf("%d kills, %d runs that ended by themselves", killed, finished)
}

// runtimes are the evolve flags of the two runtimes a run picks from: the
// asynchronous pipeline, and rounds whose workers keep a snapshot for two
// rounds (so repairs happen).
var runtimes = [][]string{{"--async"}, {"--sync", "--refresh", "2"}}

func what(done bool, delay time.Duration) string {
	if done {
		return "a run that ended by itself"
	}
	return fmt.Sprintf("a kill at %s", delay.Round(time.Millisecond))
}

// demoRepo makes the demo's repository, initialised as `git descent demo`
// does, without evolving it.
func demoRepo(t *testing.T, exe string) string {
	t.Helper()
	gittest.Isolate(t)
	dir := filepath.Join(t.TempDir(), "template")
	ctx := context.Background()
	repo, err := git.InitRepo(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range demo.Files() {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, propose := "git-descent demo-agent", "git-descent demo-propose"
	if jailed() {
		// Each agent and proposer leaves a child in a session of its own,
		// which must die with it, or with the run killed under it.
		run, propose = "setsid sleep "+survivor+"1 >/dev/null 2>&1 & "+run, "setsid sleep "+survivor+"2 >/dev/null 2>&1 & "+propose
	}
	init := exec.Command(exe, "init", demo.Path, "--run", run, "--proposer", propose,
		"--scorer", "exact", "--layout", "repo", "--frozen", "evals/**", "--guarded", "scripts/**")
	init.Dir = dir
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	for key, value := range map[string]string{"promote-after": "2", "staleness": "reflective"} {
		if err := repo.ConfigSet(ctx, library.File(repo), "library."+demo.Name+"."+key, value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.CommitAll(ctx, "Add the demo skill", git.Signature{Name: "Test", Email: "test@example.com"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// evolveFor runs evolve in dir and kills it with SIGKILL after delay,
// unless it ended before. It waits for the git processes the run started
// (they share its process group) to end, as they would on a real crash. It
// reports whether the run ended by itself.
func evolveFor(t *testing.T, exe, dir, tmp string, delay time.Duration, flags []string) (string, bool) {
	t.Helper()
	c := exec.Command(exe, append([]string{"evolve", demo.Name, "--workers", "3", "--rounds", "3"}, flags...)...)
	c.Dir = dir
	c.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("evolve: %v\n%s", err, out.String())
		}
		return out.String(), true
	case <-time.After(delay):
	}
	c.Process.Kill()
	<-done
	for syscall.Kill(-c.Process.Pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return out.String(), false
}

// checkLedger checks the invariants of a library's refs.
func checkLedger(dir, lib string) error {
	ctx := context.Background()
	repo, err := git.Open(ctx, dir, nil)
	if err != nil {
		return err
	}
	refs := ledger.Refs{Library: lib}
	j := ledger.OpenJournal(repo, lib)
	head, err := j.Head(ctx)
	if err != nil {
		return err
	}
	ds, err := j.Decisions(ctx)
	if err != nil {
		return err
	}
	latest := map[git.Hash]ledger.Decision{}
	for _, d := range ds {
		if d.Proposal.IsZero() {
			continue
		}
		// Oldest round first: the last is the newest. A final outcome
		// (anything but re-filed or waiting as promising) is the last.
		if prev, ok := latest[d.Proposal]; ok && final(prev.Outcome) {
			return fmt.Errorf("proposal %s was decided twice: %s in round %d, then %s in round %d", d.Proposal.Short(), prev.Outcome, prev.Round, d.Outcome, d.Round)
		}
		latest[d.Proposal] = d
	}
	dev, err := repo.ResolveRef(ctx, refs.Dev())
	if errors.Is(err, git.ErrRefNotFound) {
		return nil // killed before the run began
	} else if err != nil {
		return err
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress", "--no-dangling").CombinedOutput(); err != nil {
		return fmt.Errorf("git fsck: %v\n%s", err, out)
	}
	if err := ledger.CheckHeads(ctx, repo, lib, head); err != nil {
		return err
	}
	stable, err := repo.ResolveRef(ctx, refs.Stable())
	if err != nil {
		return err
	}
	if ok, err := repo.IsAncestor(ctx, stable, dev); err != nil || !ok {
		return fmt.Errorf("stable %s is not an ancestor of dev %s (%v)", stable.Short(), dev.Short(), err)
	}
	chain, err := repo.FirstParents(ctx, dev, "", 0)
	if err != nil {
		return err
	}
	onDev := map[git.Hash]bool{}
	for _, c := range chain {
		onDev[c] = true
		parents, err := repo.Parents(ctx, c)
		if err != nil {
			return err
		}
		if len(parents) < 2 {
			continue
		}
		for _, p := range parents[1:] {
			if d, ok := latest[p]; !ok || d.Outcome != ledger.Committed || d.Merge != c {
				return fmt.Errorf("proposal %s is merged into dev by %s but its decision is %+v", p.Short(), c.Short(), d)
			}
		}
	}
	for p, d := range latest {
		if d.Outcome == ledger.Committed && !onDev[d.Merge] {
			return fmt.Errorf("proposal %s is recorded as committed in %s, which is not on dev", p.Short(), d.Merge.Short())
		}
	}
	return checkNoneLost(ctx, repo, refs, head.State, latest)
}

// final reports an outcome after which a proposal is never decided again.
func final(o ledger.Outcome) bool { return !o.Refiled() && o != ledger.Promising }

// checkNoneLost checks that every commit a worker branch ever held (its
// reflog) is decided, queued in the journal, or still at a branch's head.
func checkNoneLost(ctx context.Context, repo *git.Repo, refs ledger.Refs, state ledger.State, latest map[git.Hash]ledger.Decision) error {
	waiting := map[git.Hash]bool{}
	for _, r := range state.Refile {
		waiting[r.Proposal] = true
	}
	for _, p := range state.Promising {
		waiting[p.Proposal] = true
	}
	heads, err := repo.ListRefs(ctx, refs.WorkerPrefix())
	if err != nil {
		return err
	}
	for _, h := range heads {
		waiting[h.Hash] = true
	}
	logs := filepath.Join(repo.GitDir(), "logs", filepath.FromSlash(refs.WorkerPrefix()))
	return filepath.WalkDir(logs, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) < 2 {
				continue
			}
			c := git.Hash(fields[1])
			if _, decided := latest[c]; !decided && !waiting[c] && !c.IsZero() {
				return fmt.Errorf("proposal %s (worker branch %s) was never decided and is no longer queued", c.Short(), filepath.Base(path))
			}
		}
		return s.Err()
	})
}

// jailed reports whether agents and proposers run under the bwrap
// isolation level here (the demo's library leaves it at auto).
func jailed() bool {
	level, _, _ := sandbox.Resolve(sandbox.LevelAuto)
	return level == sandbox.LevelBwrap
}

// survivor marks the children the agents and proposers leave behind: sleep
// reads it as a number of seconds.
const survivor = "987.6"

// checkNoSurvivors checks that no child of an agent or proposer outlived
// it, or the run: it allows the kernel a moment to tear a PID namespace
// down.
func checkNoSurvivors() error {
	var left []string
	for try := 0; try < 50; try++ {
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			// The sleep itself, not a process whose arguments name it (bwrap).
			if data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.HasPrefix(string(data), "sleep\x00"+survivor) {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range left {
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
	return fmt.Errorf("processes %v, children of agents or proposers, outlived them", left)
}

// checkNoLeftovers checks that dirs hold nothing git-descent made: after a
// run that ended by itself, its own workspaces are gone, and those of the
// runs killed before it were removed when it started.
func checkNoLeftovers(dirs ...string) error {
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "descent-") {
				return fmt.Errorf("%s left in %s", e.Name(), d)
			}
		}
	}
	return nil
}
