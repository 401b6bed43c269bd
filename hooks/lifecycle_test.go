package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// lifecycleLib is a library whose hooks write what they get into dir.
func lifecycleLib(t *testing.T, dir string) *library.Library {
	t.Helper()
	writeFile(t, filepath.Join(dir, "hook.sh"), "#!/bin/sh\ncat > \"$1\"\necho \"$DESCENT_EVENT $DESCENT_LIBRARY $(pwd)\" > \"$1.env\"\necho opened a pull request\n")
	if err := os.Chmod(filepath.Join(dir, "hook.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := library.New("skills/codes")
	l.OnCommit = "{{repo}}/hook.sh commit.json"
	l.OnPromote = "{{repo}}/hook.sh promote.json"
	return l
}

func TestRunLifecycleCommit(t *testing.T) {
	dir := t.TempDir()
	l := lifecycleLib(t, dir)
	ev := CommitEvent{Library: "codes", Dev: git.Hash(strings.Repeat("d", 40)), Parent: git.Hash(strings.Repeat("p", 40)),
		Decisions: []ledger.Decision{{ID: "x", Library: "codes", Worker: "1", Round: 2, Outcome: "committed", Reason: "better"}}}
	var out bytes.Buffer
	if err := RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: ev, Out: &out}); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, filepath.Join(dir, "commit.json"))
	if !strings.HasPrefix(data, `{"event":"commit","library":"codes","dev":"ddd`) {
		t.Errorf("on-commit got %s", data)
	}
	var got struct {
		Event string `json:"event"`
		CommitEvent
	}
	if err := json.Unmarshal([]byte(data), &got); err != nil {
		t.Fatal(err)
	}
	if got.Event != "commit" || !reflect.DeepEqual(got.CommitEvent, ev) {
		t.Errorf("on-commit got %+v, want %+v", got, ev)
	}
	if env := readFile(t, filepath.Join(dir, "commit.json.env")); env != "commit codes "+dir+"\n" {
		t.Errorf("on-commit's environment and directory: %q", env)
	}
	if out.String() != "opened a pull request\n" {
		t.Errorf("its output: %q", out.String())
	}
	// No decisions is an empty list, not null.
	if err := RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: CommitEvent{Library: "codes"}}); err != nil {
		t.Fatal(err)
	}
	if data := readFile(t, filepath.Join(dir, "commit.json")); !strings.Contains(data, `"decisions":[]`) {
		t.Errorf("on-commit got %s", data)
	}
}

func TestRunLifecyclePromote(t *testing.T) {
	dir := t.TempDir()
	l := lifecycleLib(t, dir)
	ev := &PromoteEvent{Library: "codes", Stable: "s", From: "f", Promotion: ledger.Promotion{Round: 4, From: "f", To: "s", Stable: 0.5, Dev: 0.75}}
	if err := RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: ev}); err != nil {
		t.Fatal(err)
	}
	want := `{"event":"promote","library":"codes","stable":"s","from":"f","promotion":{"round":4,"from":"f","to":"s","stable":0.5,"dev":0.75}}`
	if got := readFile(t, filepath.Join(dir, "promote.json")); got != want {
		t.Errorf("on-promote got\n%s\nwant\n%s", got, want)
	}
	if exists(filepath.Join(dir, "commit.json")) {
		t.Error("a promotion ran on-commit")
	}
}

func TestRunLifecycleFails(t *testing.T) {
	dir := t.TempDir()
	l := library.New("skills/codes")
	if err := RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: CommitEvent{}}); err != nil {
		t.Errorf("no hook configured: %v", err)
	}
	l.OnCommit = "echo no token >&2; exit 4"
	err := RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: CommitEvent{}})
	var le *LifecycleError
	var exit *sandbox.ExitError
	if !errors.As(err, &le) || !errors.As(err, &exit) || exit.ExitCode != 4 {
		t.Fatalf("a failing hook: %v", err)
	}
	if got := err.Error(); got != `on-commit hook "echo no token >&2; exit 4": exit status 4: no token` {
		t.Errorf("its message: %s", got)
	}
	l.OnPromote = "sleep 5"
	err = RunLifecycle(context.Background(), Lifecycle{Library: l, Top: dir, Event: PromoteEvent{}, Timeout: 100 * time.Millisecond})
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.Contains(err.Error(), `on-promote hook "sleep 5": timed out`) {
		t.Errorf("a hook past its timeout: %v", err)
	}
}
