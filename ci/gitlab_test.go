package ci

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The keywords GitLab documents (docs.gitlab.com, "CI/CD YAML syntax
// reference"): the global ones a file included into another pipeline may
// set without changing that pipeline's own jobs, and a job's.
var (
	gitlabGlobal = []string{"stages"}
	gitlabJob    = []string{"after_script", "allow_failure", "artifacts", "before_script", "cache", "coverage", "dependencies",
		"environment", "extends", "hooks", "id_tokens", "image", "inherit", "interruptible", "needs", "parallel", "release",
		"resource_group", "retry", "rules", "script", "secrets", "services", "stage", "tags", "timeout", "trigger", "variables", "when"}
)

// resolve applies a job's extends the way GitLab does: the hidden job's
// keys, then the job's own (a mapping merged key by key, anything else
// replaced).
func resolve(t *testing.T, d doc, job doc) doc {
	t.Helper()
	base, ok := job["extends"].(string)
	if !ok {
		return job
	}
	out := maps.Clone(get(t, d, base).(doc))
	for k, v := range job {
		if m, ok := v.(doc); ok {
			if bm, ok := out[k].(doc); ok {
				merged := maps.Clone(bm)
				maps.Copy(merged, m)
				v = merged
			}
		}
		out[k] = v
	}
	delete(out, "extends")
	return out
}

// TestGitLabShape parses each generated file and checks it against the
// shape GitLab documents, and against what the jobs must do.
func TestGitLabShape(t *testing.T) {
	for name, lib := range libraries() {
		for _, workers := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/%d", name, workers), func(t *testing.T) {
				w, err := GitLab(Input{Library: lib}, options(workers))
				if err != nil {
					t.Fatal(err)
				}
				if w.Path != "ci/descent-"+lib.Name+".gitlab-ci.yml" {
					t.Errorf("path %q", w.Path)
				}
				d := parse(t, w.Content)
				stages := get(t, d, "stages").([]any)
				if !slices.Equal(stages, []any{"descent", "descent-decide"}) {
					t.Errorf("stages %v", stages)
				}
				prefix := "descent-" + lib.Name + "-"
				jobs := map[string]doc{}
				for k, v := range d {
					switch {
					case slices.Contains(gitlabGlobal, k):
					case k == ".descent-"+lib.Name:
						onlyKeys(t, k, v.(doc), gitlabJob...)
					case strings.HasPrefix(k, prefix):
						onlyKeys(t, k, v.(doc), gitlabJob...)
						jobs[strings.TrimPrefix(k, prefix)] = resolve(t, d, v.(doc))
					default:
						t.Errorf("top-level key %q: neither a job of this library nor a keyword an included file may set", k)
					}
				}
				if got := slices.Sorted(maps.Keys(jobs)); !slices.Equal(got, []string{"aggregate", "decide", "work"}) {
					t.Fatalf("jobs %v", got)
				}
				for id, j := range jobs {
					checkGitLabJob(t, id, j, stages)
				}
				checkGitLabParallel(t, jobs, workers)
				checkGitLabCommands(t, jobs, lib.Name)
				checkGitLabAggregators(t, jobs, lib.Name)
				checkGitLabSecrets(t, w)
			})
		}
	}
}

// checkGitLabJob checks one job, extends applied: a stage, a script, all of
// history, the rules, the push URL, and variables GitLab can take.
func checkGitLabJob(t *testing.T, id string, j doc, stages []any) {
	t.Helper()
	mustKeys(t, id, j, "stage", "script", "image", "rules", "before_script", "timeout")
	if !slices.Contains(stages, j["stage"]) {
		t.Errorf("job %s: stage %v is not one of %v", id, j["stage"], stages)
	}
	for _, k := range []string{"script", "before_script", "after_script"} {
		list, ok := j[k].([]any)
		if !ok || len(list) == 0 {
			t.Errorf("job %s: %s %v is not a list of commands", id, k, j[k])
		}
		for _, c := range list {
			if _, ok := c.(string); !ok {
				t.Errorf("job %s: %s holds %#v, not a command", id, k, c)
			}
		}
	}
	vars := get(t, j, "variables").(doc)
	for k, v := range vars {
		if _, ok := v.(string); !ok {
			t.Errorf("job %s: variable %s = %#v, not a string", id, k, v)
		}
	}
	if vars["GIT_DEPTH"] != "0" || vars["GIT_STRATEGY"] != "clone" || vars["DESCENT_MAX_TIME"] != "1h" {
		t.Errorf("job %s: variables %v", id, vars)
	}
	if !regexp.MustCompile(`^[0-9]+ minutes$`).MatchString(fmt.Sprint(j["timeout"])) {
		t.Errorf("job %s: timeout %v", id, j["timeout"])
	}
	for _, r := range j["rules"].([]any) {
		cond := fmt.Sprint(r.(doc)["if"])
		if !strings.Contains(cond, `$CI_PIPELINE_SOURCE == "web"`) || !strings.Contains(cond, `$CI_PIPELINE_SOURCE == "schedule"`) || strings.Contains(cond, "push") {
			t.Errorf("job %s: rule %v: run by hand or on a schedule, never on a push", id, r)
		}
	}
	before := strings.Join(strings.Fields(fmt.Sprint(j["before_script"])), " ")
	for _, want := range []string{"go install github.com/git-descent/git-descent/cmd/git-descent@v0.4.0", "git config user.email",
		`git remote set-url --push origin "$CI_SERVER_PROTOCOL://oauth2:$DESCENT_PUSH_TOKEN@${CI_REPOSITORY_URL#*@}"`} {
		if !strings.Contains(before, want) {
			t.Errorf("job %s: before_script does not %q", id, want)
		}
	}
}

func checkGitLabParallel(t *testing.T, jobs map[string]doc, workers int) {
	t.Helper()
	p, ok := jobs["work"]["parallel"]
	switch {
	case workers == 1 && ok:
		t.Errorf("parallel %v for one worker", p)
	case workers > 1 && p != workers:
		t.Errorf("parallel %v, want %d", p, workers)
	}
	for _, id := range []string{"aggregate", "decide"} {
		if _, ok := jobs[id]["parallel"]; ok {
			t.Errorf("job %s is parallel: there is one aggregator", id)
		}
	}
}

func checkGitLabCommands(t *testing.T, jobs map[string]doc, lib string) {
	t.Helper()
	for id, want := range map[string]string{
		"work":      `git descent work ` + lib + ` --worker "${CI_NODE_INDEX:-1}" --remote origin --max-time "$DESCENT_MAX_TIME"`,
		"aggregate": `git descent aggregate ` + lib + ` --remote origin --watch --idle 20m --max-time "$DESCENT_MAX_TIME"`,
		"decide":    `git descent aggregate ` + lib + ` --remote origin`,
	} {
		if got := jobs[id]["script"].([]any); len(got) != 1 || got[0] != want {
			t.Errorf("job %s runs %q, want %q", id, got, want)
		}
	}
}

// checkGitLabAggregators checks that one aggregator runs at a time, and
// that the last one runs after the workers even when one failed.
func checkGitLabAggregators(t *testing.T, jobs map[string]doc, lib string) {
	t.Helper()
	for _, id := range []string{"aggregate", "decide"} {
		if jobs[id]["resource_group"] != "git-descent-"+lib {
			t.Errorf("job %s: resource_group %v", id, jobs[id]["resource_group"])
		}
	}
	if _, ok := jobs["work"]["resource_group"]; ok {
		t.Error("the workers share a resource group: they would run one at a time")
	}
	if jobs["work"]["stage"] != jobs["aggregate"]["stage"] || jobs["decide"]["stage"] != "descent-decide" {
		t.Errorf("stages: work %v, aggregate %v, decide %v", jobs["work"]["stage"], jobs["aggregate"]["stage"], jobs["decide"]["stage"])
	}
	rules := jobs["decide"]["rules"].([]any)
	if len(rules) != 1 || rules[0].(doc)["when"] != "always" {
		t.Errorf("decide's rules %v: it must run after a failed worker", rules)
	}
}

// checkGitLabSecrets checks that the file names its variables and holds
// no GitHub-style secret: GitLab puts CI/CD variables in the environment.
func checkGitLabSecrets(t *testing.T, w *Workflow) {
	t.Helper()
	s := string(w.Content)
	if strings.Contains(s, "secrets.") {
		t.Error("a GitLab file with ${{ secrets }}")
	}
	if w.Needs.Secrets[0].Name != "DESCENT_PUSH_TOKEN" {
		t.Errorf("secrets %v: the push token first", w.Needs.Secrets)
	}
	for _, sec := range w.Needs.Secrets {
		if !strings.Contains(s, "#   "+sec.Name+": ") {
			t.Errorf("the header does not name %s", sec.Name)
		}
	}
	for _, use := range regexp.MustCompile(`\S*DESCENT_PUSH_TOKEN\S*`).FindAllString(s, -1) {
		if !strings.Contains(use, "$DESCENT_PUSH_TOKEN") && use != "DESCENT_PUSH_TOKEN:" && use != "DESCENT_PUSH_TOKEN" {
			t.Errorf("DESCENT_PUSH_TOKEN used as %q", use)
		}
	}
}
