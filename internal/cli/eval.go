package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type evalOptions struct {
	library  string
	rev      string
	split    string
	baseline string
	json     bool
	noCache  bool
}

func newEvalCmd(e *env) *cobra.Command {
	var o evalOptions
	c := &cobra.Command{
		Use:               "eval [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Score any version of a library, task by task, with an interval",
		Long: `eval rolls the agent out on a version of the library (--rev: any revision; by default
descent/<lib>/dev, or HEAD before the first evolve) once per task of a split and prints
the mean reward with its 95% interval and every task's outcome. Rollouts come from the
cache when evolve (or an earlier eval) already ran them, and what eval runs is cached for
evolve: the same agent, scorer, isolation and repeat.

--split is validation (what the gate judges on, the default), train, test or all. The
test split is sealed: evolve never decides on it, and each look you take at it is one
more comparison it has to survive, so read it sparingly. --baseline none also scores the
agent without the library on the same tasks, with the lift and its interval.`,
		Example: `  git descent eval pdf-audit
  git descent eval pdf-audit --rev main --split all
  git descent eval pdf-audit --rev descent/pdf-audit/stable --split test --baseline none`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runEval(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.rev, "rev", "", "the `revision` to score (default: dev, or HEAD before the first evolve)")
	c.Flags().StringVar(&o.split, "split", "validation", "the tasks to score: train, validation, test or all")
	c.Flags().StringVar(&o.baseline, "baseline", "", "also score without the library: none")
	c.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	c.Flags().BoolVar(&o.noCache, "no-cache", false, "run every rollout afresh (what runs is not cached)")
	return c
}

// baselineNone reads --baseline: "" or none (the agent without the library).
func baselineNone(s string) (bool, error) {
	switch s {
	case "":
		return false, nil
	case "none":
		return true, nil
	}
	return false, &UsageError{fmt.Errorf("--baseline %q: the only baseline is none (the agent without the library)", s)}
}

// devOrHead names the version a command scores by default: the library's
// dev, or HEAD before its first evolve.
func devOrHead(ctx context.Context, repo *git.Repo, lib *library.Library) (string, error) {
	dev := ledger.Refs{Library: lib.Name}.Dev()
	_, err := repo.ResolveRef(ctx, dev)
	switch {
	case errors.Is(err, git.ErrRefNotFound):
		return "HEAD", nil
	case err != nil:
		return "", err
	}
	return ledger.Short(dev), nil
}

// splitsNamed reads --split.
func splitsNamed(name string) ([]eval.Split, error) {
	if name == "all" {
		return eval.Splits, nil
	}
	for _, s := range eval.Splits {
		if s.String() == name {
			return []eval.Split{s}, nil
		}
	}
	return nil, &UsageError{fmt.Errorf("--split %q: one of train, validation, test or all", name)}
}

func runEval(ctx context.Context, e *env, o evalOptions) error {
	splits, err := splitsNamed(o.split)
	if err != nil {
		return err
	}
	none, err := baselineNone(o.baseline)
	if err != nil {
		return err
	}
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	rev := o.rev
	if rev == "" {
		if rev, err = devOrHead(ctx, repo, lib); err != nil {
			return err
		}
	}
	commit, err := resolveCommit(ctx, repo, rev)
	if err != nil {
		return err
	}
	s, err := evolve.Score(ctx, repo, lib, evolve.ScoreRequest{Commit: commit, Splits: splits, BaselineNone: none},
		evolve.Options{Log: e.logger(), NoCache: o.noCache})
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, s)
	}
	w := e.stdout
	fmt.Fprintf(w, "%s at %s (%s), isolation %s\n", lib.Name, commit.Short(), rev, s.Isolation)
	for _, sp := range s.Splits {
		line := fmt.Sprintf("  %-10s  %.2f (95%% interval %.2f to %.2f) on %s", sp.Split, sp.Mean, sp.Lo, sp.Hi, words.Count(sp.Scored, "task"))
		if sp.Scored < sp.Tasks {
			line += fmt.Sprintf("; %d could not run", sp.Tasks-sp.Scored)
		}
		if sp.Tasks == 0 {
			line = fmt.Sprintf("  %-10s  no tasks", sp.Split)
		}
		fmt.Fprintln(w, line)
		if sp.None != nil {
			fmt.Fprintf(w, "  %-10s  without the library: %.2f", "", *sp.None)
			if l := sp.LiftNone; l != nil {
				fmt.Fprintf(w, "; lift %+.2f (95%% interval %+.2f to %+.2f)", l.Mean, l.Lo, l.Hi)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "TASK\tSPLIT\tREWARD\t"
	if none {
		header += "WITHOUT\t"
	}
	fmt.Fprintln(tw, header+"OUTPUT")
	for _, t := range s.Tasks {
		reward := fmt.Sprintf("%.2f", t.Reward)
		text := t.Output
		switch {
		case t.Errored != "":
			reward, text = "error", t.Errored
		case t.Cached:
			reward += " (cached)"
		}
		row := fmt.Sprintf("%s\t%s\t%s\t", t.Task, t.Split, reward)
		if none {
			without := "error"
			if t.None != nil {
				without = fmt.Sprintf("%.2f", *t.None)
			}
			row += without + "\t"
		}
		fmt.Fprintln(tw, row+clipLine(text, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s run, %d from the cache", words.Count(s.Rollouts, "rollout"), s.CacheHits)
	if s.Tokens > 0 || s.Cost > 0 {
		fmt.Fprintf(w, "; spent %s, %s", words.Count(s.Tokens, "token"), budget.Cost(s.Cost, 0))
	}
	fmt.Fprintln(w)
	return nil
}

type tasksOptions struct {
	library string
	split   string
	json    bool
}

func newTasksCmd(e *env) *cobra.Command {
	var o tasksOptions
	c := &cobra.Command{
		Use:               "tasks [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "List a library's eval tasks and the split each falls in",
		Long: `tasks lists every eval task of the library with its split: train tasks drive the
proposals, validation tasks are what the gate judges candidates on, and test tasks are
sealed, scored only for the report. A task's split depends only on its id and
library.<name>.seed (and split), so adding tasks never moves the others.`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runTasks(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.split, "split", "all", "list only one split: train, validation, test or all")
	c.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return c
}

// listedTask is what tasks --json prints per task.
type listedTask struct {
	ID       string `json:"id"`
	Split    string `json:"split"`
	Prompt   string `json:"prompt"`
	Expected string `json:"expected_output,omitempty"`
	Source   string `json:"source"`
}

func runTasks(ctx context.Context, e *env, o tasksOptions) error {
	splits, err := splitsNamed(o.split)
	if err != nil {
		return err
	}
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	all, cross, err := evolve.Tasks(repo, lib)
	if err != nil {
		return err
	}
	count := map[eval.Split]int{}
	var list []listedTask
	for _, t := range all {
		count[t.Split]++
		for _, s := range splits {
			if s == t.Split {
				list = append(list, listedTask{ID: t.ID, Split: t.Split.String(), Prompt: t.Prompt, Expected: t.Expected, Source: t.Source})
			}
		}
	}
	if o.json {
		return writeJSON(e.stdout, nonNil(list))
	}
	out, done := e.page(ctx, repo)
	defer done()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSPLIT\tPROMPT\tEXPECTED")
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Split, clipLine(t.Prompt, 50), clipText(t.Expected, 30))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s: %d train, %d validation, %d test (split %s, seed %q)\n", words.Count(len(all), "task"), count[eval.Train], count[eval.Validation], count[eval.Test], lib.Split, lib.Seed)
	if cross {
		fmt.Fprintf(out, "validation has too few tasks to tell a one-task gain from a fluke, so candidates are judged cross-fitted: on the train and validation tasks their proposers did not see (library.%s.validation = split turns it off)\n", lib.Name)
	}
	return nil
}
