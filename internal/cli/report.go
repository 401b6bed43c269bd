package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/report"
	"github.com/git-descent/git-descent/rollout"
)

type reportOptions struct {
	library string
	out     string
}

func newReportCmd(e *env) *cobra.Command {
	var o reportOptions
	c := &cobra.Command{
		Use:               "report [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Write one self-contained HTML page of a library's evolution, with charts",
		Long: `report writes one HTML page, readable offline (its charts are SVG drawn into the page;
nothing is fetched when it is viewed), with: the lift of stable over the start on the
sealed test split with its 95% interval (from the rollout cache: report runs no agent);
dev's and stable's validation after each round, with promotions and test scores marked;
the decisions per round by outcome; tokens and cost over time; each worker's steps
(rolling out, proposing, measuring, and the waits between); the fusion and staleness
statistics; the table of every decision with its diff; and the diff from the start to
stable. By default it goes to .git/descent/report/<lib>.html (nothing is written to
your working tree unless -o says so).`,
		Example: `  git descent report pdf-audit
  git descent report pdf-audit -o /tmp/pdf-audit.html`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runReport(c.Context(), e, o)
		},
	}
	c.Flags().StringVarP(&o.out, "output", "o", "", "the `file` to write (- for standard output; default .git/descent/report/<lib>.html)")
	return c
}

// maxDiffs bounds the decisions whose diff the page carries.
const maxDiffs = 500

func runReport(ctx context.Context, e *env, o reportOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	r, err := gatherReport(ctx, repo, lib)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := report.Write(&b, r); err != nil {
		return err
	}
	if o.out == "-" {
		_, err := e.stdout.Write(b.Bytes())
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join(repo.DescentDir(), "report", lib.Name+".html")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(e.stdout, "wrote %s (%s): open file://%s in a browser\n", out, byteSize(int64(b.Len())), abs)
	return nil
}

// gatherReport reads what the report shows: the journal's records and
// decisions, the diffs, and the test split's cached rollouts.
func gatherReport(ctx context.Context, repo *git.Repo, lib *library.Library) (*report.Run, error) {
	refs := ledger.Refs{Library: lib.Name}
	r := &report.Run{Library: lib.Name, Path: lib.Path, Generated: time.Now(), Diffs: map[git.Hash]string{}}
	var err error
	if r.Dev, err = repo.ResolveRef(ctx, refs.Dev()); err != nil {
		return nil, err
	}
	if r.Stable, err = repo.ResolveRef(ctx, refs.Stable()); err != nil {
		return nil, err
	}
	j := ledger.OpenJournal(repo, lib.Name)
	history, err := j.History(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := j.Decisions(ctx)
	if err != nil {
		return nil, err
	}
	r.FromHistory(history, ds)
	r.Start = r.Stable
	if len(history) > 0 {
		r.Start = history[0].State.Heads.Dev
	}
	n := 0
	for i := len(ds) - 1; i >= 0 && n < maxDiffs; i-- {
		d := ds[i]
		if d.Proposal.IsZero() || d.Base.IsZero() || r.Diffs[d.Proposal] != "" {
			continue
		}
		if diff, err := repo.Diff(ctx, d.Base, d.Proposal, []string{lib.Path}, false); err == nil {
			r.Diffs[d.Proposal] = diff
			n++
		}
	}
	if r.Start != r.Stable {
		if r.FinalDiff, err = repo.Diff(ctx, r.Start, r.Stable, []string{lib.Path}, false); err != nil {
			return nil, err
		}
	}
	cached, tasks, err := evolve.CachedTest(ctx, repo, lib, r.Start, r.Stable)
	switch {
	case err != nil:
		r.LiftNote = fmt.Sprintf("the test split's rollouts could not be read: %v", err)
	case len(tasks) == 0:
		r.LiftNote = "the library has no test split (see library.<name>.split)"
	case cached[r.Start] == nil || cached[r.Stable] == nil:
		r.LiftNote = fmt.Sprintf("not every test rollout of the start and of stable is cached; git descent eval %s --split test --rev %s (and --rev %s) scores them", lib.Name, r.Start.Short(), r.Stable.Short())
	default:
		a, b := cached[r.Stable], cached[r.Start]
		if l := evolve.Lift(a, b); l != nil {
			r.Lift = &report.Lift{Mean: l.Mean, Lo: l.Lo, Hi: l.Hi, Tasks: len(tasks), Start: rollout.Mean(b), After: rollout.Mean(a)}
		} else {
			r.LiftNote = "the test split has fewer than two tasks"
		}
	}
	return r, nil
}
