package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/ci"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

type ciOptions struct {
	system  string // "github" or "gitlab"
	library string
	out     string // -o; "" for the system's default path, "-" for stdout
	force   bool
	workers int
	maxTime time.Duration
	idle    time.Duration
}

func newCICmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "ci",
		Short: "Write a CI workflow that evolves a library on many machines (GitHub Actions, GitLab CI)",
		Long: `ci github and ci gitlab write the CI configuration that evolves a library with a
job per worker (git descent work), an aggregator beside them (git descent aggregate
--watch) and a last aggregation once the workers are done, all pushing to the
repository they run in. They read the library's configuration to name the secrets its
agents need (an API key, never its value) and install the CLI agents it runs, and
print what was written and what to do next.`,
		Args: unknownCommand,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newCISystemCmd(e, "github"), newCISystemCmd(e, "gitlab"))
	return c
}

// ciSystems are the CI systems ci writes for.
var ciSystems = map[string]struct {
	short, long, example string
	write                func(ci.Input, ci.Options) (*ci.Workflow, error)
}{
	"github": {
		short: "Write a GitHub Actions workflow: a matrix of workers, an aggregator, a last decide",
		long: `ci github writes .github/workflows/descent-<lib>.yml (-o to write elsewhere, - for
standard output), started by hand from the Actions tab or gh workflow run, with a
max-time input, and a schedule to uncomment. It has:
  work       a matrix of --workers jobs, each running git descent work --worker <n>
             --remote origin --max-time <max-time>, fail-fast off
  aggregate  beside them, git descent aggregate --remote origin --watch, stopping after
             --idle without a new proposal or at max-time
  decide     once both are done (also when a worker failed; not when cancelled),
             git descent aggregate --remote origin, deciding what is left
Each job checks out all of history (fetch-depth: 0), installs Go and git-descent (this
version when it is a release, else latest) and the CLI agents the library runs, sets a
git identity, and pushes with the GITHUB_TOKEN the checkout keeps (permissions:
contents: write). One run at a time (a concurrency group per library, never cancelling
one in progress). The secrets the library's agents read are named as ${{ secrets.NAME }}
in the steps that run git-descent only; what cannot be told is a commented placeholder,
and said on stderr. An existing file is not replaced without --force.`,
		example: `  git descent ci github pdf-audit
  git descent ci github pdf-audit --workers 16 --max-time 2h --force`,
		write: ci.GitHub,
	},
	"gitlab": {
		short: "Write a GitLab CI file: parallel workers, an aggregator, a last decide",
		long: `ci gitlab writes ci/descent-<lib>.gitlab-ci.yml (-o to write elsewhere, - for standard
output) for your .gitlab-ci.yml to include, which it never touches. It has two stages
of its own, descent and descent-decide, and three jobs that run only in pipelines
started by hand, by the API or by a schedule:
  descent-<lib>-work       parallel: --workers, each running git descent work
                           --worker $CI_NODE_INDEX --remote origin
  descent-<lib>-aggregate  beside them, git descent aggregate --remote origin --watch
  descent-<lib>-decide     after them, even when a worker failed: what is left
The two aggregators share a resource_group, so one runs at a time. Jobs clone all of
history (GIT_DEPTH: 0) and push with a project access token (write_repository) in the
CI/CD variable DESCENT_PUSH_TOKEN; the library's keys are CI/CD variables of their
own names, which the file names and never holds. An existing file is not replaced
without --force.`,
		example: `  git descent ci gitlab pdf-audit
  git descent ci gitlab pdf-audit --workers 4 --max-time 45m`,
		write: ci.GitLab,
	},
}

func newCISystemCmd(e *env, system string) *cobra.Command {
	s := ciSystems[system]
	o := ciOptions{system: system}
	c := &cobra.Command{
		Use:               system + " [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             s.short,
		Long:              s.long,
		Example:           s.example,
		Args:              argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runCI(c.Context(), e, o)
		},
	}
	addCIFlags(c, &o)
	return c
}

// addCIFlags defines the flags ci github and ci gitlab share.
func addCIFlags(c *cobra.Command, o *ciOptions) {
	f := c.Flags()
	f.IntVar(&o.workers, "workers", ci.DefaultWorkers, "worker jobs")
	f.DurationVar(&o.maxTime, "max-time", ci.DefaultMaxTime, "how long the workers propose and the aggregator decides beside them (a run may change it)")
	f.DurationVar(&o.idle, "idle", ci.DefaultIdle, "the aggregator beside the workers stops after this long without a new proposal")
	f.StringVarP(&o.out, "output", "o", "", "the `file` to write (- for standard output; default the system's place for it)")
	f.BoolVar(&o.force, "force", false, "replace the file if it exists")
}

func runCI(ctx context.Context, e *env, o ciOptions) error {
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	in, err := ciInput(ctx, repo, lib)
	if err != nil {
		return err
	}
	w, err := ciSystems[o.system].write(in, ci.Options{Workers: o.workers, MaxTime: o.maxTime, Idle: o.idle, Version: ci.InstallVersion(moduleVersion())})
	var oe *ci.OptionError
	if errors.As(err, &oe) {
		return &UsageError{err}
	}
	if err != nil {
		return err
	}
	for _, n := range w.Needs.Notes {
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}
	if o.out == "-" {
		_, err := e.stdout.Write(w.Content)
		return err
	}
	path, shown := ciPath(repo, e.dir, o.out, w.Path)
	if filepath.Base(path) == ".gitlab-ci.yml" {
		return fmt.Errorf("%s: git descent ci never writes .gitlab-ci.yml; write the file elsewhere and include it from there", shown)
	}
	if err := ci.WriteFile(path, w.Content, o.force); err != nil {
		var ee *ci.ExistsError
		if errors.As(err, &ee) {
			ee.Path = shown
		}
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d workers for %s beside an aggregator, then a last aggregation\n", shown, o.workers, ci.Duration(o.maxTime))
	ciNextSteps(e, o.system, lib.Name, shown, w)
	return nil
}

// ciInput reads what a workflow is made from: the library, and the
// descent.* settings of the git config here, which CI will not have.
func ciInput(ctx context.Context, repo *git.Repo, lib *library.Library) (ci.Input, error) {
	user, err := repo.ConfigList(ctx, git.EffectiveConfig, `^descent\.`)
	if err != nil {
		return ci.Input{}, fmt.Errorf("read git config: %w", err)
	}
	file, err := repo.ConfigList(ctx, library.File(repo), `^(descent|library)\.`)
	if err != nil {
		return ci.Input{}, fmt.Errorf("read %s: %w", library.FileName, err)
	}
	return ci.Input{Library: lib, UserConfig: user, File: file, BaseURLEnv: os.Getenv("OPENAI_BASE_URL")}, nil
}

// ciPath is where the workflow goes: -o relative to where the command runs
// (-C), else the system's default at the repository's top; shown is how
// it is named to the user (relative to the top when inside it).
func ciPath(repo *git.Repo, dir, out, def string) (path, shown string) {
	switch {
	case out == "":
		path = filepath.Join(repo.Top(), filepath.FromSlash(def))
	case filepath.IsAbs(out):
		path = out
	default:
		path = filepath.Join(dir, out)
	}
	shown = path
	if abs, err := filepath.Abs(path); err == nil {
		if rel, err := filepath.Rel(repo.Top(), abs); err == nil && !strings.HasPrefix(rel, "..") {
			shown = filepath.ToSlash(rel)
		}
	}
	return path, shown
}

// ciNextSteps prints what the user does after the file is written.
func ciNextSteps(e *env, system, lib, shown string, w *ci.Workflow) {
	var secrets []string
	for _, s := range w.Needs.Real() {
		secrets = append(secrets, s.Name)
	}
	var steps []string
	if system == "github" {
		if len(secrets) > 0 {
			steps = append(steps, fmt.Sprintf("add the repository secrets %s (Settings > Secrets and variables > Actions, or gh secret set NAME)", strings.Join(secrets, ", ")))
		}
		steps = append(steps,
			fmt.Sprintf("commit it with %s and the library to your default branch, and push:\n       git add %s %s && git commit -m 'Evolve %s in CI' && git push", library.FileName, shown, library.FileName, lib),
			fmt.Sprintf("start it: gh workflow run %s (or Actions > git-descent %s > Run workflow); watch it: gh run watch", filepath.Base(shown), lib))
	} else {
		steps = append(steps,
			fmt.Sprintf("include it from .gitlab-ci.yml:\n       include:\n         - local: %s", shown),
			fmt.Sprintf("add the CI/CD variables %s (Settings > CI/CD > Variables, masked); DESCENT_PUSH_TOKEN is a project access token with write_repository", strings.Join(secrets, ", ")),
			fmt.Sprintf("commit both with %s and the library, and push", library.FileName),
			"start it: Build > Pipelines > Run pipeline, or glab ci run; watch it: glab ci view")
	}
	steps = append(steps, fmt.Sprintf("bring the results here: git descent aggregate %s --remote origin; then git descent log %s", lib, lib))
	fmt.Fprintln(e.stdout, "next:")
	for i, s := range steps {
		fmt.Fprintf(e.stdout, "  %d. %s\n", i+1, s)
	}
}

// moduleVersion is the running binary's module version: a tag for a
// release, "(devel)" or a pseudo-version otherwise.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}
