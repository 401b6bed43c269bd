package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-descent/git-descent/internal/fakellm"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-descent": func() { os.Exit(run()) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/scripts, one behaviour
// each, against real git in a fresh HOME with fixed identities and dates.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "scripts"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setupScript,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			// A local OpenAI-compatible server serving the script's scripted replies.
			"fakellm": fakellm.Cmd,
		},
	})
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
