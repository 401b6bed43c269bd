// Package agent runs the programs that do a rollout (an agent answering a
// task with the library in front of it) and that propose edits (a proposer
// changing the library after failures).
package agent

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var placeholder = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)

// Expand replaces each {{name}} in a command template with the value of
// vars[name] quoted as one shell word, so a prompt can never inject shell
// syntax. An unknown name is an error listing the valid ones.
func Expand(tmpl string, vars map[string]string) (string, error) {
	var bad []string
	out := placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			bad = append(bad, name)
			return m
		}
		return ShellQuote(v)
	})
	if len(bad) > 0 {
		var names []string
		for k := range vars {
			names = append(names, "{{"+k+"}}")
		}
		sort.Strings(names)
		return "", fmt.Errorf("command %q: unknown placeholder {{%s}} (valid: %s)", tmpl, bad[0], strings.Join(names, " "))
	}
	return out, nil
}

// ShellQuote quotes s as a single POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
