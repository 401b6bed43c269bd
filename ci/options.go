// Package ci writes the CI configuration that evolves a library on many
// machines at once: a GitHub Actions workflow or a GitLab CI file with a
// job per worker (`git descent work`), an aggregator beside them (`git
// descent aggregate --watch`) and a last aggregation once they are done.
// The jobs push to the repository they run in, which carries everything
// between them: worker branches, queue and cache refs from the workers;
// dev, stable, the journal and the notes from the aggregators.
//
// What the library's agents need (API keys, CLI agents) is read from its
// configuration; secrets are written by name, never by value. Nothing here
// runs git.
package ci

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/git-descent/git-descent/library"
)

// Options shape a workflow.
type Options struct {
	Workers int           // worker jobs
	MaxTime time.Duration // how long each worker proposes, and the aggregator beside them decides
	Idle    time.Duration // the aggregator beside the workers stops after this long without a new proposal
	Version string        // git-descent's version to install: a release or "latest" (see InstallVersion)
}

// Defaults of Options.
const (
	DefaultWorkers = 8
	DefaultMaxTime = time.Hour
	DefaultIdle    = 20 * time.Minute
)

// Remote is the remote the jobs fetch from and push to: the repository
// they run in, as CI checks it out.
const Remote = "origin"

// checkOptions refuses options a CI system running at most maxWorkers
// jobs of a matrix cannot take, and a library that cannot be written into
// a workflow.
func checkOptions(lib *library.Library, o Options, maxWorkers int) error {
	switch {
	case !libraryName.MatchString(lib.Name) || lib.Name == "." || lib.Name == "..":
		return fmt.Errorf("library %q: only a name of letters, digits, '.', '_' and '-' can go into a workflow (rename its section in %s)", lib.Name, library.FileName)
	case lib.Path == "" || strings.ContainsFunc(lib.Path, unicode.IsControl):
		return fmt.Errorf("library %q: its path %q cannot go into a workflow", lib.Name, lib.Path)
	case o.Workers < 1 || o.Workers > maxWorkers:
		return &OptionError{fmt.Sprintf("--workers %d: must be from 1 to %d", o.Workers, maxWorkers)}
	case o.MaxTime < time.Minute:
		return &OptionError{fmt.Sprintf("--max-time %s: must be at least 1m", o.MaxTime)}
	case o.Idle < time.Minute:
		return &OptionError{fmt.Sprintf("--idle %s: must be at least 1m", o.Idle)}
	case o.Version != "latest" && InstallVersion(o.Version) != o.Version:
		return &OptionError{fmt.Sprintf("version %q: must be a release such as v1.2.3, or latest", o.Version)}
	}
	return nil
}

// OptionError is an Options value a CI system cannot take: a bad command
// line, when the options came from one.
type OptionError struct{ Message string }

func (e *OptionError) Error() string { return e.Message }

// libraryName is what git descent init accepts as a name.
var libraryName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// release matches a released module version; pseudo, the pseudo-version a
// build from a checkout gets (v0.0.0-20261201120000-abcdef123456).
var (
	release = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	pseudo  = regexp.MustCompile(`[0-9]{14}-[0-9a-f]{12}$`)
)

// InstallVersion is the version of git-descent a workflow installs, given
// the running binary's module version (debug.ReadBuildInfo's Main.Version):
// that version when it is a release, so CI runs what the user runs, else
// "latest" ("(devel)", a pseudo-version, a build with uncommitted changes).
func InstallVersion(v string) string {
	if release.MatchString(v) && !pseudo.MatchString(v) {
		return v
	}
	return "latest"
}

// FetchRefspecs are the refspecs that bring what the jobs push into a
// clone, to read: the worker, dev and stable branches as remote-tracking
// branches (which git's default refspec already does), and the decisions'
// notes, fast-forward only, so that notes written in the clone are never
// overwritten. The journal, queue and cache refs under refs/descent/ are
// left to git descent aggregate --remote, which moves them together with
// dev and stable.
func FetchRefspecs() []string {
	return []string{"+refs/heads/descent/*:refs/remotes/" + Remote + "/descent/*", "refs/notes/descent:refs/notes/descent"}
}

// Duration writes d the way --max-time takes it: "1h", "45m", "1h30m".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
