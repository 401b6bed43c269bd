// Package hooks installs git-descent into a user's git: the merge driver's
// config and the attributes that route a library's files through it. It never
// overwrites what it did not write: a foreign value is reported with the
// fix, and replaced only when forced.
package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// DriverName is the merge driver's name in config and attributes.
const DriverName = "descent"

// DriverCommand is how git runs the driver; git substitutes the %-fields.
const DriverCommand = "git-descent merge-driver %O %A %B %L %P"

// driverLabel is merge.descent.name.
const driverLabel = "git-descent: three-way merge that keeps both sides of same-place insertions"

// ConflictError is an existing setting git-descent did not write.
type ConflictError struct {
	Where string // the config key or attributes file
	Found string
	Want  string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s is already set to %q (git-descent wants %q); re-run with --force to replace it", e.Where, e.Found, e.Want)
}

// Change describes one setting an install wrote.
type Change struct {
	Where string
	Value string
}

// InstallMergeDriver registers the merge driver in the repository's config
// and routes the files under libPath through it in .git/info/attributes. It
// is idempotent. An existing driver command or attribute line that
// git-descent did not write is a *ConflictError unless force is set.
func InstallMergeDriver(ctx context.Context, repo *git.Repo, libPath string, force bool) ([]Change, error) {
	local, err := repo.ConfigList(ctx, "", `^merge\.descent\.`)
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, kv := range [][2]string{{"merge.descent.driver", DriverCommand}, {"merge.descent.name", driverLabel}} {
		key, want := kv[0], kv[1]
		var found string
		ok := false
		for _, e := range local {
			if e.Key == key {
				found, ok = e.Value, true
			}
		}
		if ok && found == want {
			continue
		}
		if ok && !force && !ours(key, found) {
			return nil, &ConflictError{Where: key, Found: found, Want: want}
		}
		if err := repo.ConfigSet(ctx, "", key, want); err != nil {
			return nil, err
		}
		changes = append(changes, Change{Where: key, Value: want})
	}
	c, err := addAttribute(repo, libPath, force)
	if err != nil {
		return nil, err
	}
	if c != nil {
		changes = append(changes, *c)
	}
	return changes, nil
}

// ours recognises values written by this or an older git-descent.
func ours(key, v string) bool {
	if key == "merge.descent.name" {
		return strings.HasPrefix(v, "git-descent")
	}
	f := strings.Fields(v)
	return len(f) >= 2 && (f[0] == "git-descent" && f[1] == "merge-driver" || len(f) >= 3 && f[0] == "git" && f[1] == "descent" && f[2] == "merge-driver")
}

// AttributesFile is the repository-private attributes file git-descent
// writes (never the tracked .gitattributes).
func AttributesFile(repo *git.Repo) string {
	return filepath.Join(repo.GitDir(), "info", "attributes")
}

// attrPattern is the attributes pattern covering a library.
func attrPattern(libPath string) string { return "/" + strings.Trim(libPath, "/") + "/**" }

func addAttribute(repo *git.Repo, libPath string, force bool) (*Change, error) {
	file := AttributesFile(repo)
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read %q: %w", file, err)
	}
	pattern, want := attrPattern(libPath), "merge="+DriverName
	line := pattern + " " + want
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != pattern {
			continue
		}
		for _, attr := range f[1:] {
			if attr == want {
				return nil, nil
			}
			if strings.HasPrefix(attr, "merge=") || attr == "-merge" || attr == "merge" || attr == "!merge" {
				if !force {
					return nil, &ConflictError{Where: file + ": " + pattern, Found: attr, Want: want}
				}
				lines[i] = line
				return &Change{Where: file, Value: line}, writeAtomic(file, lines)
			}
		}
	}
	lines = append(lines, line)
	return &Change{Where: file, Value: line}, writeAtomic(file, lines)
}

func writeAtomic(file string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".descent-tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %q: %w", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write %q: %w", file, err)
	}
	return nil
}
