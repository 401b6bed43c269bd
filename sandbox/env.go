package sandbox

import (
	"os"
	"strings"
)

// baseAllowed are the variables every process keeps: enough for a shell and
// a CLI to run, nothing that carries a credential.
var baseAllowed = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL"}

// Environ builds a scrubbed environment: the variables of the current
// process named in baseAllowed or allow (exact names, or prefixes ending in
// "*", e.g. "ANTHROPIC_*"), then set applied on top. PATH has the directory
// of the running git-descent first, so `git-descent` subcommands resolve.
func Environ(allow []string, set map[string]string, exePath string) []string {
	names := append(append([]string(nil), baseAllowed...), allow...)
	keep := func(k string) bool {
		for _, n := range names {
			if n == k || strings.HasSuffix(n, "*") && strings.HasPrefix(k, strings.TrimSuffix(n, "*")) {
				return true
			}
		}
		return false
	}
	vars := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if keep(k) {
			put(k, v)
		}
	}
	if exePath != "" {
		put("PATH", exePath)
	}
	for k, v := range set {
		put(k, v)
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env
}
