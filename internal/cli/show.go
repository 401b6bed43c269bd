package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type showOptions struct {
	rev   string // a revision naming a proposal commit
	color string // auto, always or never
}

func newShowCmd(e *env) *cobra.Command {
	var o showOptions
	c := &cobra.Command{
		Use:   "show <proposal>",
		Short: "Show a proposal's evidence, the decisions about it, and its diff",
		Long: `show takes any revision naming a proposal commit (a hash, or a worker branch such as
descent/pdf-audit/w/3) and prints its rationale, its evidence card (the Descent-*
trailers), every decision the aggregator made about it, and the diff against the dev
snapshot it was made from.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.rev = args[0]
			return runShow(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.color, "color", "auto", "color the diff: auto, always or never")
	return c
}

func runShow(ctx context.Context, e *env, o showOptions) error {
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	commit, err := repo.ResolveRef(ctx, o.rev+"^{commit}")
	if errors.Is(err, git.ErrRefNotFound) {
		return fmt.Errorf("%q names no commit (give a proposal hash or a worker branch such as descent/<lib>/w/1)", o.rev)
	}
	if err != nil {
		return err
	}
	p, err := ledger.ReadProposal(ctx, repo, commit)
	if err != nil {
		return err
	}
	lib, err := library.Find(ctx, repo, p.Library)
	if err != nil {
		return err
	}
	w := e.stdout
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
	ds, err := ledger.OpenJournal(repo, lib.Name).DecisionsFor(ctx, commit)
	if err != nil && !errors.Is(err, ledger.ErrNoDecision) {
		return err
	}
	took := p.Seconds // older proposals carry it as a trailer
	if took == 0 && len(ds) > 0 {
		took = ds[0].Seconds
	}
	fmt.Fprintf(w, "  cost     %d tokens, %s, %.1fs\n", p.Tokens, budget.Cost(p.Cost, p.Unpriced), took)
	if p.Agent != "" {
		fmt.Fprintf(w, "  agent    %s\n", p.Agent)
	}
	if errors.Is(err, ledger.ErrNoDecision) {
		fmt.Fprintf(w, "\nundecided: the next git descent evolve decides it\n")
	}
	for _, d := range ds {
		fmt.Fprintf(w, "\ndecision, round %d: %s\n  %s\n", d.Round, d.Outcome, d.Reason)
		if d.Gate != nil {
			fmt.Fprintf(w, "  validation %s\n", d.Gate)
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
	diff, err := repo.Diff(ctx, p.Base, p.Commit, []string{lib.Path}, useColor(o.color, w))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s", diff)
	return nil
}

// useColor decides colouring: always, never, or auto (a terminal).
func useColor(mode string, w any) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
