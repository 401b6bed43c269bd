package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/ledger"
)

type logOptions struct {
	library  string
	json     bool
	fusion   bool     // the fusion statistics instead of the decisions
	n        int      // the latest n decisions (0: all)
	outcomes []string // only these outcomes
}

func newLogCmd(e *env) *cobra.Command {
	var o logOptions
	c := &cobra.Command{
		Use:               "log [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "List every decision, accepted or not, with its numbers",
		Long: `log prints the aggregator's decisions from the journal (refs/descent/<lib>/journal):
one row per proposal per round, with the worker, the outcome, validation before and
after, and P(candidate better). Proposals that never became commits (a proposer that
failed, changed nothing, or edited what it may not) appear too, without a hash.

-n keeps the latest N decisions; --outcome keeps those with the outcomes named
(committed, rejected, promising, duplicate, invalid, proposer-failed, ...). On a
terminal the table goes through git's pager (core.pager, GIT_PAGER, PAGER; --no-pager
or GIT_PAGER=cat turns it off).

The same decisions are notes on the proposal commits: git log --notes=descent.`,
		Example: `  git descent log pdf-audit -n 20
  git descent log pdf-audit --outcome committed,promising
  git descent log pdf-audit --json | jq '.[] | select(.outcome == "rejected") | .gate.lost'`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runLog(c.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the decisions as JSON")
	c.Flags().IntVarP(&o.n, "max-count", "n", 0, "show only the latest `N` decisions")
	c.Flags().StringSliceVar(&o.outcomes, "outcome", nil, "show only decisions with these `outcomes` (comma-separated)")
	c.RegisterFlagCompletionFunc("outcome", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var names []cobra.Completion
		for _, o := range ledger.Outcomes() {
			names = append(names, string(o))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	c.Flags().BoolVar(&o.fusion, "fusion", false, "print the fusion statistics instead (see evolve --fusion-tournament)")
	return c
}

// runLog prints the decisions, or with o.fusion the fusion statistics.
func runLog(ctx context.Context, e *env, o logOptions) error {
	if o.fusion {
		return runFusionLog(ctx, e, o)
	}
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	ds, err := ledger.OpenJournal(repo, lib.Name).Decisions(ctx)
	if err != nil {
		return err
	}
	if ds, err = o.filter(ds); err != nil {
		return err
	}
	if o.json {
		if ds == nil {
			ds = []ledger.Decision{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ds)
	}
	if len(ds) == 0 {
		if len(o.outcomes) > 0 {
			fmt.Fprintf(e.stdout, "no %s decisions for %s\n", strings.Join(o.outcomes, " or "), lib.Name)
			return nil
		}
		fmt.Fprintf(e.stdout, "no decisions yet for %s: run git descent evolve %s\n", lib.Name, lib.Path)
		return nil
	}
	out, done := e.page(ctx, repo)
	defer done()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tPROPOSAL\tWORKER\tOUTCOME\tVALIDATION\tP\tSUBJECT / REASON")
	for _, d := range ds {
		id, val, p := "-", "-", "-"
		if !d.Proposal.IsZero() {
			id = d.Proposal.Short()
		}
		if d.Gate != nil {
			val = fmt.Sprintf("%.2f → %.2f", d.Gate.Before, d.Gate.After)
			p = fmt.Sprintf("%.2f", d.Gate.P)
		}
		// Subjects are clipped; reasons never are, as they explain the outcome.
		text := clipText(d.Subject, 60)
		switch {
		case text == "":
			text = d.Reason
		case d.Outcome != ledger.Committed:
			text += " — " + d.Reason
		}
		fmt.Fprintf(tw, "%d\t%s\tw%s\t%s\t%s\t%s\t%s\n", d.Round, id, d.Worker, d.Outcome, val, p, text)
	}
	return tw.Flush()
}

// filter keeps the decisions with the asked outcomes, then the latest n.
func (o logOptions) filter(ds []ledger.Decision) ([]ledger.Decision, error) {
	if o.n < 0 {
		return nil, &UsageError{fmt.Errorf("-n %d: give a number of decisions, at least 1", o.n)}
	}
	if len(o.outcomes) > 0 {
		want := map[ledger.Outcome]bool{}
		for _, name := range o.outcomes {
			out := ledger.Outcome(name)
			if !slices.Contains(ledger.Outcomes(), out) {
				var names []string
				for _, k := range ledger.Outcomes() {
					names = append(names, string(k))
				}
				return nil, &UsageError{fmt.Errorf("--outcome %q: no such outcome (one of %s)", name, strings.Join(names, ", "))}
			}
			want[out] = true
		}
		var kept []ledger.Decision
		for _, d := range ds {
			if want[d.Outcome] {
				kept = append(kept, d)
			}
		}
		ds = kept
	}
	if o.n > 0 && len(ds) > o.n {
		ds = ds[len(ds)-o.n:]
	}
	return ds, nil
}

// clipLine is s on one line (runs of white space as one space), clipped.
func clipLine(s string, n int) string { return clipText(strings.Join(strings.Fields(s), " "), n) }

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// runFusionLog prints what fusing proposals achieved: with the tournament
// on, every fusion ranked against its best single member.
func runFusionLog(ctx context.Context, e *env, o logOptions) error {
	repo, lib, err := e.library(ctx, o.library)
	if err != nil {
		return err
	}
	head, err := ledger.OpenJournal(repo, lib.Name).Head(ctx)
	if err != nil {
		return err
	}
	fs := head.State.Fusion
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(fs)
	}
	w := e.stdout
	fmt.Fprintf(w, "fusions sent to the gate: %d; proposals that duplicated another (nothing to fuse): %d\n", fs.Fused, fs.NothingToFuse)
	if fs.Contested == 0 {
		fmt.Fprintf(w, "no fusion was ranked against its singles: run evolve with --fusion-tournament (or set library.%s.fusion-tournament)\n", lib.Name)
		return nil
	}
	fmt.Fprintf(w, "contested: %d; fused wins %d, single wins %d, ties %d\n", fs.Contested, fs.FusedWins, fs.SingleWins, fs.Ties)
	fmt.Fprintf(w, "mean gain of the fusion over its best single: %+.3f\n", fs.GainSum/float64(fs.Contested))
	if fs.LossCount > 0 {
		fmt.Fprintf(w, "losing tail: %d losses, mean %+.3f, worst %+.3f\n", fs.LossCount, fs.LossSum/float64(fs.LossCount), fs.WorstLoss)
	} else {
		fmt.Fprintf(w, "losing tail: none (if ties are many, validation may be too small to tell fusions apart)\n")
	}
	return nil
}
