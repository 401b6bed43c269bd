package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/hooks"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

type initOptions struct {
	path     string
	name     string
	run      string
	proposer string
	scorer   string
	evals    string
	layout   string
	frozen   []string
	guarded  []string
	force    bool
	given    map[string]bool // which of evals, scorer, frozen and guarded the command line gave; the others are defaults
}

func newInitCmd(e *env) *cobra.Command {
	var o initOptions
	c := &cobra.Command{
		Use:   "init <path>",
		Short: "Configure a directory as an evolvable library and register the merge driver",
		Long: `init writes a [library "<name>"] section for <path> to .descent at the repository
root (git-config syntax) and registers git-descent's merge driver: merge.descent.driver
in .git/config and "merge=descent" for the library's files in .git/info/attributes.

Keys it writes (edit them later with git config -f .descent):
  path      the library directory
  evals     eval file inside the library (evals/evals.json, .jsonl or .csv)
  run       what does one rollout: openai (a chat model with the skill as its system
            prompt), claude (Claude Code), codex (Codex), or a command in which
            {{prompt}}, {{task_file}}, {{skill_dir}}, {{workspace}}, {{output_file}},
            {{task_id}} expand to shell-quoted values (also DESCENT_* variables), and
            {{repo}} to the repository's root, for a command that lives in it (agents
            run outside the repository: tools/agent.py alone is not found there); its
            stdout (or the file DESCENT_OUTPUT_FILE) is the answer
  scorer    exact, contains, regex, numeric, command or judge (a model grades the
            task's expectations), or a weighted mix: "contains*0.3, judge*0.7"
  proposer  what edits the library after failures: openai (a model answering with
            search/replace edits), claude, codex, or a command run in a worker's
            seat (the library alone, outside the repository) that reads
            DESCENT_FAILURES ({{failures_file}}) or the brief on stdin, and may
            write a rationale to DESCENT_RATIONALE_FILE
  layout    where rollouts see the library: repo (its own path), claude
            (.claude/skills/<name>), root, or a relative path
  frozen    L0 globs a proposal may never change (default evals/**)
  guarded   L1 globs (default scripts/**)

init refuses a command it can tell will never run (a path in the repository written
without {{repo}}, a {{repo}} path that does not exist or is not executable), and warns
about what does not work yet: a program not on PATH, a SKILL.md outside the Agent Skills
format (frontmatter with a name equal to the directory's and a description), eval keys
no task field reads, a skill_name that is not the skill's. git descent doctor checks all
of it again, and more, at any time.

Re-running init is safe: it fills in missing keys, keeps values you set, and refuses
to replace a different value (or a foreign merge driver) without --force, which
replaces only the values given on the command line.`,
		Example: `  git descent init skills/pdf-audit --run 'my-agent {{prompt}}' --proposer 'my-proposer {{failures_file}}'
  git descent init skills/pdf-audit --scorer contains --layout claude`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.path = args[0]
			o.given = map[string]bool{}
			for _, f := range []string{"evals", "scorer", "frozen", "guarded"} {
				o.given[f] = c.Flags().Changed(f)
			}
			return runInit(c.Context(), e, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.name, "name", "", "library name (default: the directory's base name)")
	f.StringVar(&o.run, "run", "", "rollout command template")
	f.StringVar(&o.proposer, "proposer", "", "proposer command template")
	f.StringVar(&o.scorer, "scorer", library.DefaultScorer, "scorer: "+strings.Join(eval.Kinds, ", "))
	f.StringVar(&o.evals, "evals", "", "eval file relative to the library (default: evals/evals.json, .jsonl or .csv, whichever exists)")
	f.StringVar(&o.layout, "layout", "", "where rollouts see the library: repo, claude (.claude/skills/<name>), codex (.agents/skills/<name>), root or a relative path (default: where the runner looks for skills, else repo)")
	f.StringSliceVar(&o.frozen, "frozen", []string{"evals/**"}, "L0 globs, relative to the library")
	f.StringSliceVar(&o.guarded, "guarded", []string{"scripts/**"}, "L1 globs, relative to the library")
	f.BoolVar(&o.force, "force", false, "replace existing values with the ones given, and a foreign merge driver")
	return c
}

func runInit(ctx context.Context, e *env, o initOptions) error {
	if _, err := git.CheckVersion(ctx, e.logger()); err != nil {
		return err
	}
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	if repo.Top() == "" {
		return errors.New("git descent init needs a working tree (this repository is bare)")
	}
	rel, err := libraryPath(repo, e.dir, o.path)
	if err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = path.Base(rel)
	}
	if !validName(name) {
		return &UsageError{fmt.Errorf("library name %q: use letters, digits, '.', '_' and '-' (set one with --name)", name)}
	}
	if _, err := eval.ParseSpec(o.scorer); err != nil {
		return &UsageError{err}
	}
	evals, detected := o.evals, false
	if evals == "" {
		evals, detected = detectEvals(filepath.Join(repo.Top(), filepath.FromSlash(rel)))
	}
	if err := library.CheckPath(ctx, repo, name, rel); err != nil {
		return err
	}
	// Commands that can never work are refused before anything is written.
	for _, c := range [][2]string{{"--run", o.run}, {"--proposer", o.proposer}} {
		if _, err := checkCommand(c[0], c[1], repo.Top(), rel); err != nil {
			return err
		}
	}
	// Check the merge driver first, so a conflict there writes nothing.
	plan, err := hooks.PlanMergeDriver(ctx, repo, rel, o.force)
	if err != nil {
		return err
	}
	wrote, err := library.Write(ctx, repo, initRequest(o, name, rel, evals))
	if err != nil {
		return err
	}
	changes, err := plan.Apply(ctx)
	if err != nil {
		return err
	}
	return reportInit(ctx, e, repo, name, rel, evals, detected, wrote, changes)
}

// initRequest is the library section init writes: path, evals, scorer,
// frozen and guarded always (as defaults unless given), layout, run and
// proposer when given.
func initRequest(o initOptions, name, rel, evals string) library.WriteRequest {
	req := library.WriteRequest{Name: name, Path: rel, Force: o.force, Settings: []library.Setting{
		{Key: "evals", Values: []string{library.CleanPath(evals)}, Explicit: o.given["evals"]},
		{Key: "scorer", Values: []string{o.scorer}, Explicit: o.given["scorer"]},
		{Key: "frozen", Values: o.frozen, Explicit: o.given["frozen"]},
		{Key: "guarded", Values: o.guarded, Explicit: o.given["guarded"]},
	}}
	for _, kv := range [][2]string{{"layout", o.layout}, {"run", o.run}, {"proposer", o.proposer}} {
		if kv[1] != "" {
			req.Settings = append(req.Settings, library.Setting{Key: kv[0], Values: []string{kv[1]}, Explicit: true})
		}
	}
	return req
}

// libraryPath resolves the path argument (relative to -C) to a directory
// inside the repository, as a repository-relative path.
func libraryPath(repo *git.Repo, dir, arg string) (string, error) {
	abs := arg
	if !filepath.IsAbs(abs) {
		base, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		abs = filepath.Join(base, arg)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("library directory %q: %w", arg, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("library %q is not a directory", arg)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	top, err := filepath.EvalSymlinks(repo.Top())
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(top, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("library %q must be a directory inside the repository %q, not its root", arg, repo.Top())
	}
	if strings.HasPrefix(filepath.ToSlash(rel), ".git/") || rel == ".git" {
		return "", fmt.Errorf("library %q is inside .git", arg)
	}
	return library.CleanPath(filepath.ToSlash(rel)), nil
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// detectEvals finds the library's eval file, preferring the skill-creator
// location.
func detectEvals(dir string) (string, bool) {
	for _, c := range []string{"evals/evals.json", "evals/evals.jsonl", "evals/evals.csv", "evals.json", "evals.jsonl", "evals.csv"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c))); err == nil {
			return c, true
		}
	}
	return "evals/evals.json", false
}

func reportInit(ctx context.Context, e *env, repo *git.Repo, name, rel, evals string, detected bool, wrote []string, changes []hooks.Change) error {
	out := e.stdout
	if len(wrote) == 0 && len(changes) == 0 {
		fmt.Fprintf(out, "library %q (%s) is already set up; nothing changed\n", name, rel)
	} else {
		fmt.Fprintf(out, "library %q at %s\n", name, rel)
		if len(wrote) > 0 {
			fmt.Fprintf(out, "  %s: wrote %s\n", library.FileName, strings.Join(wrote, ", "))
		}
		for _, c := range changes {
			fmt.Fprintf(out, "  %s: %s\n", c.Where, c.Value)
		}
	}
	if !detected {
		fmt.Fprintf(out, "note: no eval file found; add %s/%s (skill-creator evals.json, JSONL or CSV)\n", rel, evals)
	}
	lib, err := library.Find(ctx, repo, name)
	if err != nil {
		return err
	}
	warnings, err := lintLibrary(repo.Top(), lib)
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "warning: %v\n", err)
	}
	var missing []string
	if lib.Run == "" {
		missing = append(missing, fmt.Sprintf("  git config -f %s library.%s.run '<agent command, e.g. my-agent {{prompt}}>'", library.FileName, name))
	}
	if lib.Proposer == "" {
		missing = append(missing, fmt.Sprintf("  git config -f %s library.%s.proposer '<proposer command, e.g. my-proposer {{failures_file}}>'", library.FileName, name))
	}
	if len(missing) > 0 {
		fmt.Fprintf(out, "next, tell git-descent how to run your agent and your proposer:\n%s\n", strings.Join(missing, "\n"))
		fmt.Fprintf(out, "or use a built-in one (run/proposer = openai, claude or codex); with a model configured, openai is the default:\n")
		fmt.Fprintf(out, "  git config descent.model <model>   (and descent.base-url, descent.api-key-env for endpoints other than OpenAI)\n")
	}
	fmt.Fprintf(out, "then: git descent evolve %s\n", rel)
	return nil
}
