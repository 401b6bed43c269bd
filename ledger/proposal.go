package ledger

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
)

// Evidence is the card a worker attaches to a proposal, as commit trailers
// whose names are part of git-descent's public interface.
type Evidence struct {
	Library      string
	Worker       string
	Base         git.Hash // the dev snapshot the proposal was made from
	Tasks        []string // the train tasks it was made from
	RewardBefore float64  // mean reward on Tasks at Base
	RewardAfter  float64  // mean reward on Tasks with the proposal applied
	Tokens       int64    // tokens spent by its rollouts and the proposer
	Cost         float64  // USD spent by its rollouts and the proposer
	Unpriced     int64    // tokens of Tokens whose cost is unknown (no price for the model)
	// Seconds is the wall time of the worker's round, rollouts and
	// proposer. It is not a trailer (so that a proposal's commit depends
	// only on what was proposed and a fixed date gives a fixed hash): the
	// decision in the journal keeps it.
	Seconds float64
	Agent   string // the runner and proposer that made it, with versions, e.g. "claude 2.1.3 / openai gpt-4.1"
	// Started, RolloutSeconds and ProposeSeconds time the worker's step,
	// for the decision's record; not trailers, as Seconds is not.
	Started        time.Time
	RolloutSeconds float64
	ProposeSeconds float64
}

// Proposal is an edit as a commit on a worker branch: its parent is
// Evidence.Base, its subject the proposer's rationale.
type Proposal struct {
	Commit  git.Hash
	Subject string
	Body    string
	Evidence
}

// Message renders the proposal's commit message.
func (p *Proposal) Message() string {
	e := p.Evidence
	cost := strconv.FormatFloat(e.Cost, 'f', 4, 64)
	if e.Unpriced > 0 && e.Cost == 0 {
		cost = "unknown" // never $0 for tokens nobody priced
	}
	trailers := []Trailer{
		{"Descent-Library", e.Library},
		{"Descent-Worker", e.Worker},
		{"Descent-Base", string(e.Base)},
		{"Descent-Tasks", joinIDs(e.Tasks)},
		{"Descent-Reward-Before", fmtFloat(e.RewardBefore)},
		{"Descent-Reward-After", fmtFloat(e.RewardAfter)},
		{"Descent-Tokens", strconv.FormatInt(e.Tokens, 10)},
		{"Descent-Cost", cost},
	}
	if e.Unpriced > 0 {
		trailers = append(trailers, Trailer{"Descent-Unpriced-Tokens", strconv.FormatInt(e.Unpriced, 10)})
	}
	trailers = append(trailers, Trailer{"Descent-Agent", e.Agent})
	return formatMessage(p.Subject, p.Body, trailers)
}

// ParseProposal reads a proposal back from its commit message. It fails when
// the message carries no Descent-Library trailer.
func ParseProposal(commit git.Hash, msg string) (*Proposal, error) {
	subject, body, ts := parseMessage(msg)
	p := &Proposal{Commit: commit, Subject: subject, Body: body}
	p.Library = trailerValue(ts, "Descent-Library")
	if p.Library == "" {
		return nil, fmt.Errorf("commit %s is not a git-descent proposal (no Descent-Library trailer)", commit.Short())
	}
	p.Worker = trailerValue(ts, "Descent-Worker")
	if p.Worker == "" {
		if trailerValue(ts, "Descent-Round") != "" {
			return nil, fmt.Errorf("commit %s is a dev merge of git-descent, not a proposal", commit.Short())
		}
		return nil, fmt.Errorf("commit %s is not a git-descent proposal (no Descent-Worker trailer)", commit.Short())
	}
	p.Base = git.Hash(trailerValue(ts, "Descent-Base"))
	p.Tasks = splitIDs(trailerValue(ts, "Descent-Tasks"))
	p.RewardBefore, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Reward-Before"), 64)
	p.RewardAfter, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Reward-After"), 64)
	p.Tokens, _ = strconv.ParseInt(trailerValue(ts, "Descent-Tokens"), 10, 64)
	p.Seconds, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Seconds"), 64) // written before 2026-12-01
	p.Cost, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Cost"), 64)       // "unknown" reads as 0
	p.Unpriced, _ = strconv.ParseInt(trailerValue(ts, "Descent-Unpriced-Tokens"), 10, 64)
	p.Agent = trailerValue(ts, "Descent-Agent")
	return p, nil
}

// ReadProposal loads the proposal a commit holds.
func ReadProposal(ctx context.Context, repo *git.Repo, commit git.Hash) (*Proposal, error) {
	msg, err := repo.CommitMessage(ctx, commit)
	if err != nil {
		return nil, err
	}
	return ParseProposal(commit, msg)
}

// WriteProposal commits tree as a proposal on top of its base and moves the
// worker's branch to it (compare-and-swap against the branch's value as
// read here). It fills in p.Commit.
func WriteProposal(ctx context.Context, repo *git.Repo, p *Proposal, tree git.Hash) error {
	c, err := repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: []git.Hash{p.Base}, Message: p.Message()})
	if err != nil {
		return fmt.Errorf("commit proposal of worker %s: %w", p.Worker, err)
	}
	ref := Refs{p.Library}.Worker(p.Worker)
	old, err := resolveOrZero(ctx, repo, ref)
	if err != nil {
		return err
	}
	if err := repo.SetRef(ctx, git.SetRefRequest{Ref: ref, Hash: c, OldHash: old, Reason: "git-descent: proposal"}); err != nil {
		return err
	}
	p.Commit = c
	return nil
}

// resolveOrZero reads a ref, or returns the zero hash when it does not exist.
func resolveOrZero(ctx context.Context, repo *git.Repo, ref string) (git.Hash, error) {
	h, err := repo.ResolveRef(ctx, ref)
	if err != nil {
		if isNotFound(err) {
			return git.ZeroHash, nil
		}
		return "", err
	}
	return h, nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }

// joinIDs lists task ids separated by spaces; an id holding a space or a
// percent sign is percent-encoded so the list reads back exactly.
func joinIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if strings.ContainsAny(id, " %\t\n") {
			id = url.PathEscape(id)
		}
		out[i] = id
	}
	return strings.Join(out, " ")
}

func splitIDs(s string) []string {
	var ids []string
	for _, f := range strings.Fields(s) {
		if id, err := url.PathUnescape(f); err == nil {
			f = id
		}
		ids = append(ids, f)
	}
	return ids
}
