// Package cli is git-descent's command line: one file per command, each a
// cobra constructor, an options struct and a run function tests can call.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// env carries a command's I/O and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string // -C
	verbose        bool   // -v
	noPager        bool   // --no-pager
	// terminal reports whether a writer is a terminal (tests pretend).
	terminal func(any) bool
}

func (e *env) logger() *slog.Logger {
	if e.verbose {
		return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(newLineHandler(e.stderr))
}

// repo opens the repository git-descent runs in (-C, or the current
// directory).
func (e *env) repo(ctx context.Context) (*git.Repo, error) {
	return git.Open(ctx, e.dir, e.logger())
}

// library opens the repository and the library named by arg (see
// library.Find).
func (e *env) library(ctx context.Context, arg string) (*git.Repo, *library.Library, error) {
	repo, err := e.repo(ctx)
	if err != nil {
		return nil, nil, err
	}
	lib, err := library.Find(ctx, repo, arg)
	return repo, lib, err
}

// libraries opens the repository and the library named by name, or every
// configured library when name is "" (possibly none).
func (e *env) libraries(ctx context.Context, name string) (*git.Repo, []*library.Library, error) {
	repo, err := e.repo(ctx)
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		libs, err := library.LoadAll(ctx, repo)
		return repo, libs, err
	}
	l, err := library.Find(ctx, repo, name)
	if err != nil {
		return nil, nil, err
	}
	return repo, []*library.Library{l}, nil
}

// ExitError asks main to exit with Code; a non-empty Message is printed.
type ExitError struct {
	Code    int
	Message string
}

func (e *ExitError) Error() string { return e.Message }

// Run executes the command line args and returns the error to report.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(&env{stdin: os.Stdin, stdout: stdout, stderr: stderr, dir: ".", terminal: isTerminal})
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	_, err := root.ExecuteContextC(ctx)
	return err
}

// UsageError is a bad command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage reports whether err is a command-line mistake (exit status 2).
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "git-descent",
		Short: "Improve agent skills by measured, parallel, reviewable edits in your git repository",
		Long: `git descent improves a directory of agent instructions (a skill) the way training
improves a model: workers run an agent on eval tasks, a proposer edits the skill
where it failed, each edit becomes a commit, and an aggregator merges edits into
descent/<skill>/dev only when they beat dev on held-out tasks. stable follows dev
once dev has held up. Review with git log/diff/show; adopt with git merge.

Start with:
  git descent demo                       # see it work, offline
  git descent init skills/my-skill       # configure a skill of your own
  git descent evolve skills/my-skill`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
		Args:          unknownCommand,
		RunE:          func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true // completion is ours: it adds "git descent"
	root.PersistentFlags().StringVarP(&e.dir, "directory", "C", ".", "run as if started in `dir`")
	root.PersistentFlags().BoolVarP(&e.verbose, "verbose", "v", false, "log every git command and more to stderr")
	root.PersistentFlags().BoolVar(&e.noPager, "no-pager", false, "never page long output (log, show) on a terminal")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(
		newInitCmd(e),
		newEvolveCmd(e),
		newStatusCmd(e),
		newLogCmd(e),
		newShowCmd(e),
		newEvalCmd(e),
		newTasksCmd(e),
		newDoctorCmd(e),
		newAdoptCmd(e),
		newExportCmd(e),
		newReportCmd(e),
		newPromoteCmd(e),
		newRollbackCmd(e),
		newKeepCmd(e),
		newSyncCmd(e),
		newWorkCmd(e),
		newAggregateCmd(e),
		newCICmd(e),
		newHooksCmd(e),
		newCacheCmd(e),
		newMergeDriverCmd(e),
		newDemoCmd(e),
		newDemoAgentCmd(e),
		newDemoProposeCmd(e),
		newBenchCmd(e),
		newBenchAgentCmd(e),
		newBenchProposeCmd(e),
		newBenchScoreCmd(e),
		newVersionCmd(e),
		newManCmd(e),
		newCompletionCmd(e),
	)
	return root
}

// unknownCommand is the root's check of its arguments: any is a command
// that does not exist, reported with the commands it may have meant.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", quoteJoin(s))
	}
	return &UsageError{fmt.Errorf("%s (see %s --help)", msg, c.CommandPath())}
}

// quoteJoin lists words quoted, the last after "or".
func quoteJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// argsUsage wraps a cobra positional-argument check so that its error is a
// UsageError.
func argsUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return &UsageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
		}
		return nil
	}
}

// firstArg is the optional positional argument of a command that takes at
// most one, or "".
func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// resolveCommit names the commit a revision given on the command line
// names, or says it names none.
func resolveCommit(ctx context.Context, repo *git.Repo, rev string) (git.Hash, error) {
	h, err := repo.ResolveRef(ctx, rev+"^{commit}")
	if errors.Is(err, git.ErrRefNotFound) {
		return "", fmt.Errorf("%q names no commit", rev)
	}
	return h, err
}
