package agent

import (
	"context"
	"encoding/json"
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
	SkillDir string    `json:"skill_dir"` // the library inside the worktree; edit files here
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

// ProposeRequest is one proposer run in a worker's worktree.
type ProposeRequest struct {
	Library  string
	Worker   string
	Worktree string // absolute; the proposer's working directory
	SkillDir string // absolute directory of the library inside Worktree
	Feedback Feedback
	Control  string // a private directory outside the worktree
}

// Rationale is the proposer's account of its edit: the commit subject and
// body of the proposal.
type Rationale struct {
	Subject string
	Body    string
	Tokens  int64   // tokens the proposer used, when it reports them
	Cost    float64 // USD
}

// Proposer edits a library in a worktree after failures. Implementations are
// safe for concurrent use on different worktrees.
type Proposer interface {
	Propose(ctx context.Context, req ProposeRequest) (Rationale, error)
}

// ExecProposer is a Proposer that runs a command template in the worktree.
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

	// For built-in CLI agents (Presets): run in the library's directory,
	// read the rationale and usage from stdout.
	InSkillDir bool
	Parse      func(stdout []byte) (Result, error)
	Homes      []string
	Price      Price
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
		"skill_dir":      req.SkillDir,
		"rationale_file": rationale,
		"library":        req.Library,
		"worktree":       req.Worktree,
	})
	if err != nil {
		return Rationale{}, err
	}
	set := map[string]string{
		"DESCENT_FAILURES":       failures,
		"DESCENT_SKILL_DIR":      req.SkillDir,
		"DESCENT_RATIONALE_FILE": rationale,
		"DESCENT_LIBRARY":        req.Library,
		"DESCENT_WORKER":         req.Worker,
		"DESCENT_WORKTREE":       req.Worktree,
		"DESCENT_BRIEF":          briefFile,
	}
	isolate(set, req.Control, p.Allow, p.Homes)
	dir := req.Worktree
	if p.InSkillDir {
		dir = req.SkillDir
	}
	res, err := sandbox.Run(ctx, sandbox.Spec{
		Command: command,
		Dir:     dir,
		Env:     sandbox.Environ(p.Allow, set, p.ExePath),
		Stdin:   []byte(brief),
		Timeout: p.Timeout,
	})
	text := string(res.Stdout)
	var r Result
	if p.Parse != nil {
		var perr error
		r, perr = p.Parse(res.Stdout)
		text = r.Text
		err = agentError(err, perr)
	}
	usage := Rationale{Tokens: r.Tokens(), Cost: p.Price.cost(r)}
	if err != nil {
		return usage, err
	}
	if data, err := os.ReadFile(rationale); err == nil && strings.TrimSpace(string(data)) != "" {
		text = string(data)
	}
	out := ParseRationale(text)
	out.Tokens, out.Cost = usage.Tokens, usage.Cost
	return out, nil
}

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
