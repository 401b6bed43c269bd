package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/library"
)

type doctorOptions struct {
	library string
	json    bool
	try     bool // also run one rollout
}

func newDoctorCmd(e *env) *cobra.Command {
	var o doctorOptions
	c := &cobra.Command{
		Use:               "doctor [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Check git, the config, the evals, the agents, isolation and endpoints before a run",
		Long: `doctor checks what an evolve needs, for every configured library (or the one named),
without running an agent or spending anything: git's version; the library's config and
commands (a program not on PATH, a path in the repository written without {{repo}});
its SKILL.md against the Agent Skills format; its evals (they load, keys no field reads,
skill_name, how they split); the isolation level it will run under; the merge driver;
and every chat-model endpoint a role uses (asked for its list of models). It exits 1
when something would stop a run, and 0 when only warnings remain.

--try also runs the agent once, on the first validation task, with the library as it is
in HEAD (or dev once evolved), as a rollout of evolve would (isolated, cached), and says
what came back: the one check that the run command really runs. It costs one rollout.`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runDoctor(c.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the findings as JSON")
	c.Flags().BoolVar(&o.try, "try", false, "also run the agent on one validation task (one rollout, cached)")
	return c
}

// doctorReport is what doctor --json prints.
type doctorReport struct {
	Git       evolve.Finding          `json:"git"`
	Libraries map[string][]docFinding `json:"libraries"`
	Problems  int                     `json:"problems"`
	Warnings  int                     `json:"warnings"`
}

type docFinding struct {
	Level string `json:"level"` // ok, warning or problem
	Text  string `json:"text"`
}

func runDoctor(ctx context.Context, e *env, o doctorOptions) error {
	rep := doctorReport{Libraries: map[string][]docFinding{}}
	v, err := git.CheckVersion(ctx, e.logger())
	rep.Git = evolve.Finding{OK: err == nil, Text: fmt.Sprintf("git %s (git-descent needs %s or newer)", v, git.MinVersion)}
	if err != nil {
		rep.Git.Text = err.Error()
		rep.Problems++
	}
	repo, libs, err := e.libraries(ctx, o.library)
	if err != nil {
		return err
	}
	var names []string
	for _, lib := range libs {
		names = append(names, lib.Name)
		rep.Libraries[lib.Name] = doctorLibrary(ctx, repo, lib, &rep)
		if o.try {
			rep.Libraries[lib.Name] = append(rep.Libraries[lib.Name], tryRollout(ctx, e, repo, lib, &rep))
		}
	}
	if o.json {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		w := e.stdout
		fmt.Fprintf(w, "%-8s %s\n", level(rep.Git.OK), rep.Git.Text)
		if len(libs) == 0 {
			fmt.Fprintf(w, "no library configured in %s; start with: git descent init <path>\n", library.FileName)
		}
		for i, lib := range libs {
			fmt.Fprintf(w, "\nlibrary %s (%s)\n", names[i], lib.Path)
			for _, f := range rep.Libraries[names[i]] {
				fmt.Fprintf(w, "  %-8s %s\n", f.Level, strings.ReplaceAll(f.Text, "\n", "\n"+strings.Repeat(" ", 11)))
			}
		}
		fmt.Fprintf(w, "\n%s, %s\n", words.Count(rep.Problems, "problem"), words.Count(rep.Warnings, "warning"))
	}
	if rep.Problems > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// doctorLibrary gathers one library's findings, counting them in rep.
func doctorLibrary(ctx context.Context, repo *git.Repo, lib *library.Library, rep *doctorReport) []docFinding {
	var out []docFinding
	for _, f := range evolve.Check(ctx, repo, lib) {
		out = append(out, docFinding{Level: level(f.OK), Text: f.Text})
		if !f.OK {
			rep.Problems++
		}
	}
	warnings, err := lintLibrary(repo.Top(), lib)
	if err != nil {
		out = append(out, docFinding{Level: "problem", Text: err.Error()})
		rep.Problems++
	}
	for _, w := range warnings {
		out = append(out, docFinding{Level: "warning", Text: w})
		rep.Warnings++
	}
	return out
}

func level(ok bool) string {
	if ok {
		return "ok"
	}
	return "problem"
}

// tryRollout runs the agent once, on the first validation task, and says
// how it went.
func tryRollout(ctx context.Context, e *env, repo *git.Repo, lib *library.Library, rep *doctorReport) docFinding {
	problem := func(format string, args ...any) docFinding {
		rep.Problems++
		return docFinding{Level: "problem", Text: fmt.Sprintf(format, args...)}
	}
	rev, err := devOrHead(ctx, repo, lib)
	if err != nil {
		return problem("the try rollout: %v", err)
	}
	commit, err := resolveCommit(ctx, repo, rev)
	if err != nil {
		return problem("the try rollout: %v", err)
	}
	s, err := evolve.Score(ctx, repo, lib, evolve.ScoreRequest{Commit: commit, Splits: []eval.Split{eval.Validation}, Limit: 1}, evolve.Options{Log: e.logger()})
	switch {
	case err != nil:
		return problem("the try rollout: %v", err)
	case len(s.Tasks) == 0:
		return problem("the try rollout: the validation split has no task")
	}
	t := s.Tasks[0]
	how := "ran"
	if t.Cached {
		how = "came from the cache"
	}
	switch {
	case t.Errored != "":
		return problem("the try rollout of task %q could not run: %s", t.Task, t.Errored)
	case t.Reward == 0 && t.Output == "":
		rep.Warnings++
		return docFinding{Level: "warning", Text: fmt.Sprintf("the try rollout of task %q (%s) %s and answered nothing (reward 0): is the agent's answer on stdout or in DESCENT_OUTPUT_FILE?", t.Task, rev, how)}
	}
	return docFinding{Level: "ok", Text: fmt.Sprintf("the try rollout of task %q (%s) %s in %.1fs: reward %.2f, answer %q", t.Task, rev, how, t.Seconds, t.Reward, clipLine(t.Output, 60))}
}
