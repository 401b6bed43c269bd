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

	// For built-in CLI agents (Presets):
	Parse func(stdout []byte) (Result, error) // reads the answer and usage from stdout
	Homes []string                            // variables pointed at private directories, like HOME
	Price Price                               // prices reported tokens when the agent reports no cost
}

// Price is a model's price in USD per million tokens.
type Price struct{ Input, Output float64 }

// cost prices a result's tokens when the agent did not report a cost.
func (p Price) cost(r Result) float64 {
	if r.Cost > 0 {
		return r.Cost
	}
	return (float64(r.InputTokens)*p.Input + float64(r.OutputTokens)*p.Output) / 1e6
}

// Run implements Runner.
func (e *Exec) Run(ctx context.Context, req Request) (Response, error) {
	outFile := filepath.Join(req.Control, "output")
	vars := map[string]string{
		"prompt":      req.Prompt,
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
		"DESCENT_PROMPT":      req.Prompt,
		"DESCENT_TASK_ID":     req.TaskID,
		"DESCENT_REPEAT":      strconv.Itoa(req.Repeat),
		"DESCENT_TASK_FILE":   req.TaskFile,
		"DESCENT_SKILL_DIR":   req.SkillDir,
		"DESCENT_WORKSPACE":   req.Workspace,
		"DESCENT_OUTPUT_FILE": outFile,
		"DESCENT_LIBRARY":     req.Library,
		"DESCENT_FILES":       strings.Join(req.Files, string(os.PathListSeparator)),
	}
	isolate(set, req.Control, e.Allow, e.Homes)
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command:   command,
		Dir:       req.Workspace,
		Env:       sandbox.Environ(e.Allow, set, e.ExePath),
		Stdin:     []byte(req.Prompt),
		Timeout:   e.Timeout,
		MaxOutput: e.MaxOutput,
	})
	resp := Response{Output: string(res.Stdout), Truncated: res.Truncated, Stderr: string(res.Stderr)}
	infra := processFailure(err)
	if e.Parse != nil {
		// A CLI agent's JSON says what it spent even when it failed.
		r, perr := e.Parse(res.Stdout)
		resp.Output, resp.Tokens, resp.Cost = r.Text, r.Tokens(), e.Price.cost(r)
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
// never gave an answer of its own: it could not start (say, the prompt was
// too large to pass), its shell found no command (exit 127) or could not
// run it (126), it was killed by a signal, or it ran out of time. It
// returns nil for anything else, including an ordinary failing exit.
func processFailure(err error) *InfraError {
	var exit *sandbox.ExitError
	var start *sandbox.StartError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sandbox.ErrTimeout), errors.As(err, &start):
	case errors.As(err, &exit) && (exit.ExitCode == 126 || exit.ExitCode == 127 || exit.ExitCode < 0 || exit.ExitCode > 128 && exit.ExitCode <= 128+64):
	default:
		return nil
	}
	return &InfraError{Err: err}
}

// isolate points HOME, TMPDIR and the agent's own home variables (homes)
// into the control directory, unless the library's config passes the
// user's own through.
func isolate(set map[string]string, control string, allow, homes []string) {
	dirs := append([]string{"HOME", "TMPDIR"}, homes...)
	for _, name := range dirs {
		if contains(allow, name) {
			continue
		}
		sub := strings.ToLower(name)
		if name == "TMPDIR" {
			sub = "tmp"
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
