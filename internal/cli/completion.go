package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/library"
)

func newCompletionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script, for git descent and git-descent",
		Long: `completion prints a script that teaches your shell to complete git-descent's commands,
flags and library names. The bash and zsh scripts complete "git descent ..." too,
through git's own completion (which must be loaded, as it is wherever "git <TAB>" works).

bash, for the current shell and for every new one:
  source <(git descent completion bash)
  git descent completion bash > ~/.local/share/bash-completion/completions/git-descent
  (bash-completion loads that file when "git-descent" is completed; for "git descent"
  it must already be loaded, so add the source line to ~/.bashrc instead)

zsh (with compinit):
  git descent completion zsh > "${fpath[1]}/_git-descent"

fish (completes git-descent):
  git descent completion fish > ~/.config/fish/completions/git-descent.fish

PowerShell (completes git-descent):
  git descent completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      argsUsage(cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)),
		RunE: func(c *cobra.Command, args []string) error {
			return writeCompletion(e, c.Root(), args[0])
		},
	}
}

func writeCompletion(e *env, root *cobra.Command, shell string) error {
	var b bytes.Buffer
	switch shell {
	case "bash":
		if err := root.GenBashCompletionV2(&b, true); err != nil {
			return err
		}
		b.WriteString(bashGitWrapper)
	case "zsh":
		if err := root.GenZshCompletion(&b); err != nil {
			return err
		}
		// zsh's git completion calls _git-descent with words[1] = "descent";
		// cobra's function runs words[1] to ask for completions.
		const call = `requestComp="${words[1]} __complete ${words[2,-1]}"`
		s := b.String()
		if !strings.Contains(s, call) {
			return fmt.Errorf("the zsh completion cobra wrote no longer calls %s: adapt writeCompletion", call)
		}
		b.Reset()
		b.WriteString(strings.Replace(s, call, `requestComp="git-descent __complete ${words[2,-1]}"`, 1))
	case "fish":
		if err := root.GenFishCompletion(&b, true); err != nil {
			return err
		}
	case "powershell":
		if err := root.GenPowerShellCompletionWithDesc(&b); err != nil {
			return err
		}
	}
	_, err := e.stdout.Write(b.Bytes())
	return err
}

// bashGitWrapper is what git's bash completion calls for "git descent":
// _git_descent, with git's words (git [options] descent args...) and cword.
// It hands cobra's functions the words as if "git-descent args..." had
// been typed.
const bashGitWrapper = `
# "git descent <TAB>": git's completion calls _git_<command>.
_git_descent()
{
    local __gd_idx=${__git_cmd_idx:-1}
    local -a __gd_words=("git-descent" "${words[@]:__gd_idx+1:cword-__gd_idx}")
    local -a words=("${__gd_words[@]}")
    local cword=$((cword - __gd_idx))
    local out directive
    __git-descent_get_completion_results
    __git-descent_process_completion_results
}
`

// completeLibrary completes a command's one library argument with the
// names of the libraries configured in .descent.
func completeLibrary(e *env) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := c.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		repo, err := e.repo(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		libs, err := library.LoadAll(ctx, repo)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, l := range libs {
			names = append(names, cobra.CompletionWithDesc(l.Name, l.Path))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
