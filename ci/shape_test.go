package ci

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/git-descent/git-descent/library"
)

// doc is a parsed YAML document, as yaml.v3 decodes one into any: maps,
// lists, strings, ints and bools.
type doc = map[string]any

// parse reads a generated file as YAML, failing the test with the file
// when it does not parse.
func parse(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, b)
	}
	return d
}

// get follows a path of map keys and list indexes through a document.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for i, k := range path {
		switch k := k.(type) {
		case string:
			m, ok := v.(doc)
			if !ok {
				t.Fatalf("%v: not a mapping: %#v", path[:i], v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("%v: no key %q (keys: %v)", path[:i], k, keys(m))
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d in %#v", path[:i], k, v)
			}
			v = l[k]
		}
	}
	return v
}

func keys(m doc) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// onlyKeys fails the test when m has a key outside allowed: a misspelt or
// invented keyword, which GitHub and GitLab refuse.
func onlyKeys(t *testing.T, what string, m doc, allowed ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: key %q is not one the CI system documents (%s)", what, k, strings.Join(allowed, ", "))
		}
	}
}

// mustKeys fails the test when m lacks one of required.
func mustKeys(t *testing.T, what string, m doc, required ...string) {
	t.Helper()
	for _, k := range required {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q", what, k)
		}
	}
}

// strings walks a document and calls f on every key and scalar, with the
// path that leads to it.
func walk(v any, path string, f func(path string, s string)) {
	switch v := v.(type) {
	case doc:
		for k, x := range v {
			f(path+"/"+k, k)
			walk(x, path+"/"+k, f)
		}
	case []any:
		for i, x := range v {
			walk(x, fmt.Sprintf("%s/%d", path, i), f)
		}
	default:
		f(path, fmt.Sprint(v))
	}
}

// libraries are the configurations the shape tests generate for: each
// agent kind, a judge, commands with env names and patterns, an odd path.
func libraries() map[string]*library.Library {
	claude := library.New("skills/pdf-audit")
	claude.Run, claude.Proposer = library.RunnerClaude, library.RunnerClaude

	codex := library.New("skills/codes")
	codex.Run, codex.Proposer, codex.Isolation = library.RunnerCodex, library.RunnerCodex, "bwrap"

	chat := library.New("skills/chat")
	chat.Run, chat.Proposer, chat.Scorer = library.RunnerOpenAI, library.RunnerOpenAI, "contains*0.3, judge*0.7"
	chat.Provider.BaseURL, chat.Provider.KeyEnv, chat.Provider.Model = "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat"

	command := library.New("prompts/with space/odd: #name")
	command.Name = "odd.name_1"
	command.Run, command.Proposer = "{{repo}}/tools/agent {{prompt}}", "my-proposer {{failures_file}}"
	command.Env, command.Isolation = []string{"CORP_KEY", "CORP_*"}, "none"

	mixed := library.New("skills/mixed")
	mixed.Run, mixed.Proposer = library.RunnerClaude, library.RunnerOpenAI
	mixed.Provider.Model = "gpt-4.1-mini"

	return map[string]*library.Library{"claude": claude, "codex": codex, "chat": chat, "command": command, "mixed": mixed}
}

func options(workers int) Options {
	return Options{Workers: workers, MaxTime: DefaultMaxTime, Idle: DefaultIdle, Version: "v0.4.0"}
}
