package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/git-descent/git-descent/internal/words"
)

type manOptions struct {
	dir string // where the pages go; "" for beside the executable
}

func newManCmd(e *env) *cobra.Command {
	var o manOptions
	c := &cobra.Command{
		Use:   "man",
		Short: "Install the manual pages, so that git descent --help and git help descent work",
		Long: `man writes one manual page per command (git-descent.1, git-descent-evolve.1, ...),
generated from the same text as --help, into a man1 directory.

git turns "git descent --help" into "git help descent", which runs "man git-descent";
without the pages it says "No manual entry for git-descent". By default the pages go
to share/man/man1 beside the directory git-descent is installed in (for
~/go/bin/git-descent, ~/go/share/man/man1), where man looks by itself for programs
on PATH. man then tells whether it finds them, and if not, the MANPATH to set.
Run it again after upgrading git-descent.`,
		Example: `  git descent man
  git descent man --dir ~/.local/share/man/man1
  git help descent`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runMan(e, c.Root(), o)
		},
	}
	c.Flags().StringVar(&o.dir, "dir", "", "write the pages into `dir` (default: share/man/man1 beside the executable)")
	return c
}

func runMan(e *env, root *cobra.Command, o manOptions) error {
	dir := o.dir
	if dir == "" {
		exe, err := os.Executable()
		if err == nil {
			exe, err = filepath.EvalSymlinks(exe)
		}
		if err != nil {
			return fmt.Errorf("finding where git-descent is installed: %w (give --dir)", err)
		}
		dir = filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "man", "man1")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w (give --dir a directory you can write)", err)
	}
	markdownLong(root)
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Section: "1", Source: strings.Fields(versionLine())[1], Manual: "git-descent manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("writing the manual pages: %w", err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "git-descent*.1"))
	fmt.Fprintf(e.stdout, "wrote %s to %s\n", words.Count(len(pages), "manual page"), dir)
	// man's own answer is the only reliable one: its search path depends on
	// PATH, MANPATH and /etc/manpath.config.
	want := filepath.Join(dir, "git-descent.1")
	out, err := exec.Command("man", "-w", "git-descent").Output()
	switch found := strings.TrimSpace(string(out)); {
	case errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(e.stdout, "man is not installed here; read a page with: man -l %s\n", want)
	case sameFile(found, want):
		fmt.Fprintf(e.stdout, "man finds them: git descent --help and git help descent show git-descent.1\n")
	default:
		fmt.Fprintf(e.stdout, "man does not look there yet; add it to your shell's profile:\n  export MANPATH=\"%s:$MANPATH\"\n", filepath.Dir(dir))
	}
	return nil
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// markdownLong rewrites every command's texts, which are written for a
// terminal, as the markdown cobra's man page generator reads. In Long, indented
// lines become code blocks (a blank line before them, four spaces), and
// outside them <, > and the other characters markdown would take for
// markup are escaped.
func markdownLong(c *cobra.Command) {
	var b strings.Builder
	code := false
	for i, line := range strings.Split(c.Long, "\n") {
		indented := strings.HasPrefix(line, "  ")
		switch {
		case indented && !code:
			if i > 0 {
				b.WriteString("\n")
			}
			code = true
		case !indented && code && line != "":
			b.WriteString("\n")
			code = false
		}
		if code {
			b.WriteString("    " + line + "\n")
			continue
		}
		b.WriteString(markdownEscaper.Replace(line) + "\n")
	}
	c.Long = strings.TrimSuffix(b.String(), "\n")
	c.Short = markdownEscaper.Replace(c.Short)
	// The synopsis: only the first word names the command.
	c.Use = strings.NewReplacer("<", `\<`, ">", `\>`).Replace(c.Use)
	for _, sub := range c.Commands() {
		markdownLong(sub)
	}
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "#", `\#`)
