package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Expanded values reach the command as one word, byte for byte, whatever
// shell syntax they contain: checked by running the result through sh.
func TestExpandQuotesForShell(t *testing.T) {
	for _, v := range []string{
		`it's $(touch PWNED); echo "x"`,
		"`touch PWNED` && touch PWNED || touch PWNED",
		`'; touch PWNED; '`,
		`''`,
		`\'\\" $HOME ${HOME} $1 * ? [a] ~ # !`,
		"two\nlines\ttab",
		"-n",
		"",
		"ünïcödé ✓",
	} {
		dir := t.TempDir()
		cmd, err := Expand("printf %s {{prompt}}", map[string]string{"prompt": v})
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command("sh", "-c", cmd)
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			t.Errorf("sh -c %q: %v", cmd, err)
		}
		if string(out) != v {
			t.Errorf("value %q came through sh as %q (command %q)", v, out, cmd)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Errorf("value %q ran a command (command %q)", v, cmd)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"prompt": "p", "task_id": "t1", "skill_dir": "/s d"}
	for _, c := range []struct {
		tmpl, want string
	}{
		{"agent {{prompt}}", "agent 'p'"},
		{"agent {{ prompt }} --id={{task_id}}", "agent 'p' --id='t1'"},
		{"cd {{skill_dir}} && run {{prompt}}{{prompt}}", "cd '/s d' && run 'p''p'"},
		{"no placeholders", "no placeholders"},
		{"{{prompt}", "{{prompt}"},
	} {
		got, err := Expand(c.tmpl, vars)
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.tmpl, got, err, c.want)
		}
	}
}

func TestExpandUnknownPlaceholder(t *testing.T) {
	vars := map[string]string{"prompt": "p", "task_id": "t1", "skill_dir": "/s"}
	_, err := Expand("agent {{prompt}} {{promt}} {{other}}", vars)
	if err == nil {
		t.Fatal("Expand with an unknown placeholder succeeded")
	}
	for _, w := range []string{"{{promt}}", "valid: {{prompt}} {{skill_dir}} {{task_id}}"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
