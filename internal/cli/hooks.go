package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/hooks"
)

func newHooksCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install git hooks that guard the descent refs a push updates",
		Long: `hooks installs a guard of the descent refs into git: in a shared bare repository a
pre-receive hook, which refuses a push (all of it) that breaks a rule; in a clone a
pre-push hook, which checks the descent refs being pushed before they leave. The rules:

  - descent/<lib>/dev, stable, worker branches (descent/<lib>/w/<id>) and queued
    proposals (refs/descent/<lib>/queue/<commit>) never change the library's frozen
    (L0) files: a proposal against the dev commit it was made on, dev and stable
    against their old value (frozen files change only in HEAD's history, by a person,
    and git descent sync brings them into dev)
  - stable only fast-forwards (or goes back with git descent promote --undo), to a
    commit on dev
  - dev and stable move only where the journal (refs/descent/<lib>/journal), as the
    push leaves it, records a decision moving them
  - dev, stable and the journal are deleted together or not at all

A bare repository trusts the .descent committed at its HEAD, never the pushed one; a
clone, its working tree's. Refs outside descent/ pass untouched, and a push of none
reads nothing. The refusal names the ref, the commit and the rule.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newHooksInstallCmd(e), newHooksUninstallCmd(e), newHooksRunCmd(e))
	return c
}

type hooksInstallOptions struct {
	chain bool
}

func newHooksInstallCmd(e *env) *cobra.Command {
	var o hooksInstallOptions
	c := &cobra.Command{
		Use:   "install",
		Short: "Install the guard: pre-receive in a bare repository, pre-push in a clone",
		Long: `install writes the guard hook into the directory git runs hooks from (core.hooksPath
when it is set, else hooks/ in the git directory): pre-receive in a bare repository,
pre-push in one with a working tree. The hook is a small sh script that runs
git-descent hooks run; it runs the git-descent that installed it, by the absolute path
it had then, or git-descent from PATH once that path is gone, and refuses the push
when it finds neither.

It never overwrites a hook it did not write: it refuses, naming the file. With --chain
that hook moves to <hook>.chained and the guard runs it first, with the same arguments
and input, and refuses the push when it fails; git descent hooks uninstall puts it
back. Installing again is safe, and replaces git-descent's own hook of any version.`,
		Example: `  git -C /srv/git/skills.git descent hooks install
  git descent hooks install --chain`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return runHooksInstall(c.Context(), e, o) },
	}
	c.Flags().BoolVar(&o.chain, "chain", false, "keep a hook git-descent did not write and run it first")
	return c
}

func runHooksInstall(ctx context.Context, e *env, o hooksInstallOptions) error {
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	exe := installedExe()
	in, err := hooks.Install(ctx, repo, hooks.InstallRequest{Chain: o.chain, Exe: exe})
	if err != nil {
		return err
	}
	name := filepath.Base(in.Hook)
	if in.Changed {
		fmt.Fprintf(e.stdout, "installed the %s guard at %s\n", name, in.Hook)
	} else {
		fmt.Fprintf(e.stdout, "the %s guard is installed already at %s\n", name, in.Hook)
	}
	if in.Chained != "" {
		fmt.Fprintf(e.stdout, "it runs %s first\n", in.Chained)
	}
	if exe != "" {
		fmt.Fprintf(e.stdout, "it runs %s (or git-descent from PATH when that is gone)\n", exe)
	}
	return nil
}

// installedExe is the git-descent an installed hook runs: this program,
// by the path PATH finds it at when that is this program (so a link that
// a later version replaces is followed), else where it is; "" when
// unknown.
func installedExe() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if p, err := exec.LookPath("git-descent"); err == nil {
		a, errA := os.Stat(p)
		b, errB := os.Stat(self)
		if abs, err := filepath.Abs(p); err == nil && errA == nil && errB == nil && os.SameFile(a, b) {
			return abs
		}
	}
	return self
}

func newHooksUninstallCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall",
		Short: "Remove git-descent's guard hooks and put back the hooks they chain",
		Long: `uninstall removes the pre-receive and pre-push hooks git-descent wrote and puts the
hooks they ran first (<hook>.chained) back in their place. Hooks git-descent did not
write are left alone.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return runHooksUninstall(c.Context(), e) },
	}
}

func runHooksUninstall(ctx context.Context, e *env) error {
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	out, err := hooks.Uninstall(ctx, repo)
	for _, p := range out.Removed {
		fmt.Fprintf(e.stdout, "removed %s\n", p)
	}
	for _, p := range out.Restored {
		fmt.Fprintf(e.stdout, "put back %s (from %s)\n", p, filepath.Base(p)+hooks.ChainedSuffix)
	}
	for _, p := range out.Foreign {
		fmt.Fprintf(e.stdout, "%s is not git-descent's: left alone\n", p)
	}
	if err == nil && len(out.Removed)+len(out.Restored)+len(out.Foreign) == 0 {
		fmt.Fprintln(e.stdout, "no git-descent hook is installed: nothing to do")
	}
	return err
}

type hooksRunOptions struct {
	hook   string
	script string
	args   []string
}

func newHooksRunCmd(e *env) *cobra.Command {
	var o hooksRunOptions
	c := &cobra.Command{
		Use:    "run <hook> [--script <path>] [-- <git's arguments>]",
		Short:  "What an installed hook runs (the guard)",
		Hidden: true,
		Args:   argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.hook, o.args = args[0], args[1:]
			return runHooksRun(c.Context(), e, o)
		},
	}
	c.Flags().StringVar(&o.script, "script", "", "the hook's path as git ran it, to find the hook it chains")
	return c
}

func runHooksRun(ctx context.Context, e *env, o hooksRunOptions) error {
	repo, err := e.repo(ctx)
	if err != nil {
		return err
	}
	return hooks.Run(ctx, repo, hooks.RunRequest{
		Hook: o.hook, Script: o.script, Args: o.args,
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
	})
}
