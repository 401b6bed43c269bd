package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/aggregate"
	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type promoteOptions struct {
	library string
	force   bool
	undo    bool
}

func newPromoteCmd(e *env) *cobra.Command {
	var o promoteOptions
	c := &cobra.Command{
		Use:               "promote [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Fast-forward stable to dev now, if dev holds up against stable",
		Long: `promote moves descent/<lib>/stable to dev without waiting for promote-after clean
rounds. It applies the check a round applies: stable must be an ancestor of dev (stable
only ever fast-forwards), and dev must score at least as well as stable on validation
(rolled out if not cached). --force skips the score check; the promotion is recorded as
forced in the journal. Both versions are scored on the sealed test split for the record.

--undo takes the latest promotion back: stable returns to where that promotion found it,
recorded in the journal, and rounds do not promote to the same dev again until dev moves
on (git descent promote still can). Run it again to undo the promotion before.
With nothing to do (stable already at dev, no promotion to undo) it says so and exits 0.`,
		Example: `  git descent promote pdf-audit
  git descent promote pdf-audit --undo`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runPromote(c.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.force, "force", false, "promote even if dev scores below stable (recorded as forced)")
	c.Flags().BoolVar(&o.undo, "undo", false, "move stable back to where the latest promotion found it")
	c.MarkFlagsMutuallyExclusive("force", "undo")
	return c
}

type rollbackOptions struct {
	library string
}

func newRollbackCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "rollback [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Reset dev to stable, recorded in the journal",
		Long: `rollback moves descent/<lib>/dev back to stable, for when dev took a wrong turn. The
old dev stays reachable through the journal (refs/descent/<lib>/journal), so nothing
merged since is lost: git log --all finds it, and a later evolve starts from stable.
With dev already at stable it says so and exits 0. To move stable back instead, use
git descent promote --undo.`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runRollback(c.Context(), e, rollbackOptions{library: firstArg(args)})
		},
	}
}

// adminLibrary opens the repository and a library that has been evolved.
func adminLibrary(ctx context.Context, e *env, name string) (*git.Repo, *library.Library, error) {
	repo, lib, err := e.library(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := repo.ResolveRef(ctx, ledger.Refs{Library: lib.Name}.Dev()); errors.Is(err, git.ErrRefNotFound) {
		return nil, nil, fmt.Errorf("library %q has not been evolved yet: run git descent evolve %s", lib.Name, lib.Path)
	}
	return repo, lib, nil
}

func runPromote(ctx context.Context, e *env, o promoteOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	refs := ledger.Refs{Library: lib.Name}
	if o.undo {
		p, err := evolve.Undo(ctx, repo, lib, evolve.Options{Log: e.logger()})
		if err != nil {
			return nothingToDo(e, err)
		}
		fmt.Fprintf(e.stdout, "%s: %s → %s, undoing the promotion of round %d (validation %.2f → %.2f)\n", ledger.Short(refs.Stable()), p.To.Short(), p.From.Short(), p.Round, p.Dev, p.Stable)
		return nil
	}
	p, err := evolve.Promote(ctx, repo, lib, o.force, evolve.Options{Log: e.logger()})
	if err != nil {
		return nothingToDo(e, err)
	}
	forced := ""
	if p.Forced {
		forced = " (forced)"
	}
	fmt.Fprintf(e.stdout, "%s: %s → %s%s; validation %.2f → %.2f\n", ledger.Short(refs.Stable()), p.From.Short(), p.To.Short(), forced, p.Stable, p.Dev)
	if p.StableTest != nil && p.DevTest != nil {
		fmt.Fprintf(e.stdout, "test split (sealed, not used to decide): %.2f → %.2f\n", *p.StableTest, *p.DevTest)
	}
	return nil
}

func runRollback(ctx context.Context, e *env, o rollbackOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	rb, err := evolve.Rollback(ctx, repo, lib, evolve.Options{Log: e.logger()})
	if err != nil {
		return nothingToDo(e, err)
	}
	refs := ledger.Refs{Library: lib.Name}
	fmt.Fprintf(e.stdout, "%s: %s → %s (stable); the old dev stays reachable from %s\n", ledger.Short(refs.Dev()), rb.From.Short(), rb.To.Short(), refs.Journal())
	return nil
}

// nothingToDo reports a request that would move nothing as a success,
// the way git says "Already up to date.", and returns any other error.
func nothingToDo(e *env, err error) error {
	if !errors.Is(err, aggregate.ErrNothingToDo) {
		return err
	}
	fmt.Fprintln(e.stdout, err)
	return nil
}

type syncOptions struct {
	library string
	rev     string
}

func newSyncCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "sync [<library>] [<rev>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Merge your branch's changes into dev, recorded in the journal",
		Long: `sync merges <rev> (default HEAD: your branch) into descent/<lib>/dev through the
library's merge driver, as a merge commit whose parents are dev and <rev>, recorded in
the journal in the same transaction. Edits you commit to the skill on your branch do not
reach dev by themselves: evolve works on dev, and says when your branch has moved since
dev last shared it. sync brings them in without a gate (they are yours); the next round
measures dev again. A merge that conflicts is refused with the files and the commands to
merge by hand. With dev already holding <rev> it says so and exits 0.`,
		Example: `  git descent sync pdf-audit
  git descent sync pdf-audit my-branch`,
		Args: argsUsage(cobra.MaximumNArgs(2)),
		RunE: func(c *cobra.Command, args []string) error {
			o := syncOptions{library: firstArg(args), rev: "HEAD"}
			if len(args) == 2 {
				o.rev = args[1]
			}
			return runSync(c.Context(), e, o)
		},
	}
}

func runSync(ctx context.Context, e *env, o syncOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	rev, err := resolveCommit(ctx, repo, o.rev)
	if err != nil {
		return err
	}
	s, err := evolve.Sync(ctx, repo, lib, rev, evolve.Options{Log: e.logger()})
	if err != nil {
		return nothingToDo(e, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s → %s, merging %s (%s); the next round measures it\n", ledger.Short(ledger.Refs{Library: lib.Name}.Dev()), s.From.Short(), s.To.Short(), o.rev, s.Rev.Short())
	return nil
}

type keepOptions struct {
	library string
}

func newKeepCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "keep [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Keep dev and stable where you moved them by hand",
		Long: `keep records descent/<lib>/dev and stable where they are now, when you moved them
yourself (git update-ref, git branch -f, a reset). git-descent moves them only with a
record in its journal, and refuses to run on either once it is anywhere else, since
nothing put there passed a gate: a person, or an agent that reached the repository,
could have moved it. keep is how you say the move was yours. The versions the journal
had them at stay reachable from refs/descent/<lib>/journal.`,
		Example: `  git update-ref refs/heads/descent/pdf-audit/stable hand-tuned
  git descent keep pdf-audit`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runKeep(c.Context(), e, keepOptions{library: firstArg(args)})
		},
	}
}

func runKeep(ctx context.Context, e *env, o keepOptions) error {
	repo, lib, err := adminLibrary(ctx, e, o.library)
	if err != nil {
		return err
	}
	kept, err := ledger.Keep(ctx, repo, lib.Name)
	if err != nil {
		return err
	}
	if len(kept) == 0 {
		fmt.Fprintf(e.stdout, "dev and stable of %s are where the journal left them: nothing to keep\n", lib.Name)
		return nil
	}
	for _, k := range kept {
		fmt.Fprintf(e.stdout, "%s: kept at %s (the journal had %s, which stays reachable from it)\n", ledger.Short(k.Ref), k.To.Short(), k.From.Short())
	}
	return nil
}
