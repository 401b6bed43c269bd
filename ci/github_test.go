package ci

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The keys GitHub documents for a workflow, a job and a step
// (docs.github.com, "Workflow syntax for GitHub Actions").
var (
	githubTop  = []string{"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
	githubJob  = []string{"name", "permissions", "needs", "if", "runs-on", "environment", "concurrency", "outputs", "env", "defaults", "steps", "timeout-minutes", "strategy", "continue-on-error", "container", "services", "uses", "with", "secrets"}
	githubStep = []string{"id", "if", "name", "uses", "run", "working-directory", "shell", "with", "env", "continue-on-error", "timeout-minutes"}
)

// secretRef is the one way a workflow may name a secret: a whole value.
var secretRef = regexp.MustCompile(`^\$\{\{ secrets\.([A-Za-z_][A-Za-z0-9_]*) \}\}$`)

// TestGitHubShape parses each generated workflow and checks it against the
// shape GitHub documents, and against what the jobs must do.
func TestGitHubShape(t *testing.T) {
	for name, lib := range libraries() {
		for _, workers := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/%d", name, workers), func(t *testing.T) {
				w, err := GitHub(Input{Library: lib}, options(workers))
				if err != nil {
					t.Fatal(err)
				}
				if w.Path != ".github/workflows/descent-"+lib.Name+".yml" {
					t.Errorf("path %q", w.Path)
				}
				d := parse(t, w.Content)
				onlyKeys(t, "workflow", d, githubTop...)
				mustKeys(t, "workflow", d, "on", "jobs", "permissions", "concurrency")
				checkGitHubTriggers(t, d)
				if p := get(t, d, "permissions").(doc); len(p) != 1 || p["contents"] != "write" {
					t.Errorf("permissions %v, want contents: write alone", p)
				}
				if c := get(t, d, "concurrency").(doc); c["group"] != "git-descent-"+lib.Name || c["cancel-in-progress"] != false {
					t.Errorf("concurrency %v", c)
				}
				jobs := get(t, d, "jobs").(doc)
				if got := keys(jobs); !slices.Equal(got, []string{"aggregate", "decide", "work"}) {
					t.Fatalf("jobs %v", got)
				}
				for id, j := range jobs {
					checkGitHubJob(t, id, j.(doc))
				}
				checkGitHubMatrix(t, jobs, workers)
				checkGitHubCommands(t, jobs, lib.Name)
				checkGitHubDecide(t, jobs)
				checkGitHubSecrets(t, w, d)
			})
		}
	}
}

func checkGitHubTriggers(t *testing.T, d doc) {
	t.Helper()
	on := get(t, d, "on").(doc)
	onlyKeys(t, "on", on, "workflow_dispatch")
	input := get(t, on, "workflow_dispatch", "inputs", "max-time").(doc)
	if input["type"] != "string" || input["default"] != "1h" || input["description"] == "" {
		t.Errorf("max-time input %v", input)
	}
	if got := get(t, d, "env", "DESCENT_MAX_TIME"); got != "${{ inputs.max-time || '1h' }}" {
		t.Errorf("DESCENT_MAX_TIME = %q: a scheduled run, without inputs, needs the default", got)
	}
}

// checkGitHubJob checks one job: runs-on and steps, each step one of uses
// or run, and a checkout of all of history first.
func checkGitHubJob(t *testing.T, id string, j doc) {
	t.Helper()
	onlyKeys(t, "job "+id, j, githubJob...)
	if s, ok := j["runs-on"].(string); !ok || s == "" {
		t.Errorf("job %s: runs-on %v", id, j["runs-on"])
	}
	steps, ok := j["steps"].([]any)
	if !ok || len(steps) == 0 {
		t.Fatalf("job %s: no steps", id)
	}
	for i, s := range steps {
		step := s.(doc)
		what := fmt.Sprintf("job %s step %d", id, i)
		onlyKeys(t, what, step, githubStep...)
		_, uses := step["uses"]
		_, run := step["run"]
		if uses == run {
			t.Errorf("%s: has uses %v and run %v; GitHub wants exactly one", what, uses, run)
		}
		if u, ok := step["uses"].(string); ok && !regexp.MustCompile(`^[\w.-]+/[\w.-]+@v[0-9]+$`).MatchString(u) {
			t.Errorf("%s: uses %q is not owner/repo@vN", what, u)
		}
		if w, ok := step["with"]; ok {
			if _, ok := w.(doc); !ok || !uses {
				t.Errorf("%s: with %v belongs to a uses step, as a mapping", what, w)
			}
		}
	}
	first := steps[0].(doc)
	if first["uses"] != "actions/checkout@v4" || get(t, first, "with", "fetch-depth") != 0 || get(t, first, "with", "persist-credentials") != true {
		t.Errorf("job %s: first step %v, want actions/checkout@v4 with fetch-depth 0, keeping its credentials", id, first)
	}
	if !slices.ContainsFunc(steps, func(s any) bool { return s.(doc)["uses"] == "actions/setup-go@v5" }) {
		t.Errorf("job %s: no actions/setup-go", id)
	}
	if !slices.ContainsFunc(steps, func(s any) bool { return strings.Contains(fmt.Sprint(s.(doc)["run"]), "git config user.email") }) {
		t.Errorf("job %s: no git identity", id)
	}
}

func checkGitHubMatrix(t *testing.T, jobs doc, workers int) {
	t.Helper()
	strategy := get(t, jobs, "work", "strategy").(doc)
	if strategy["fail-fast"] != false {
		t.Errorf("fail-fast %v: one failed worker would cancel the others", strategy["fail-fast"])
	}
	ids := get(t, strategy, "matrix", "worker").([]any)
	if len(ids) != workers {
		t.Fatalf("matrix %v, want %d workers", ids, workers)
	}
	for i, id := range ids {
		if id != i+1 {
			t.Errorf("matrix %v, want 1..%d", ids, workers)
		}
	}
	for _, id := range []string{"aggregate", "decide"} {
		if _, ok := jobs[id].(doc)["strategy"]; ok {
			t.Errorf("job %s has a matrix: there is one aggregator", id)
		}
	}
}

// lastRun is a job's last step's command.
func lastRun(t *testing.T, jobs doc, id string) string {
	t.Helper()
	steps := get(t, jobs, id, "steps").([]any)
	return fmt.Sprint(steps[len(steps)-1].(doc)["run"])
}

func checkGitHubCommands(t *testing.T, jobs doc, lib string) {
	t.Helper()
	for id, want := range map[string]string{
		"work":      `git descent work ` + lib + ` --worker "${{ matrix.worker }}" --remote origin --max-time "$DESCENT_MAX_TIME"`,
		"aggregate": `git descent aggregate ` + lib + ` --remote origin --watch --idle 20m --max-time "$DESCENT_MAX_TIME"`,
		"decide":    `git descent aggregate ` + lib + ` --remote origin`,
	} {
		if got := lastRun(t, jobs, id); got != want {
			t.Errorf("job %s runs\n  %s\nwant\n  %s", id, got, want)
		}
	}
	for id := range jobs {
		steps := get(t, jobs, id, "steps").([]any)
		if !slices.ContainsFunc(steps, func(s any) bool {
			return strings.Contains(fmt.Sprint(s.(doc)["run"]), "go install github.com/git-descent/git-descent/cmd/git-descent@v0.4.0\n")
		}) {
			t.Errorf("job %s does not install git-descent v0.4.0", id)
		}
	}
}

func checkGitHubDecide(t *testing.T, jobs doc) {
	t.Helper()
	decide := jobs["decide"].(doc)
	needs, _ := decide["needs"].([]any)
	if !slices.Contains(needs, any("work")) || !slices.Contains(needs, any("aggregate")) {
		t.Errorf("decide needs %v, want work and aggregate", decide["needs"])
	}
	if decide["if"] != "${{ !cancelled() }}" {
		t.Errorf("decide if %v: it must run after a failed worker", decide["if"])
	}
	for _, id := range []string{"work", "aggregate"} {
		if _, ok := jobs[id].(doc)["needs"]; ok {
			t.Errorf("job %s waits for another: workers and the aggregator run at once", id)
		}
	}
}

// checkGitHubSecrets checks that every secret is named as a whole value
// ${{ secrets.NAME }} of the variable NAME in a step's env, only in the
// steps that run git-descent, and that every secret the library needs is
// there.
func checkGitHubSecrets(t *testing.T, w *Workflow, d doc) {
	t.Helper()
	walk(d, "", func(path, s string) {
		if !strings.Contains(s, "secrets.") {
			return
		}
		m := secretRef.FindStringSubmatch(s)
		if m == nil || !regexp.MustCompile(`^/jobs/\w+/steps/\d+/env/`+m[1]+`$`).MatchString(path) {
			t.Errorf("%s = %q: a secret goes in a step's env, as ${{ secrets.NAME }} for NAME", path, s)
		}
	})
	for _, ref := range regexp.MustCompile(`secrets\.[^ }]*`).FindAllString(string(w.Content), -1) {
		if !regexp.MustCompile(`^secrets\.[A-Za-z_][A-Za-z0-9_]*$`).MatchString(ref) {
			t.Errorf("%q: not a secret's name", ref)
		}
	}
	jobs := get(t, d, "jobs").(doc)
	for id := range jobs {
		steps := get(t, jobs, id, "steps").([]any)
		for i, s := range steps {
			env, _ := s.(doc)["env"].(doc)
			if i < len(steps)-1 && env != nil {
				t.Errorf("job %s step %d has env %v: only git-descent's step sees secrets", id, i, keys(env))
			}
		}
		env, _ := steps[len(steps)-1].(doc)["env"].(doc)
		for _, s := range w.Needs.Real() {
			if env[s.Name] != "${{ secrets."+s.Name+" }}" {
				t.Errorf("job %s: %s is %v", id, s.Name, env[s.Name])
			}
		}
		if len(env) != len(w.Needs.Real()) {
			t.Errorf("job %s env %v, want the secrets %v", id, keys(env), w.Needs.Real())
		}
	}
}

// TestGitHubNeedsNoSecretAtAll leaves out env when the library needs no
// secret, rather than writing an empty one.
func TestGitHubNeedsNoSecretAtAll(t *testing.T) {
	lib := libraries()["command"]
	lib.Env = nil
	w, err := GitHub(Input{Library: lib}, options(2))
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, w.Content)
	for id := range get(t, d, "jobs").(doc) {
		steps := get(t, d, "jobs", id, "steps").([]any)
		if _, ok := steps[len(steps)-1].(doc)["env"]; ok {
			t.Errorf("job %s has an env", id)
		}
	}
	if !strings.Contains(string(w.Content), "# The library's agents need no secret.") {
		t.Errorf("the header does not say no secret is needed:\n%s", w.Content)
	}
}

// TestGitHubCLIAgents installs Node and the agent a preset names, and the
// bubblewrap step matches the library's isolation.
func TestGitHubCLIAgents(t *testing.T) {
	libs := libraries()
	for _, c := range []struct {
		lib, install string
		bwrap        bool
		tolerated    bool
	}{
		{"claude", "npm install -g @anthropic-ai/claude-code", true, true},
		{"codex", "npm install -g @openai/codex", true, false},
		{"command", "", false, false},
	} {
		w, err := GitHub(Input{Library: libs[c.lib]}, options(2))
		if err != nil {
			t.Fatal(err)
		}
		d := parse(t, w.Content)
		steps := get(t, d, "jobs", "work", "steps").([]any)
		find := func(f func(doc) bool) doc {
			for _, s := range steps {
				if f(s.(doc)) {
					return s.(doc)
				}
			}
			return nil
		}
		node := find(func(s doc) bool { return s["uses"] == "actions/setup-node@v4" })
		agent := find(func(s doc) bool { return s["run"] == c.install })
		if (node != nil) != (c.install != "") || (agent != nil) != (c.install != "") {
			t.Errorf("%s: setup-node %v, install %v; want them iff %q", c.lib, node, agent, c.install)
		}
		bwrap := find(func(s doc) bool { return strings.Contains(fmt.Sprint(s["run"]), "bubblewrap") })
		if (bwrap != nil) != c.bwrap {
			t.Errorf("%s: bubblewrap step %v, want %v", c.lib, bwrap, c.bwrap)
		}
		if bwrap != nil && (bwrap["continue-on-error"] == true) != c.tolerated {
			t.Errorf("%s: continue-on-error %v; only isolation = auto may go on without bwrap", c.lib, bwrap["continue-on-error"])
		}
	}
}
