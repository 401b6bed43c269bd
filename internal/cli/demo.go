package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/demo"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

type demoOptions struct {
	dir     string
	workers int
	rounds  int
}

func newDemoCmd(e *env) *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo",
		Short: "Evolve a built-in example skill in a throwaway repository, offline",
		Long: `demo creates a new repository (a temporary directory unless --dir is given) with
a unit-conversion skill that lacks most of its conversion factors and 66 eval tasks,
then runs git descent init and git descent evolve on it. The agent and the proposer
are deterministic built-ins (the hidden commands demo-agent and demo-propose, run
through the same command runner as any agent), so no network or key is needed.
Workers refresh their snapshot of dev only every other round, so some proposals go
stale and the reflective policy re-makes them on the current dev. It prints the
validation score going from the baseline up, the sealed test split with and without
the skill, and the git commands to inspect the result.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runDemo(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.dir, "dir", "", "create the demo repository here (must not exist or be empty)")
	c.Flags().IntVar(&o.workers, "workers", 4, "parallel workers")
	c.Flags().IntVar(&o.rounds, "rounds", 6, "aggregator rounds")
	return c
}

// demoSignature is the author of the demo repository's own commit.
var demoSignature = git.Signature{Name: "Demo User", Email: "demo@example.com"}

func runDemo(ctx context.Context, e *env, o demoOptions) error {
	dir, err := demoDir(o.dir)
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "demo repository: %s\n", dir)
	repo, err := git.InitRepo(ctx, dir, e.logger())
	if err != nil {
		return err
	}
	if err := writeFiles(dir, demo.Files()); err != nil {
		return err
	}
	de := &env{stdin: e.stdin, stdout: io.Discard, stderr: e.stderr, dir: dir, verbose: e.verbose}
	err = runInit(ctx, de, initOptions{
		path: demo.Path, run: "git-descent demo-agent", proposer: "git-descent demo-propose",
		scorer: "exact", layout: "repo", frozen: []string{"evals/**"}, guarded: []string{"scripts/**"},
	})
	if err != nil {
		return err
	}
	for key, value := range map[string]string{"promote-after": "2", "staleness": "reflective"} {
		if err := repo.ConfigSet(ctx, library.File(repo), "library."+demo.Name+"."+key, value); err != nil {
			return err
		}
	}
	if _, err := repo.CommitAll(ctx, "Add the unit-convert skill and its evals", demoSignature); err != nil {
		return err
	}
	fmt.Fprintf(out, "git descent init %s: run = git-descent demo-agent, proposer = git-descent demo-propose\n\n", demo.Path)
	repo, err = git.Open(ctx, dir, e.logger())
	if err != nil {
		return err
	}
	lib, err := library.Find(ctx, repo, demo.Name)
	if err != nil {
		return err
	}
	// Workers refresh their snapshot of dev every other round, as
	// asynchronous ones would, so stale proposals show how they are handled.
	opts := evolve.Options{Workers: o.workers, Rounds: o.rounds, Refresh: 2, BaselineNone: true, Log: e.logger()}
	_, done := e.display(&opts, false, false, 0)
	sum, err := evolve.Evolve(ctx, repo, lib, opts)
	done()
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	printSummary(out, lib, sum)
	fmt.Fprintf(out, "\n(run those in %s: cd %s)\n", dir, dir)
	return nil
}

// demoDir returns the directory for the demo repository: a new temporary
// one, or dir when it does not exist or is empty.
func demoDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "descent-demo-")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(abs)
	if err == nil && len(entries) > 0 {
		return "", fmt.Errorf("--dir %q is not empty: choose a new directory", dir)
	}
	return abs, nil
}

func writeFiles(dir string, files map[string]string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// demoAgentOptions is one rollout of the demo's agent.
type demoAgentOptions struct {
	skillDir string // DESCENT_SKILL_DIR
	prompt   string // DESCENT_PROMPT; "" reads the prompt from standard input
}

func newDemoAgentCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "demo-agent",
		Short:  "The demo's deterministic agent (reads DESCENT_SKILL_DIR and the prompt on stdin)",
		Hidden: true,
		Args:   argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runDemoAgent(c.Context(), e, demoAgentOptions{skillDir: os.Getenv("DESCENT_SKILL_DIR"), prompt: os.Getenv("DESCENT_PROMPT")})
		},
	}
}

func runDemoAgent(_ context.Context, e *env, o demoAgentOptions) error {
	prompt, err := rolloutPrompt(e, o.prompt)
	if err != nil {
		return err
	}
	if o.skillDir == "" {
		return fmt.Errorf("demo-agent: DESCENT_SKILL_DIR is not set (git-descent sets it for rollouts)")
	}
	ans, err := demo.Answer(o.skillDir, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, ans)
	return nil
}

// demoProposeOptions is one call of the demo's proposer.
type demoProposeOptions struct {
	failures  string // DESCENT_FAILURES, the feedback file
	rationale string // DESCENT_RATIONALE_FILE; "" prints the subject instead
}

func newDemoProposeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "demo-propose",
		Short:  "The demo's deterministic proposer (reads DESCENT_FAILURES, edits DESCENT_SKILL_DIR)",
		Hidden: true,
		Args:   argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runDemoPropose(c.Context(), e, demoProposeOptions{failures: os.Getenv("DESCENT_FAILURES"), rationale: os.Getenv("DESCENT_RATIONALE_FILE")})
		},
	}
}

func runDemoPropose(_ context.Context, e *env, o demoProposeOptions) error {
	fb, _, err := proposerFeedback("demo-propose", o.failures)
	if err != nil {
		return err
	}
	var fs []demo.Failure
	for _, f := range fb.Failures {
		fs = append(fs, demo.Failure{Prompt: f.Prompt, Output: strings.TrimSpace(f.Output)})
	}
	subject, body, err := demo.Propose(fb.SkillDir, fs)
	if fb.Repair != nil {
		subject, body, err = demo.Repair(fb.SkillDir, fb.Repair.Diff)
	}
	if err != nil || subject == "" {
		return err
	}
	if o.rationale != "" {
		return os.WriteFile(o.rationale, []byte(subject+"\n\n"+body+"\n"), 0o644)
	}
	fmt.Fprintln(e.stdout, subject)
	return nil
}

// rolloutPrompt is the task's prompt as a built-in agent gets it: given
// (DESCENT_PROMPT) when set, else standard input.
func rolloutPrompt(e *env, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	data, err := io.ReadAll(e.stdin)
	return string(data), err
}

// proposerFeedback reads the feedback a built-in proposer (cmd) is given in
// the file DESCENT_FAILURES names, and the file's bytes.
func proposerFeedback(cmd, file string) (agent.Feedback, []byte, error) {
	var fb agent.Feedback
	data, err := os.ReadFile(file)
	if err != nil {
		return fb, nil, fmt.Errorf("%s: read DESCENT_FAILURES: %w", cmd, err)
	}
	if err := json.Unmarshal(data, &fb); err != nil {
		return fb, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return fb, data, nil
}
