package library

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

// initRequest is what `git descent init skills/pdf` asks for with only
// --run given: defaults for the rest.
func initRequest(force bool) WriteRequest {
	return WriteRequest{Name: "pdf", Path: "skills/pdf", Force: force, Settings: []Setting{
		{Key: "scorer", Values: []string{DefaultScorer}},
		{Key: "frozen", Values: []string{"evals/**"}},
		{Key: "run", Values: []string{"my-agent {{prompt}}"}, Explicit: true},
	}}
}

func write(t *testing.T, repo *git.Repo, req WriteRequest) []string {
	t.Helper()
	wrote, err := Write(context.Background(), repo, req)
	if err != nil {
		t.Fatal(err)
	}
	return wrote
}

func descentFile(t *testing.T, repo *git.Repo) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo.Top(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWriteFillsAndIsIdempotent(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	if got, want := write(t, repo, initRequest(false)), []string{"path", "scorer", "frozen", "run"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	want := "[library \"pdf\"]\n\tpath = skills/pdf\n\tscorer = exact\n\tfrozen = evals/**\n\trun = my-agent {{prompt}}\n"
	if got := descentFile(t, repo); got != want {
		t.Fatalf(".descent:\n%s\nwant:\n%s", got, want)
	}
	if got := write(t, repo, initRequest(false)); len(got) != 0 {
		t.Errorf("second write wrote %q, want nothing", got)
	}
	l, err := Find(ctx, repo, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != "skills/pdf" || l.Run != "my-agent {{prompt}}" {
		t.Errorf("read back path %q, run %q", l.Path, l.Run)
	}
}

func TestWriteMultiValued(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	req := WriteRequest{Name: "pdf", Path: "skills/pdf", Settings: []Setting{{Key: "frozen", Values: []string{"evals/**", "LICENSE"}, Explicit: true}}}
	write(t, repo, req)
	l, err := Find(ctx, repo, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"evals/**", "LICENSE"}; !reflect.DeepEqual(l.Frozen, want) {
		t.Errorf("frozen = %q, want %q", l.Frozen, want)
	}
	if got := write(t, repo, req); len(got) != 0 {
		t.Errorf("same values again wrote %q", got)
	}
}

// A default never replaces a value the user set, forced or not: forcing a
// new run must not reset the scorer (a user's report: contains became exact).
func TestWriteKeepsUserValuesOverDefaults(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	write(t, repo, initRequest(false))
	setConfig(t, repo, "library.pdf.scorer=contains", "library.pdf.frozen=tests/**")
	for _, force := range []bool{false, true} {
		req := initRequest(force)
		req.Settings[2].Values = []string{"other-agent {{prompt}}"}
		wrote, err := Write(ctx, repo, req)
		if force {
			if err != nil || !reflect.DeepEqual(wrote, []string{"run"}) {
				t.Fatalf("forced: wrote %q, %v; want run only", wrote, err)
			}
		} else if err == nil {
			t.Fatal("a different explicit run without force was written")
		}
		l, err := Find(ctx, repo, "pdf")
		if err != nil {
			t.Fatal(err)
		}
		if l.Scorer != "contains" || !reflect.DeepEqual(l.Frozen, []string{"tests/**"}) {
			t.Errorf("force %v: scorer %q, frozen %q; want the user's contains and tests/**", force, l.Scorer, l.Frozen)
		}
	}
}

func TestWriteRefusesExplicitChangeWithoutForce(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	write(t, repo, initRequest(false))
	before := descentFile(t, repo)
	req := initRequest(false)
	req.Settings = append(req.Settings, Setting{Key: "proposer", Values: []string{"p"}, Explicit: true})
	req.Settings[0] = Setting{Key: "scorer", Values: []string{"regex"}, Explicit: true}
	_, err := Write(ctx, repo, req)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	if ce.Key != "library.pdf.scorer" || !reflect.DeepEqual(ce.Found, []string{"exact"}) || !reflect.DeepEqual(ce.Want, []string{"regex"}) {
		t.Errorf("conflict %+v", ce)
	}
	want := `.descent already sets library.pdf.scorer = "exact"; not replacing it with "regex" (edit .descent, or re-run with --force)`
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if got := descentFile(t, repo); got != before {
		t.Errorf("a refused write changed .descent (proposer is missing there, so nothing may be written):\n%s", got)
	}
	req.Force = true
	if got := write(t, repo, req); !reflect.DeepEqual(got, []string{"scorer", "proposer"}) {
		t.Errorf("forced: wrote %q, want scorer and proposer", got)
	}
}

func TestPathTaken(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	write(t, repo, initRequest(false))
	if err := CheckPath(ctx, repo, "pdf", "skills/pdf"); err != nil {
		t.Errorf("its own path: %v", err)
	}
	if err := CheckPath(ctx, repo, "other", "skills/other"); err != nil {
		t.Errorf("a free path: %v", err)
	}
	want := &PathTakenError{Path: "skills/pdf", Library: "pdf"}
	err := CheckPath(ctx, repo, "pdf2", "skills/pdf")
	var pt *PathTakenError
	if !errors.As(err, &pt) || *pt != *want {
		t.Fatalf("CheckPath: %v, want %v", err, want)
	}
	if err.Error() != `skills/pdf is already configured as library "pdf" in .descent` {
		t.Errorf("error %q", err)
	}
	_, err = Write(ctx, repo, WriteRequest{Name: "pdf2", Path: "skills/pdf", Force: true})
	if !errors.As(err, &pt) || *pt != *want {
		t.Errorf("Write, forced: %v, want %v", err, want)
	}
}
