package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/library"
)

func newCacheCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "Manage the rollout cache",
		Long: `Every rollout's result is cached under .git/descent/cache/<lib>/rollouts, keyed by
the library version, the task, the agent's and scorer's configuration, the content
of the scripts they run (and of the files the library's fingerprint globs name) and
the repeat index. Nothing else ever invalidates an entry. Clear it when something
outside that key changed the agent's behaviour (a model behind the same name, a
tool it calls), or run evolve --no-cache once.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newCacheClearCmd(e))
	return c
}

type cacheClearOptions struct {
	library string // "" for every library
}

func newCacheClearCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "clear [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Delete the cached rollouts of a library (every library when none is named)",
		Args:              argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runCacheClear(c.Context(), e, cacheClearOptions{library: firstArg(args)})
		},
	}
}

func runCacheClear(ctx context.Context, e *env, o cacheClearOptions) error {
	repo, libs, err := e.libraries(ctx, o.library)
	if err != nil {
		return err
	}
	if len(libs) == 0 {
		fmt.Fprintf(e.stdout, "no library configured in %s: nothing to clear\n", library.FileName)
		return nil
	}
	for _, l := range libs {
		u, err := evolve.ClearCache(repo, l)
		if err != nil {
			return err
		}
		if u.Records == 0 {
			fmt.Fprintf(e.stdout, "%s: the rollout cache is empty\n", l.Name)
			continue
		}
		fmt.Fprintf(e.stdout, "%s: removed %s (%s)\n", l.Name, words.Count(u.Records, "cached rollout"), byteSize(u.Bytes))
	}
	return nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
