package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// Request is one rollout: a task, and where the library and the task's files
// were laid out for it.
type Request struct {
	Library   string
	TaskID    string
	Repeat    int // which rollout of this task on this library version: 0, 1, ...
	Prompt    string
	TaskFile  string   // JSON of the task as the agent may see it (no answers)
	SkillDir  string   // absolute directory of the library version
	Workspace string   // absolute working directory of the rollout
	Files     []string // absolute paths of the task's input files
	Control   string   // a private directory for the output file, HOME and TMPDIR
}

// Response is what a rollout produced.
type Response struct {
	Output    string
	Truncated bool    // the output went over the cap
	Tokens    int64   // tokens the agent reported using (0 when it reports none)
	Cost      float64 // USD the agent reported or its tokens priced
	Unpriced  int64   // tokens whose cost is unknown: the model has no price
	Model     string  // the model the agent reported or was told to use
	Stderr    string
}

// Runner performs rollouts. Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, req Request) (Response, error)
}

// Exec is a Runner that runs a command template: any agent with a command
// line. The command sees the task in template variables, environment
// variables and standard input (the prompt); its answer is the file it
// writes to DESCENT_OUTPUT_FILE, or else its standard output.
type Exec struct {
	Command   string        // template, see Vars
	Allow     []string      // environment variable names passed through
	Timeout   time.Duration // per rollout
	MaxOutput int           // cap on the output; 0 means sandbox.DefaultMaxOutput
	ExePath   string        // PATH that finds git-descent itself (git.ExecutablePath)
	CLI       *CLI          // set for built-in CLI agents (Presets)
	Jail      sandbox.Jail  // the isolation and limits of each rollout
}

// CLI is how a built-in CLI agent (a Preset) is run and read.
type CLI struct {
	Parse    func(stdout []byte) (Result, error) // reads the answer and usage from stdout
	Home     string                              // its configuration variable, pointed at a private directory
	Seed     Seed                                // what that directory starts with
	Defaults map[string]string                   // environment set unless the user's sets it
	// Offline spots output saying it waits for the network; after
	// OfflineAfter of nothing else it is stopped (an InfraError).
	Offline      func(line []byte) bool
	OfflineAfter time.Duration
	ReportsCost  bool   // the agent's output says what it cost (Claude Code)
	Price        Price  // prices tokens of agents that do not report cost; zero: unknown
	Model        string // the model it was told to use ("" when its default)
}

// Price is a model's price in USD per million tokens; the zero Price is
// unknown.
type Price struct{ Input, Output float64 }

// spend is what a result cost: the agent's own account (reported), else
// its tokens priced, else nothing known, with the tokens counted as
// unpriced.
func (p Price) spend(r Result, reported bool) (cost float64, unpriced int64) {
	switch {
	case reported:
		return r.Cost, 0
	case p.Input > 0 || p.Output > 0:
		return (float64(r.InputTokens)*p.Input + float64(r.OutputTokens)*p.Output) / 1e6, 0
	}
	return 0, r.Tokens()
}

// env adds what the agent's environment needs: the defaults the user's
// environment does not override, and its private home, seeded, unless
// the library passes the user's own through (allow).
func (c *CLI) env(set map[string]string, control string, allow []string) error {
	for k, v := range c.Defaults {
		if os.Getenv(k) == "" {
			set[k] = v
		}
	}
	if c.Home == "" || contains(allow, c.Home) {
		return nil
	}
	dir := filepath.Join(control, strings.ToLower(c.Home))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	set[c.Home] = dir
	return c.Seed.write(dir)
}

// read parses the agent's output into what the caller records.
func (c *CLI) read(stdout []byte) (Result, float64, int64, error) {
	r, err := c.Parse(stdout)
	if r.Model == "" {
		r.Model = c.Model
	}
	cost, unpriced := c.Price.spend(r, c.ReportsCost)
	return r, cost, unpriced, err
}

// A prompt reaches an agent on stdin and in a file (DESCENT_PROMPT_FILE,
// {{prompt_file}}). The kernel caps one argument or environment string at
// 128 KiB and all of them together at a few MiB, so the environment holds
// only prompts up to maxEnvPrompt, and {{prompt}} on a command line one up
// to maxArgPrompt: a longer one there is a configuration the task cannot
// run under, and stops the run saying so.
const (
	maxEnvPrompt = 32 << 10
	maxArgPrompt = 100 << 10
)

// usesPrompt reports whether a command template names {{prompt}}.
func usesPrompt(tmpl string) bool {
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		if m[1] == "prompt" {
			return true
		}
	}
	return false
}

// Run implements Runner.
func (e *Exec) Run(ctx context.Context, req Request) (Response, error) {
	outFile := filepath.Join(req.Control, "output")
	promptFile := filepath.Join(req.Control, "prompt.txt")
	if len(req.Prompt) > maxArgPrompt && usesPrompt(e.Command) {
		return Response{}, &InfraError{Fatal: true, Err: fmt.Errorf(
			"task %q: its prompt is %d KiB, too long for {{prompt}} on a command line (at most %d KiB): read it from {{prompt_file}}, $DESCENT_PROMPT_FILE or stdin instead",
			req.TaskID, len(req.Prompt)>>10, maxArgPrompt>>10)}
	}
	if err := os.WriteFile(promptFile, []byte(req.Prompt), 0o644); err != nil {
		return Response{}, err
	}
	vars := map[string]string{
		"prompt":      req.Prompt,
		"prompt_file": promptFile,
		"task_id":     req.TaskID,
		"repeat":      strconv.Itoa(req.Repeat),
		"task_file":   req.TaskFile,
		"skill_dir":   req.SkillDir,
		"workspace":   req.Workspace,
		"output_file": outFile,
		"library":     req.Library,
	}
	command, err := Expand(e.Command, vars)
	if err != nil {
		return Response{}, err
	}
	set := map[string]string{
		"DESCENT_PROMPT_FILE": promptFile,
		"DESCENT_TASK_ID":     req.TaskID,
		"DESCENT_REPEAT":      strconv.Itoa(req.Repeat),
		"DESCENT_TASK_FILE":   req.TaskFile,
		"DESCENT_SKILL_DIR":   req.SkillDir,
		"DESCENT_WORKSPACE":   req.Workspace,
		"DESCENT_OUTPUT_FILE": outFile,
		"DESCENT_LIBRARY":     req.Library,
		"DESCENT_FILES":       strings.Join(req.Files, string(os.PathListSeparator)),
	}
	if len(req.Prompt) <= maxEnvPrompt {
		set["DESCENT_PROMPT"] = req.Prompt
	}
	isolate(set, req.Control, e.Allow)
	spec := sandbox.Spec{
		Command:   command,
		Dir:       req.Workspace,
		Stdin:     []byte(req.Prompt),
		Timeout:   e.Timeout,
		MaxOutput: e.MaxOutput,
	}
	if e.CLI != nil {
		if err := e.CLI.env(set, req.Control, e.Allow); err != nil {
			return Response{}, err
		}
		spec.Offline, spec.OfflineAfter = e.CLI.Offline, e.CLI.OfflineAfter
	}
	spec.Env = sandbox.Environ(e.Allow, set, e.ExePath)
	spec.Jail, spec.Write = e.Jail.For(e.Command, spec.Env), []string{req.Workspace, req.Control}
	res, err := sandbox.Run(ctx, spec)
	resp := Response{Output: string(res.Stdout), Truncated: res.Truncated, Stderr: string(res.Stderr)}
	infra := processFailure(err)
	if e.CLI != nil {
		// A CLI agent's JSON says what it spent even when it failed.
		r, cost, unpriced, perr := e.CLI.read(res.Stdout)
		resp.Output, resp.Tokens, resp.Cost, resp.Unpriced, resp.Model = r.Text, r.Tokens(), cost, unpriced, r.Model
		err = agentError(err, perr)
	}
	if infra != nil {
		return resp, infra
	}
	if err != nil {
		return resp, err
	}
	if data, rerr := os.ReadFile(outFile); rerr == nil {
		resp.Output = string(data)
	}
	return resp, nil
}

// processFailure returns the transient InfraError for an agent process that
// never gave an answer of its own: it could not start (say, its
// environment was too large to pass), its shell found no command (exit 127)
// or could not run it (126), it was killed by a signal, it ran out of time,
// or it was stopped waiting for the network. It returns nil for anything
// else, including an ordinary failing exit.
func processFailure(err error) *InfraError {
	var exit *sandbox.ExitError
	var start *sandbox.StartError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sandbox.ErrTimeout), errors.Is(err, sandbox.ErrOffline), errors.As(err, &start):
	case errors.As(err, &exit) && (exit.ExitCode == 126 || exit.ExitCode == 127 || exit.ExitCode < 0 || exit.ExitCode > 128 && exit.ExitCode <= 128+64):
	default:
		return nil
	}
	return &InfraError{Err: err}
}

// isolate points HOME and TMPDIR into the control directory, unless the
// library's config passes the user's own through.
func isolate(set map[string]string, control string, allow []string) {
	for name, sub := range map[string]string{"HOME": "home", "TMPDIR": "tmp"} {
		if contains(allow, name) {
			continue
		}
		p := filepath.Join(control, sub)
		_ = os.MkdirAll(p, 0o755)
		set[name] = p
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// agentError combines a CLI agent's exit with what its output said: the
// output's account wins (an InfraError above all, since the exit status of
// a refused login says less than the message), else the exit.
func agentError(exit, parsed error) error {
	var infra *InfraError
	switch {
	case errors.As(parsed, &infra), exit == nil:
		return parsed
	case parsed != nil:
		return fmt.Errorf("%w (%v)", exit, parsed)
	}
	return exit
}

// PriceNote says, for an agent that does not report its cost and whose
// model has no price, how its spending will be shown and how to price it;
// "" otherwise.
func (c *CLI) PriceNote(name string) string {
	if c.ReportsCost || c.Price.Input > 0 || c.Price.Output > 0 {
		return ""
	}
	model := c.Model
	if model == "" {
		return fmt.Sprintf("cost: %s does not report its cost and its model is not named, so its cost is shown as unknown (set run-model and <model>.input-price, <model>.output-price in USD per million tokens)", name)
	}
	return fmt.Sprintf("cost: %s does not report its cost and %s has no price, so its cost is shown as unknown (set %s.input-price and %s.output-price in USD per million tokens)", name, model, model, model)
}
