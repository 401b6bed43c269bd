package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-descent/git-descent/sandbox"
)

// Attempt is one rollout shown to a proposer.
type Attempt struct {
	TaskID       string   `json:"task_id"`
	Prompt       string   `json:"prompt"`
	Output       string   `json:"output"`
	Expected     string   `json:"expected,omitempty"`
	Expectations []string `json:"expectations,omitempty"`
	Score        float64  `json:"score"`
	Error        string   `json:"error,omitempty"`
}

// Feedback is what a proposer is told about a worker's minibatch. It is
// written as JSON to the file named by DESCENT_FAILURES.
type Feedback struct {
	Library  string    `json:"library"`
	SkillDir string    `json:"skill_dir"` // the library inside the seat; edit files here
	Frozen   []string  `json:"frozen"`    // globs (relative to skill_dir) that must not change
	Failures []Attempt `json:"failures"`
	Passed   []Attempt `json:"passed"`
	// Repair, when set, asks to re-make an older proposal on the current
	// files instead of fixing failures.
	Repair *Repair `json:"repair,omitempty"`
}

// Repair describes a proposal made on an older version of the library and
// what changed since, for a proposer to re-apply it to the current files.
type Repair struct {
	Proposal string `json:"proposal"` // its commit
	Subject  string `json:"subject"`
	Body     string `json:"body,omitempty"`
	Diff     string `json:"diff"`     // the proposal's own change
	DevLog   string `json:"dev_log"`  // the commits that reached dev since its base
	DevDiff  string `json:"dev_diff"` // what they changed in the proposal's files
}

// ProposeRequest is one proposer run in a worker's seat: a directory
// outside the repository holding only the library, at its path.
type ProposeRequest struct {
	Library  string
	Worker   string
	Worktree string // absolute; the proposer's working directory
	SkillDir string // absolute directory of the library inside Worktree
	Feedback Feedback
	Control  string // a private directory outside the seat
}

// Rationale is the proposer's account of its edit: the commit subject and
// body of the proposal.
type Rationale struct {
	Subject  string
	Body     string
	Tokens   int64   // tokens the proposer used, when it reports them
	Cost     float64 // USD
	Unpriced int64   // tokens whose cost is unknown: the model has no price
}

// Proposer edits a library in a seat after failures. Implementations are
// safe for concurrent use on different seats.
type Proposer interface {
	Propose(ctx context.Context, req ProposeRequest) (Rationale, error)
}

// ExecProposer is a Proposer that runs a command template in the seat.
// The command finds the feedback in DESCENT_FAILURES ({{failures_file}}),
// edits files under DESCENT_SKILL_DIR, and may write its rationale (first
// line: subject) to DESCENT_RATIONALE_FILE; otherwise the first line of its
// standard output is the subject.
type ExecProposer struct {
	Command string
	Allow   []string
	Timeout time.Duration
	ExePath string
	Guarded []string // L1 globs, named in the brief

	// CLI is set for built-in CLI agents (Presets): they run in the
	// library's directory, and their output gives the rationale and usage.
	CLI *CLI

	Jail sandbox.Jail // the isolation and limits of each run; it may write its seat and control directory only
}

// Propose implements Proposer.
func (p *ExecProposer) Propose(ctx context.Context, req ProposeRequest) (Rationale, error) {
	failures := filepath.Join(req.Control, "failures.json")
	rationale := filepath.Join(req.Control, "rationale.txt")
	data, err := json.MarshalIndent(req.Feedback, "", "  ")
	if err != nil {
		return Rationale{}, err
	}
	if err := os.WriteFile(failures, data, 0o644); err != nil {
		return Rationale{}, err
	}
	brief := Brief(req.Feedback, p.Guarded)
	briefFile := filepath.Join(req.Control, "brief.md")
	if err := os.WriteFile(briefFile, []byte(brief), 0o644); err != nil {
		return Rationale{}, err
	}
	command, err := Expand(p.Command, map[string]string{
		"failures_file":  failures,
		"brief_file":     briefFile,
		"skill_dir":      req.Feedback.SkillDir,
		"rationale_file": rationale,
		"library":        req.Library,
		"worktree":       req.Worktree,
	})
	if err != nil {
		return Rationale{}, err
	}
	set := map[string]string{
		"DESCENT_FAILURES":       failures,
		"DESCENT_SKILL_DIR":      req.Feedback.SkillDir,
		"DESCENT_RATIONALE_FILE": rationale,
		"DESCENT_LIBRARY":        req.Library,
		"DESCENT_WORKER":         req.Worker,
		"DESCENT_WORKTREE":       req.Worktree,
		"DESCENT_BRIEF":          briefFile,
		// The seat is outside the repository; no git the proposer runs
		// may look above it for one.
		"GIT_CEILING_DIRECTORIES": filepath.Dir(req.Worktree),
	}
	isolate(set, req.Control, p.Allow)
	if p.CLI != nil {
		return p.proposeCLI(ctx, req, command, set, brief)
	}
	env := sandbox.Environ(p.Allow, set, p.ExePath)
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command: command,
		Dir:     req.Worktree,
		Env:     env,
		Stdin:   []byte(brief),
		Timeout: p.Timeout,
		Jail:    p.Jail.For(p.Command, env),
		Write:   []string{req.Worktree, req.Control},
	})
	if err != nil {
		return Rationale{}, err
	}
	return readRationale(rationale, string(res.Stdout)), nil
}

// readRationale parses the rationale file when the proposer wrote one, else
// its own account (stdout, or a CLI agent's final message).
func readRationale(file, fallback string) Rationale {
	if data, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(data)) != "" {
		return ParseRationale(string(data))
	}
	return ParseRationale(fallback)
}

// proposeCLI runs a CLI proposer in the library's directory of its seat.
// A tool call its permission mode refused fails the proposal with the
// client's reason: the edit it meant to make is missing.
func (p *ExecProposer) proposeCLI(ctx context.Context, req ProposeRequest, command string, set map[string]string, brief string) (Rationale, error) {
	if err := p.CLI.env(set, req.Control, p.Allow); err != nil {
		return Rationale{}, err
	}
	env := sandbox.Environ(p.Allow, set, p.ExePath)
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command:      command,
		Dir:          req.SkillDir,
		Env:          env,
		Jail:         p.Jail.For(p.Command, env),
		Write:        []string{req.Worktree, req.Control},
		Stdin:        []byte(brief),
		Timeout:      p.Timeout,
		MaxOutput:    maxProposerOutput,
		Offline:      p.CLI.Offline,
		OfflineAfter: p.CLI.OfflineAfter,
	})
	infra := processFailure(err)
	r, cost, unpriced, perr := p.CLI.read(res.Stdout)
	usage := Rationale{Tokens: r.Tokens(), Cost: cost, Unpriced: unpriced}
	if infra != nil {
		return usage, infra
	}
	if err := agentError(err, perr); err != nil {
		return usage, err
	}
	if len(r.Denied) > 0 {
		return usage, fmt.Errorf("the proposer was refused %d tool call(s): %s", len(r.Denied), strings.Join(r.Denied, "; "))
	}
	out := readRationale(set["DESCENT_RATIONALE_FILE"], r.Text)
	out.Tokens, out.Cost, out.Unpriced = usage.Tokens, usage.Cost, usage.Unpriced
	return out, nil
}

// maxProposerOutput caps a CLI proposer's output, which in stream-json
// holds its whole conversation.
const maxProposerOutput = 64 << 20

// ParseRationale reads a rationale: the first non-blank line is the subject
// (at most 100 characters), the rest the body.
func ParseRationale(text string) Rationale {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	subject, body, _ := strings.Cut(text, "\n")
	subject = strings.Join(strings.Fields(subject), " ")
	if r := []rune(subject); len(r) > 100 {
		subject = string(r[:99]) + "…"
	}
	return Rationale{Subject: subject, Body: strings.TrimSpace(body)}
}
