package rollout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/library"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The cache key covers the content of the script the run command names (by
// absolute path or relative to the repository), of a script found on
// PATH, and of the files the fingerprint globs name: editing any of them
// changes the key.
func TestConfigHashCoversTheFilesItRuns(t *testing.T) {
	top := t.TempDir()
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	write(t, filepath.Join(top, "tools", "agent.py"), "print('v1')\n")
	write(t, filepath.Join(top, "tools", "lib", "util.py"), "X = 1\n")
	write(t, filepath.Join(bin, "my-agent"), "#!/bin/sh\necho v1\n")
	abs := filepath.Join(t.TempDir(), "score.sh")
	write(t, abs, "#!/bin/sh\necho 1\n")

	lib := library.New("skills/s")
	lib.Run = "python3 tools/agent.py --prompt {{prompt}} && my-agent"
	lib.ScoreCommand = "'" + abs + "' --strict"
	lib.Fingerprint = []string{"tools/lib/**"}
	hash := func() string {
		t.Helper()
		h, err := ConfigHash(lib, top)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := hash()
	if hash() != first {
		t.Fatal("the key is not stable")
	}
	// A CLI agent's own settings are part of the key.
	withAgent, err := ConfigHash(lib, top, "model gpt-5.4\x00config.toml ...")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ConfigHash(lib, top, "model gpt-5.4\x00config.toml ..."); withAgent == first || again != withAgent {
		t.Fatalf("agent settings: %s, %s, first %s", withAgent, again, first)
	}
	for _, edit := range []struct{ path, content string }{
		{filepath.Join(top, "tools", "agent.py"), "print('v2')\n"},
		{filepath.Join(top, "tools", "lib", "util.py"), "X = 2\n"},
		{abs, "#!/bin/sh\necho 0\n"},
	} {
		before := hash()
		write(t, edit.path, edit.content)
		if hash() == before {
			t.Errorf("editing %s did not change the key", edit.path)
		}
	}
	// my-agent is the second command of the line, not its first word: only
	// the first word is looked up on PATH.
	lib.Run = "my-agent --prompt {{prompt}}"
	before := hash()
	write(t, filepath.Join(bin, "my-agent"), "#!/bin/sh\necho v2\n")
	if hash() == before {
		t.Error("editing the script on PATH did not change the key")
	}
	lib.Fingerprint = []string{"nothing/**"}
	if _, err := ConfigHash(lib, top); err == nil || !strings.Contains(err.Error(), `fingerprint "nothing/**" matches no file`) {
		t.Errorf("a glob matching nothing: %v", err)
	}
}

func TestCommandWords(t *testing.T) {
	got := strings.Join(commandWords(`FOO=1 python3 "tools/a b.py" {{prompt}} --x=y/z.txt | tee 'out.log'; ./run.sh`), ",")
	if want := "1,python3,tools/a b.py,y/z.txt,tee,out.log,./run.sh"; got != want {
		t.Errorf("words = %s, want %s", got, want)
	}
}
