package evolve

import (
	"context"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
	"github.com/git-descent/git-descent/library"
)

func treeOf(t *testing.T, ctx context.Context, repo *git.Repo, files map[string]string) git.Hash {
	t.Helper()
	var edits []git.TreeEdit
	for p, c := range files {
		h, err := repo.HashObject(ctx, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		edits = append(edits, git.TreeEdit{Path: p, Hash: h})
	}
	tree, err := repo.EditTree(ctx, "", edits)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The oracle runs against dev's frozen files: a candidate that rewrote the
// check, or added a file under a frozen path, changes nothing it sees.
func TestOracleUsesFrozenFilesFromDev(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	lib := library.New("skills/s")
	lib.Frozen = []string{"evals/**", "tests/**"}
	lib.Oracle = "sh tests/check.sh"
	lib.OracleReport = library.OracleReportExit
	o := &oracle{repo: repo, lib: lib}
	check := "test \"$(cat answer.txt)\" = ok || { echo \"bad answer: $(cat answer.txt)\"; exit 1; }\n[ ! -e tests/extra.sh ] || { echo shadowed; exit 1; }\n"
	dev := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check})
	good := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check, "notes.md": "n\n"})
	if failure, err := o.Check(ctx, good, dev); err != nil || failure != "" {
		t.Fatalf("good candidate: %q, %v", failure, err)
	}
	shadow := treeOf(t, ctx, repo, map[string]string{"answer.txt": "ok\n", "tests/check.sh": check, "tests/extra.sh": "x\n"})
	if failure, err := o.Check(ctx, shadow, dev); err != nil || failure != "" {
		t.Fatalf("a file added under a frozen path reached the oracle: %q, %v", failure, err)
	}
	cheat := treeOf(t, ctx, repo, map[string]string{"answer.txt": "wrong\n", "tests/check.sh": "exit 0\n", "tests/extra.sh": "x\n"})
	failure, err := o.Check(ctx, cheat, dev)
	if err != nil || !strings.Contains(failure, "exit status 1: bad answer: wrong") {
		t.Fatalf("cheating candidate: %q, %v", failure, err)
	}
}

// Unless the library trusts the exit status, the oracle's verdict is its
// report: one it did not write, with failures, or with fewer tests run
// than dev's fails, whatever the exit status.
func TestOracleReadsItsReport(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	lib := library.New("skills/s")
	lib.Frozen = []string{"evals/**", "tests/**"}
	lib.Oracle = "sh tests/run.sh"
	o := &oracle{repo: repo, lib: lib}
	// The runner sources the candidate's code, which may say what to
	// report: a stand-in for a test framework running the code it tests.
	run := "report='{\"tests\": 3, \"failures\": 0}'\n. ./code.sh\nprintf '%s' \"$report\" > \"$DESCENT_ORACLE_REPORT\"\n"
	version := func(code string) git.Hash {
		return treeOf(t, ctx, repo, map[string]string{"tests/run.sh": run, "code.sh": code})
	}
	dev := version("true\n")
	for _, c := range []struct{ code, want string }{
		{"true\n", ""},
		{"report='{\"tests\": 4, \"failures\": 0}'\n", ""},
		{"exit 0\n", "exit status 0 but it wrote no report to $DESCENT_ORACLE_REPORT"},
		{"report='{\"tests\": 2, \"failures\": 0}'\n", "its report has 2 tests run, dev's 3"},
		{"report='{\"tests\": 3, \"skipped\": 1}'\n", "its report has 2 tests run, dev's 3"},
		{"report='{\"tests\": 3, \"failures\": 1}'\n", "exit status 0 but its report has 1 of 3 tests failed"},
		{"report='<testsuites><testsuite tests=\"3\"><testcase/><testcase/><testcase><failure/></testcase></testsuite></testsuites>'\n", "1 of 3 tests failed"},
		{"report='not a report'\n", "neither JSON nor JUnit XML"},
	} {
		failure, err := o.Check(ctx, version(c.code), dev)
		if err != nil || c.want == "" && failure != "" || !strings.Contains(failure, c.want) {
			t.Errorf("candidate %q: %q, %v; want %q", c.code, failure, err, c.want)
		}
	}
	// A dev whose oracle writes no report stops the run with the fix.
	bare := treeOf(t, ctx, repo, map[string]string{"tests/run.sh": "true\n", "code.sh": "true\n"})
	_, err := o.Check(ctx, bare, bare)
	if err == nil || !strings.Contains(err.Error(), "oracle-report = exit") || !strings.Contains(err.Error(), "--junitxml") {
		t.Errorf("dev without a report: %v, want the fix", err)
	}
}

func TestParseReport(t *testing.T) {
	for _, c := range []struct {
		in   string
		want testReport
		err  string
	}{
		{`{"tests": 5, "failures": 1, "errors": 1, "skipped": 2}`, testReport{Tests: 5, Failures: 2, Skipped: 2}, ""},
		{`<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3"><testcase name="a"/><testcase name="b"><skipped/></testcase><testcase name="c"><error message="x"/></testcase></testsuite></testsuites>`,
			testReport{Tests: 3, Failures: 1, Skipped: 1}, ""},
		{`<testsuite><testsuite><testcase/></testsuite><testcase><failure>boom</failure><system-out>x</system-out></testcase></testsuite>`, testReport{Tests: 2, Failures: 1}, ""},
		{`<testsuite tests="100"></testsuite>`, testReport{}, ""}, // the attributes say nothing the cases do not
		{`{"tests": 1, "failures": 2}`, testReport{}, "do not add up"},
		{`{"failures": 0}`, testReport{}, "not {"},
		{`<html></html>`, testReport{}, "no <testsuite>"},
		{`<testsuite><testcase>`, testReport{}, "neither JSON nor JUnit XML"},
	} {
		got, err := parseReport([]byte(c.in))
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("parseReport(%.40q) = %+v, %v; want %+v, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// FuzzParseReport checks that no report, however malformed, panics the
// parser or yields counts that do not add up.
func FuzzParseReport(f *testing.F) {
	f.Add([]byte(`{"tests": 3, "failures": 1, "skipped": 1}`))
	f.Add([]byte(`<testsuites><testsuite tests="2"><testcase/><testcase><failure/></testcase></testsuite></testsuites>`))
	f.Add([]byte(`<testsuite><testcase><skipped/><failure/></testcase></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseReport(data)
		if err == nil && (r.Tests < 0 || r.Failures < 0 || r.Skipped < 0 || r.Failures+r.Skipped > r.Tests || r.Ran() < 0) {
			t.Fatalf("parseReport(%q) = %+v", data, r)
		}
	})
}
