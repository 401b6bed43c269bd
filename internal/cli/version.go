package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print git-descent's version, the commit it was built from, and the Go that built it",
		Long: `version prints the module version git-descent was built as (a tag when installed
with go install ...@v1.2.3, "(devel)" for a build from a checkout), the commit it was
built from and whether that checkout had uncommitted changes, when the build recorded
them (go build and go install do; go run does not), and the Go toolchain.
git descent --version prints the same line.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(e.stdout, versionLine())
			return nil
		},
	}
}

// versionLine is what version and --version print, for example
// "git-descent v0.4.0 (commit 3f338e8c1a2b, 2026-12-01T10:00:00Z, modified) go1.26.8 linux/amd64".
func versionLine() string {
	version, detail := "(unknown)", []string(nil)
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			detail = append(detail, "commit "+rev[:min(12, len(rev))])
		}
		if t := settings["vcs.time"]; t != "" {
			detail = append(detail, t)
		}
		if settings["vcs.modified"] == "true" {
			detail = append(detail, "modified")
		}
	}
	line := "git-descent " + version
	if len(detail) == 0 {
		detail = []string{"commit unknown: built without VCS stamping"}
	}
	line += " (" + strings.Join(detail, ", ") + ")"
	return line + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
