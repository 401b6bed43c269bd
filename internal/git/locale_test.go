package git

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// git runs in the C locale whatever the user's, so the messages this
// package reads (and those users see in errors) are git's English ones.
func TestErrorsInAnyLocale(t *testing.T) {
	for _, locale := range []struct {
		name string
		env  map[string]string
	}{
		{"de_DE.UTF-8", map[string]string{"LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8", "LANGUAGE": "de"}},
		// glibc honours LANGUAGE in C.UTF-8 (not in C), so this one
		// translates even where no German locale is installed.
		{"C.UTF-8 with LANGUAGE=de", map[string]string{"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LANGUAGE": "de"}},
	} {
		t.Run(locale.name, func(t *testing.T) {
			ctx := context.Background()
			r := testRepo(t)
			outside := t.TempDir()
			t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(outside))
			var env []string
			for k, v := range locale.env {
				t.Setenv(k, v)
				env = append(env, k+"="+v)
			}
			// With the locale forced past gitEnv git must translate, or
			// this test could not fail.
			_, _, err := runGit(ctx, nil, cmd{dir: outside, env: env}, "rev-parse", "--git-dir")
			var ce *CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("git rev-parse outside a repository: %v", err)
			}
			if strings.Contains(ce.Stderr, "not a git repository") {
				t.Skipf("git speaks English in %s here (locale not installed, or git without German messages), so this test cannot fail; "+
					"to run it: apt-get install locales && localedef -i de_DE -f UTF-8 de_DE.UTF-8", locale.name)
			}

			if _, err := Open(ctx, outside, nil); !errors.Is(err, ErrNotRepository) {
				t.Errorf("Open outside a repository = %v, want ErrNotRepository", err)
			}
			a := commitFile(t, r, "", "f", "1")
			b := commitFile(t, r, a, "f", "2")
			if err := r.SetRef(ctx, SetRefRequest{Ref: "refs/heads/x", Hash: a}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				req  SetRefRequest
			}{
				{"ref already exists", SetRefRequest{Ref: "refs/heads/x", Hash: b}},
				{"wrong old value", SetRefRequest{Ref: "refs/heads/x", Hash: b, OldHash: b}},
			} {
				err := r.SetRef(ctx, c.req)
				var lost *RefChangedError
				if !errors.As(err, &lost) {
					t.Errorf("%s: SetRef = %v, want a *RefChangedError", c.name, err)
					continue
				}
				if lost.Ref != "refs/heads/x" || !strings.HasPrefix(lost.Stderr, "fatal: ") || !strings.Contains(lost.Stderr, "cannot lock ref 'refs/heads/x'") {
					t.Errorf("%s: RefChangedError{Ref: %q, Stderr: %q}, want the ref and git's C-locale message", c.name, lost.Ref, lost.Stderr)
				}
			}
		})
	}
}

// RefChangedError names the ref git's message names.
func TestRefChanged(t *testing.T) {
	for stderr, want := range map[string]string{
		"fatal: update_ref failed for ref 'refs/heads/x': cannot lock ref 'refs/heads/x': reference already exists\n": "refs/heads/x",
		"fatal: cannot lock ref 'refs/descent/a b/dev': is at 1111 but expected 2222\n":                               "refs/descent/a b/dev",
		"fatal: unable to resolve reference 'refs/heads/y'\n":                                                         "",
	} {
		if ref, lost := refChanged(stderr); !lost || ref != want {
			t.Errorf("refChanged(%q) = %q, %v; want %q, true", stderr, ref, lost, want)
		}
	}
	if _, lost := refChanged("fatal: bad object deadbeef\n"); lost {
		t.Error("refChanged took a bad object for a lost race")
	}
}
