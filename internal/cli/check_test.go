package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Agents and proposers run outside the repository, so a path in it is
// refused for them with the {{repo}} fix; the scorer runs at the
// repository's root, where the same path works.
func TestCheckCommandPathsInTheRepository(t *testing.T) {
	top := t.TempDir()
	if err := os.MkdirAll(filepath.Join(top, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "tools", "x.py"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"run", "proposer", "oracle"} {
		if _, err := checkCommand(key, "python3 tools/x.py", top, "skills/s"); err == nil || !strings.Contains(err.Error(), "write {{repo}}/tools/x.py") {
			t.Errorf("%s: %v, want the {{repo}} fix", key, err)
		}
		if _, err := checkCommand(key, "{{repo}}/tools/x.py {{prompt}}", top, "skills/s"); err != nil {
			t.Errorf("%s with {{repo}}: %v", key, err)
		}
	}
	if _, err := checkCommand("score-command", "python3 tools/x.py", top, "skills/s"); err != nil {
		t.Errorf("score-command: %v, want it accepted (it runs at the root)", err)
	}
	if _, err := checkCommand("run", "sh skills/s/scripts/run.sh", top, "skills/s"); err != nil {
		t.Errorf("a path in the library (laid out in the workspace): %v", err)
	}
}
