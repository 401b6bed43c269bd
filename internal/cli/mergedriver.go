package cli

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/merge"
)

type mergeDriverOptions struct {
	base, ours, theirs string // the files git passes as %O, %A and %B; the result is written over ours
	markerSize         int    // %L
	path               string // %P, the path the merged file has in the repository
}

func newMergeDriverCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "merge-driver <base> <ours> <theirs> <marker-size> <path>",
		Short: "The merge driver git runs for library files (%O %A %B %L %P)",
		Long: `merge-driver is run by git for files marked merge=descent (git descent init sets
this up). It merges like git merge-file and adds two fusion rules: when both sides
only inserted lines at the same place, both insertions are kept (ours first); when
both made the same edit, it appears once. It writes the result over <ours> and exits
0 when clean, 1 when conflicts remain (marked as usual).`,
		Args: argsUsage(cobra.ExactArgs(5)),
		RunE: func(c *cobra.Command, args []string) error {
			size, err := strconv.Atoi(args[3])
			if err != nil {
				return &UsageError{err}
			}
			return runMergeDriver(c.Context(), e, mergeDriverOptions{base: args[0], ours: args[1], theirs: args[2], markerSize: size, path: args[4]})
		},
	}
}

// runMergeDriver merges, and follows git's convention for a merge driver:
// an *ExitError with code 1 when conflicts remain.
func runMergeDriver(ctx context.Context, e *env, o mergeDriverOptions) error {
	n, err := merge.RunDriver(ctx, e.logger(), o.base, o.ours, o.theirs, o.markerSize, o.path)
	if err != nil {
		return err
	}
	if n > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}
