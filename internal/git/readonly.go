package git

import (
	"slices"
	"strings"
)

// readOnlySubcommands are the git subcommands that change nothing a lock
// protects: no ref, index, config file or working tree. runGit runs them
// with GIT_OPTIONAL_LOCKS=0, so a read never takes a lock a concurrent git
// (the user's, or another git-descent) could trip over. Subcommands not
// listed, and those whose flags decide (readOnly), take locks as usual.
var readOnlySubcommands = map[string]bool{
	"cat-file":     true,
	"check-attr":   true,
	"check-ignore": true,
	"diff":         true,
	"diff-tree":    true,
	"for-each-ref": true,
	"log":          true,
	"ls-tree":      true,
	"merge-base":   true,
	"rev-list":     true,
	"rev-parse":    true,
	"show":         true,
	"version":      true,
	// status refreshes the index as a side effect when it can take
	// index.lock; GIT_OPTIONAL_LOCKS=0 is what stops that write.
	"status": true,
	// merge-tree --write-tree writes blobs and trees, but objects are
	// content-addressed and written without a lock, and it touches no ref,
	// index or working tree: it has no lock to take, and the merge drivers
	// it runs (git-descent's own) inherit the setting.
	"merge-tree": true,
}

// readOnly reports whether git args (global options such as "-c k=v" first)
// is a read, per readOnlySubcommands. For the subcommands whose flags
// decide, it looks at the flags.
func readOnly(args []string) bool {
	sub, rest := subcommand(args)
	switch sub {
	case "config":
		// A read names its action as a flag (or, since git 2.46, as the
		// "get"/"list" subcommand). A value that happens to spell such a
		// flag only drops optional locks, which a config write does not take.
		return slices.ContainsFunc(rest, func(a string) bool {
			return strings.HasPrefix(a, "--get") || a == "--list" || a == "-l"
		}) || len(rest) > 0 && (rest[0] == "get" || rest[0] == "list")
	case "hash-object":
		// -w writes the object; without it hash-object only computes a name.
		return !slices.Contains(rest, "-w")
	case "worktree":
		return len(rest) > 0 && rest[0] == "list"
	}
	return readOnlySubcommands[sub]
}

// subcommand splits git args into the subcommand and its arguments,
// skipping the global options before it.
func subcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++ // the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}
