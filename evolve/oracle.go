package evolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/sandbox"
)

// oracle runs the library's oracle command on a candidate that changes
// guarded (L1) files: the candidate's files in a fresh workspace, then the
// frozen (L0) files from dev written over them (the runner's own files
// among them, see library.OracleFiles), so a candidate can neither rewrite
// nor shadow what the oracle checks against. The frozen files are
// read-only while it runs (bind-mounted so under bwrap) and compared after:
// a run that changed one fails. Unless the library trusts the exit status
// alone (oracle-report = exit), the verdict is read from the report the
// oracle writes to $DESCENT_ORACLE_REPORT, which must count at least as
// many tests run as dev's own report: a candidate that stops the runner
// early, with status 0, has no report or fewer tests.
type oracle struct {
	repo *git.Repo
	lib  *library.Library
	exe  string
	jail sandbox.Jail

	mu      sync.Mutex
	devRuns map[git.Hash]int // tests run by dev's oracle, by dev's library tree
}

// Check implements aggregate.Oracle: "" when the candidate passes, else why
// not.
func (o *oracle) Check(ctx context.Context, cand, dev git.Hash) (string, error) {
	want := 0
	if o.lib.OracleReport != library.OracleReportExit {
		n, err := o.devTests(ctx, dev)
		if err != nil {
			return "", err
		}
		want = n
	}
	v, err := o.run(ctx, cand, dev)
	switch {
	case err != nil || v.failure != "":
		return v.failure, err
	case o.lib.OracleReport == library.OracleReportExit:
		return "", nil
	case v.reportErr != nil:
		return "exit status 0 but " + v.reportErr.Error() + " (the oracle stopped before its runner wrote it?)", nil
	case v.report.Failed() > 0:
		return fmt.Sprintf("exit status 0 but its report has %d of %d tests failed", v.report.Failed(), v.report.Tests), nil
	case v.report.Ran() < want:
		return fmt.Sprintf("its report has %d tests run, dev's %d: a candidate may not drop or skip tests", v.report.Ran(), want), nil
	}
	return "", nil
}

// devTests is how many tests the oracle runs on dev's library, from the
// report it must write; it is measured once per dev version.
func (o *oracle) devTests(ctx context.Context, dev git.Hash) (int, error) {
	o.mu.Lock()
	n, ok := o.devRuns[dev]
	o.mu.Unlock()
	if ok {
		return n, nil
	}
	v, err := o.run(ctx, dev, dev)
	if err != nil {
		return 0, err
	}
	if v.reportErr != nil {
		return 0, fmt.Errorf("library %q: the oracle run on dev %s: %w: make it write its test report there (JUnit XML, e.g. pytest --junitxml=\"$DESCENT_ORACLE_REPORT\", or JSON {\"tests\": N, \"failures\": M}), or set library.%s.oracle-report = exit to trust its exit status alone",
			o.lib.Name, dev.Short(), v.reportErr, o.lib.Name)
	}
	o.mu.Lock()
	if o.devRuns == nil {
		o.devRuns = map[git.Hash]int{}
	}
	o.devRuns[dev] = v.report.Ran()
	o.mu.Unlock()
	return v.report.Ran(), nil
}

// oracleRun is what one run of the oracle left: a failure ("" when it
// exited 0 and left the frozen files alone), and its report or why there
// is none.
type oracleRun struct {
	failure   string
	report    testReport
	reportErr error
}

// run runs the oracle on the candidate's library with dev's frozen files.
func (o *oracle) run(ctx context.Context, cand, dev git.Hash) (oracleRun, error) {
	ws, err := sandbox.NewWorkspace("", "descent-oracle-")
	if err != nil {
		return oracleRun{}, err
	}
	defer ws.Remove()
	dir := filepath.Join(ws.Dir, filepath.FromSlash(o.lib.Path))
	if err := materialize.WriteTree(ctx, o.repo, cand, dir, nil); err != nil {
		return oracleRun{}, err
	}
	notFrozen := func(rel string) bool { return o.lib.LayerOf(rel) != library.L0 }
	if err := removeFrozen(dir, o.lib); err != nil {
		return oracleRun{}, err
	}
	if err := materialize.WriteTree(ctx, o.repo, dev, dir, notFrozen); err != nil {
		return oracleRun{}, err
	}
	frozen, err := lockFrozen(dir, o.lib)
	if err != nil {
		return oracleRun{}, err
	}
	home, reports := filepath.Join(ws.Dir, ".home"), filepath.Join(ws.Dir, ".report")
	for _, d := range []string{home, reports} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return oracleRun{}, err
		}
	}
	report := filepath.Join(reports, "report")
	env := sandbox.Environ(o.lib.Env, map[string]string{"DESCENT_SKILL_DIR": dir, "HOME": home, "DESCENT_ORACLE_REPORT": report}, o.exe)
	command := library.ExpandRepo(o.lib.Oracle, o.repo.Top())
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command: command,
		Dir:     dir,
		Env:     env,
		Timeout: o.lib.OracleTimeout,
		Jail:    o.jail.For(command, env),
		Write:   []string{ws.Dir},
		Lock:    slices.Sorted(maps.Keys(frozen)),
	})
	var exit *sandbox.ExitError
	switch {
	case ctx.Err() != nil:
		return oracleRun{}, ctx.Err()
	case err == nil || errors.As(err, &exit) || errors.Is(err, sandbox.ErrTimeout):
		// A changed frozen file is the finding, whatever the exit: a
		// rewritten test may well fail too.
		if rel := changedFrozen(dir, frozen); rel != "" {
			return oracleRun{failure: "the run changed the frozen file " + filepath.ToSlash(rel) + " (a setup step may not rewrite tests)"}, nil
		}
	}
	switch {
	case errors.As(err, &exit):
		return oracleRun{failure: tail(string(res.Stdout)+"\n"+string(res.Stderr), exit.ExitCode)}, nil
	case errors.Is(err, sandbox.ErrTimeout):
		return oracleRun{failure: "timed out after " + o.lib.OracleTimeout.String()}, nil
	case err != nil:
		return oracleRun{}, err
	}
	v := oracleRun{}
	v.report, v.reportErr = readReport(report)
	return v, nil
}

// lockFrozen makes the frozen files of the workspace read-only and returns
// their contents, by absolute path, to compare after the run.
func lockFrozen(dir string, lib *library.Library) (map[string][]byte, error) {
	frozen := map[string][]byte{}
	err := walkFrozen(dir, lib, func(p string, d os.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		frozen[p] = data
		return os.Chmod(p, 0o444)
	})
	return frozen, err
}

// changedFrozen returns the first frozen file, relative to dir, whose
// content the run changed or removed, or "".
func changedFrozen(dir string, frozen map[string][]byte) string {
	for _, p := range slices.Sorted(maps.Keys(frozen)) {
		if data, err := os.ReadFile(p); err != nil || !bytes.Equal(data, frozen[p]) {
			rel, _ := filepath.Rel(dir, p)
			return rel
		}
	}
	return ""
}

// removeFrozen deletes the candidate's files in L0 paths before dev's are
// written: a file the candidate added there cannot shadow anything.
func removeFrozen(dir string, lib *library.Library) error {
	return walkFrozen(dir, lib, func(p string, _ os.DirEntry) error { return os.Remove(p) })
}

// walkFrozen calls fn on every file under dir (anything but a directory)
// in an L0 path of the library.
func walkFrozen(dir string, lib *library.Library, fn func(path string, d os.DirEntry) error) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || lib.LayerOf(filepath.ToSlash(rel)) != library.L0 {
			return err
		}
		return fn(p, d)
	})
}

// tail is the last lines of an oracle's output, for the decision.
func tail(out string, code int) string {
	var keep []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < 3; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	msg := strings.Join(keep, " | ")
	if len(msg) > 300 {
		msg = "…" + msg[len(msg)-300:]
	}
	if msg == "" {
		return fmt.Sprintf("exit status %d", code)
	}
	return fmt.Sprintf("exit status %d: %s", code, msg)
}
