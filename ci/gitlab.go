package ci

import (
	"fmt"
	"time"
)

// MaxGitLabWorkers is the most jobs GitLab's parallel makes of one.
const MaxGitLabWorkers = 200

// GitLabPath is where the GitLab CI file of a library goes, relative to the
// repository's top: beside, never in, the project's .gitlab-ci.yml, which
// includes it.
func GitLabPath(lib string) string { return "ci/descent-" + lib + ".gitlab-ci.yml" }

// pushToken is the CI/CD variable holding the token the GitLab jobs push
// with: CI_JOB_TOKEN cannot push.
const pushToken = "DESCENT_PUSH_TOKEN"

// GitLab writes the GitLab CI file that evolves in's library, for the
// project's .gitlab-ci.yml to include: two stages of its own; a job with
// parallel: o.Workers (CI_NODE_INDEX is the worker's id) and an aggregator
// beside it, then a decide job that also runs when a worker failed; the
// aggregators share a resource group, GitLab's concurrency control. Jobs
// clone all of history (GIT_DEPTH 0), run only in pipelines started by
// hand, by the API or by a schedule, and push with the project access token
// in DESCENT_PUSH_TOKEN. The library's secrets are CI/CD variables of the
// same names, which GitLab puts in every job's environment: the file only
// names them.
func GitLab(in Input, o Options) (*Workflow, error) {
	p, err := newPlan("gitlab", in, o, MaxGitLabWorkers)
	if err != nil {
		return nil, err
	}
	p.Path = GitLabPath(in.Library.Name)
	p.SecretsWhere = []string{"CI/CD variables to add (Settings > CI/CD > Variables), masked; a protected one", "reaches only protected branches:"}
	p.worker = "${CI_NODE_INDEX:-1}"
	p.Needs.Secrets = append([]Secret{{Name: pushToken, For: "a project access token with the write_repository scope (role Developer), which the jobs push with"}}, p.Needs.Secrets...)
	switch in.Library.Isolation {
	case "bwrap":
		p.Needs.note("isolation = bwrap needs unprivileged user namespaces, which GitLab's Docker runners do not allow unless configured to: there the run stops")
	case "none":
		p.Needs.note("isolation = none: the agents run unisolated on the runner, where they could read the push token in the clone's .git/config")
	default:
		p.Needs.note("on GitLab's Docker runners bubblewrap usually cannot work, so isolation = auto runs the agents unisolated, where they could read the push token in the clone's .git/config")
	}
	return p.workflow("gitlab")
}

// Job is the name of one of the GitLab jobs: work, aggregate or decide.
func (p *plan) Job(kind string) string { return "descent-" + p.Lib.Name + "-" + kind }

// Hidden is the hidden job the GitLab jobs extend.
func (p *plan) Hidden() string { return ".descent-" + p.Lib.Name }

// Sources is the rule that runs the GitLab jobs: in pipelines started from
// the web, the API (glab ci run) or a schedule, never on a push.
func (p *plan) Sources() string {
	return `$CI_PIPELINE_SOURCE == "web" || $CI_PIPELINE_SOURCE == "api" || $CI_PIPELINE_SOURCE == "schedule"`
}

// Timeout is the GitLab jobs' timeout: --max-time and half an hour for
// installing and the last push (a project's default is one hour).
func (p *plan) Timeout() string {
	return fmt.Sprintf("%d minutes", int((p.MaxTime + 30*time.Minute).Minutes()))
}
