package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type showOptions struct {
	rev   string // a revision naming a proposal or a dev merge commit
	color string // auto, always or never
	json  bool
}

func newShowCmd(e *env) *cobra.Command {
	var o showOptions
	c := &cobra.Command{
		Use:   "show <proposal>|<dev merge>",
		Short: "Show a proposal's evidence, the decisions about it and its diff, or what a dev merge merged",
		Long: `show takes any revision naming a proposal commit (a hash, or a worker branch such as
descent/pdf-audit/w/3) and prints its rationale, its evidence card (the Descent-*
trailers), every decision the aggregator made about it with the validation tasks its
gate flipped (both ways), and the diff against the dev snapshot it was made from.

Given a dev merge commit (descent/pdf-audit/dev, descent/pdf-audit/stable, or one of
their ancestors that git-descent made), it prints the gate's numbers, the proposals the
merge brought in with their decisions and the tasks they flipped, whether stable has it
yet, and the diff against dev before the merge.`,
		Example: `  git descent show descent/pdf-audit/w/2
  git descent show descent/pdf-audit/dev
  git descent show 3e4bcb1 --json`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.rev = args[0]
			return runShow(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.color, "color", "auto", "color the diff: auto, always or never")
	c.Flags().BoolVar(&o.json, "json", false, "print as JSON (no diff)")
	return c
}

// shown is what show --json prints.
type shown struct {
	Kind      string            `json:"kind"` // "proposal" or "merge"
	Proposal  *shownProposal    `json:"proposal,omitempty"`
	Merge     *ledger.Merge     `json:"merge,omitempty"`
	InStable  *bool             `json:"in_stable,omitempty"` // merges: whether stable contains it
	Decisions []ledger.Decision `json:"decisions"`
}

type shownProposal struct {
	Commit       git.Hash `json:"commit"`
	Library      string   `json:"library"`
	Worker       string   `json:"worker"`
	Subject      string   `json:"subject"`
	Body         string   `json:"body,omitempty"`
	Base         git.Hash `json:"base"`
	Tasks        []string `json:"tasks"`
	RewardBefore float64  `json:"train_before"`
	RewardAfter  float64  `json:"train_after"`
	Tokens       int64    `json:"tokens"`
	Cost         float64  `json:"cost"`
	Agent        string   `json:"agent,omitempty"`
}

func runShow(ctx context.Context, e *env, o showOptions) error {
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	commit, err := repo.ResolveRef(ctx, o.rev+"^{commit}")
	if errors.Is(err, git.ErrRefNotFound) {
		return fmt.Errorf("%q names no commit (give a proposal hash, a worker branch such as descent/<lib>/w/1, or descent/<lib>/dev)", o.rev)
	}
	if err != nil {
		return err
	}
	msg, err := repo.CommitMessage(ctx, commit)
	if err != nil {
		return err
	}
	if ledger.IsMerge(msg) {
		return showMerge(ctx, e, o, repo, commit, msg)
	}
	p, err := ledger.ParseProposal(commit, msg)
	if err != nil {
		return fmt.Errorf("%w; it may be where dev started (git show %s shows it)", err, commit.Short())
	}
	lib, err := library.Find(ctx, repo, p.Library)
	if err != nil {
		return err
	}
	ds, err := ledger.OpenJournal(repo, lib.Name).DecisionsFor(ctx, commit)
	if err != nil && !errors.Is(err, ledger.ErrNoDecision) {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, shown{Kind: "proposal", Decisions: nonNil(ds), Proposal: &shownProposal{
			Commit: p.Commit, Library: p.Library, Worker: p.Worker, Subject: p.Subject, Body: p.Body, Base: p.Base, Tasks: p.Tasks,
			RewardBefore: p.RewardBefore, RewardAfter: p.RewardAfter, Tokens: p.Tokens, Cost: p.Cost, Agent: p.Agent,
		}})
	}
	color := useColor(o.color, e.stdout)
	w, done := e.page(ctx, repo)
	defer done()
	fmt.Fprintf(w, "proposal %s  (library %s, worker %s)\n\n    %s\n", p.Commit, p.Library, p.Worker, p.Subject)
	if p.Body != "" {
		fmt.Fprintln(w)
		for _, l := range strings.Split(p.Body, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nevidence\n")
	fmt.Fprintf(w, "  base     %s (the dev snapshot it was made from)\n", p.Base.Short())
	fmt.Fprintf(w, "  tasks    %s\n", strings.Join(p.Tasks, " "))
	fmt.Fprintf(w, "  train    %.2f → %.2f\n", p.RewardBefore, p.RewardAfter)
	took := p.Seconds // older proposals carry it as a trailer
	if took == 0 && len(ds) > 0 {
		took = ds[0].Seconds
	}
	fmt.Fprintf(w, "  cost     %d tokens, %s, %.1fs\n", p.Tokens, budget.Cost(p.Cost, p.Unpriced), took)
	if p.Agent != "" {
		fmt.Fprintf(w, "  agent    %s\n", p.Agent)
	}
	if len(ds) == 0 {
		fmt.Fprintf(w, "\nundecided: the next git descent evolve decides it\n")
	}
	for _, d := range ds {
		printDecision(w, d)
	}
	diff, err := repo.Diff(ctx, p.Base, p.Commit, []string{lib.Path}, color)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s", diff)
	return nil
}

// printDecision prints one decision about a proposal.
func printDecision(w io.Writer, d ledger.Decision) {
	fmt.Fprintf(w, "\ndecision, round %d: %s\n  %s\n", d.Round, d.Outcome, d.Reason)
	if d.Gate != nil {
		fmt.Fprintf(w, "  validation %s\n", d.Gate)
		printFlips(w, "  ", d.Gate)
		if d.Gate.Tokens > 0 || d.Gate.Cost > 0 {
			fmt.Fprintf(w, "  gate spent %d tokens, %s\n", d.Gate.Tokens, budget.Cost(d.Gate.Cost, d.Gate.Unpriced))
		}
	}
	if len(d.FusedWith) > 0 {
		var hs []string
		for _, h := range d.FusedWith {
			hs = append(hs, h.Short())
		}
		fmt.Fprintf(w, "  fused with %s\n", strings.Join(hs, ", "))
	}
	if !d.Merge.IsZero() && !strings.Contains(d.Reason, d.Merge.Short()) {
		fmt.Fprintf(w, "  merged as %s\n", d.Merge.Short())
	}
	switch {
	case d.Rebased:
		fmt.Fprintf(w, "  staleness %d (rebased onto the current dev)\n", d.Staleness)
	default:
		fmt.Fprintf(w, "  staleness %d\n", d.Staleness)
	}
	if !d.RepairedAs.IsZero() {
		fmt.Fprintf(w, "  repaired as %s\n", d.RepairedAs.Short())
	}
	if d.Oracle != "" {
		fmt.Fprintf(w, "  oracle: %s\n", d.Oracle)
	}
}

// printFlips lists the validation tasks a gate saw the candidate win and
// lose against dev.
func printFlips(w io.Writer, indent string, g *ledger.Gate) {
	switch {
	case len(g.Won) == 0 && len(g.Lost) == 0 && g.Losses == 0:
		fmt.Fprintf(w, "%sno validation task changed\n", indent)
		return
	case len(g.Won) > 0:
		fmt.Fprintf(w, "%sbetter on %s\n", indent, strings.Join(g.Won, " "))
	}
	switch {
	case len(g.Lost) > 0:
		fmt.Fprintf(w, "%sworse on  %s\n", indent, strings.Join(g.Lost, " "))
	case g.Losses > 0:
		fmt.Fprintf(w, "%sworse on  some tasks (decided by an older git-descent, which did not record them)\n", indent)
	}
}

// showMerge prints a dev merge commit: its gate, the proposals it merged
// with their decisions, whether stable has it, and its diff.
func showMerge(ctx context.Context, e *env, o showOptions, repo *git.Repo, commit git.Hash, msg string) error {
	m, err := ledger.ParseMerge(commit, msg)
	if err != nil {
		return err
	}
	lib, err := library.Find(ctx, repo, m.Library)
	if err != nil {
		return err
	}
	all, err := ledger.OpenJournal(repo, lib.Name).Decisions(ctx)
	if err != nil {
		return err
	}
	var ds []ledger.Decision
	for _, d := range all {
		if d.Merge == commit {
			ds = append(ds, d)
		}
	}
	var inStable *bool
	if stable, err := repo.ResolveRef(ctx, ledger.Refs{Library: lib.Name}.Stable()); err == nil {
		ok, err := repo.IsAncestor(ctx, commit, stable)
		if err != nil {
			return err
		}
		inStable = &ok
	}
	if o.json {
		return writeJSON(e.stdout, shown{Kind: "merge", Merge: m, InStable: inStable, Decisions: nonNil(ds)})
	}
	color := useColor(o.color, e.stdout)
	w, done := e.page(ctx, repo)
	defer done()
	fmt.Fprintf(w, "dev merge %s  (library %s, round %d)\n\n    %s\n\n", commit, m.Library, m.Round, m.Subject)
	fmt.Fprintf(w, "gate: validation %.2f → %.2f on %d tasks, P=%.2f > %.2f\n", m.Before, m.After, m.Tasks, m.P, 1-m.Delta)
	if len(ds) > 0 && ds[0].Gate != nil {
		printFlips(w, "  ", ds[0].Gate)
	}
	switch {
	case inStable == nil:
	case *inStable:
		fmt.Fprintf(w, "stable has it\n")
	default:
		fmt.Fprintf(w, "stable does not have it yet (git descent promote %s)\n", lib.Name)
	}
	fmt.Fprintf(w, "\n%s:\n", words.Count(len(ds), "proposal", "proposals"))
	for _, d := range ds {
		fmt.Fprintf(w, "  %s  w%-4s %s  %s\n", d.Proposal.Short(), d.Worker, d.Outcome, d.Subject)
	}
	parents, err := repo.Parents(ctx, commit)
	if err != nil {
		return err
	}
	if len(parents) == 0 {
		return nil
	}
	diff, err := repo.Diff(ctx, parents[0], commit, []string{lib.Path}, color)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s", diff)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil makes an empty list print as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// useColor decides colouring: always, never, or auto (a terminal).
func useColor(mode string, w any) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return isTerminal(w) && os.Getenv("NO_COLOR") == ""
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
