package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/merge"
)

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
			n, err := merge.RunDriver(c.Context(), e.logger(), args[0], args[1], args[2], size, args[4])
			if err != nil {
				return err
			}
			if n > 0 {
				return &ExitError{Code: 1}
			}
			return nil
		},
	}
}
