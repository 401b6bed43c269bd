package ci

// MaxGitHubWorkers is the most jobs a GitHub Actions matrix makes.
const MaxGitHubWorkers = 256

// GitHubPath is where GitHub reads a library's workflow, relative to the
// repository's top.
func GitHubPath(lib string) string { return ".github/workflows/descent-" + lib + ".yml" }

// GitHub writes the GitHub Actions workflow that evolves in's library:
// started by hand (workflow_dispatch, with a max-time input) or on a
// schedule the user uncomments; one run at a time (a concurrency group);
// a matrix job of o.Workers workers, an aggregator job beside it, and a
// decide job after both that also runs when a worker failed. Every job
// checks out all of history and pushes with the GITHUB_TOKEN the checkout
// keeps (permissions: contents: write); the secrets the library's agents
// need reach only the steps that run git-descent, as ${{ secrets.NAME }}.
func GitHub(in Input, o Options) (*Workflow, error) {
	p, err := newPlan("github", in, o, MaxGitHubWorkers)
	if err != nil {
		return nil, err
	}
	p.Path = GitHubPath(in.Library.Name)
	p.SecretsWhere = []string{"Secrets to add (Settings > Secrets and variables > Actions); only the steps", "running git-descent see them:"}
	p.worker = "${{ matrix.worker }}"
	p.Bwrap = in.Library.Isolation != "none"
	p.BwrapRequired = in.Library.Isolation == "bwrap"
	if !p.Bwrap {
		p.Needs.note("isolation = none: the agents run unisolated on the runner, where they could read the push token the checkout keeps in .git/config")
	}
	return p.workflow("github")
}
