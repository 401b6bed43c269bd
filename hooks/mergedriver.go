package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
// is idempotent, and all or nothing: an existing driver command or
// attribute that git-descent did not write is a *ConflictError (unless
// force is set) and then nothing is written.
func InstallMergeDriver(ctx context.Context, repo *git.Repo, libPath string, force bool) ([]Change, error) {
	plan, err := PlanMergeDriver(ctx, repo, libPath, force)
	if err != nil {
		return nil, err
	}
	return plan.Apply(ctx)
}

// DriverPlan is what InstallMergeDriver would write, checked for conflicts
// but not yet written.
type DriverPlan struct {
	repo     *git.Repo
	config   []Change // keys and values for .git/config
	attrFile string
	attrs    []string // the new attributes file, nil when unchanged
	attrLine string
}

// PlanMergeDriver checks what installing the merge driver for libPath would
// change, returning a *ConflictError for a foreign value unless force is
// set. Nothing is written until Apply.
func PlanMergeDriver(ctx context.Context, repo *git.Repo, libPath string, force bool) (*DriverPlan, error) {
	local, err := repo.ConfigList(ctx, "", `^merge\.descent\.`)
	if err != nil {
		return nil, err
	}
	plan := &DriverPlan{repo: repo, attrFile: AttributesFile(repo)}
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
		plan.config = append(plan.config, Change{Where: key, Value: want})
	}
	if plan.attrs, plan.attrLine, err = planAttribute(plan.attrFile, libPath, force); err != nil {
		return nil, err
	}
	return plan, nil
}

// Apply writes the plan and returns what it changed.
func (p *DriverPlan) Apply(ctx context.Context) ([]Change, error) {
	var changes []Change
	for _, c := range p.config {
		if err := p.repo.ConfigSet(ctx, "", c.Where, c.Value); err != nil {
			return changes, err
		}
		changes = append(changes, c)
	}
	if p.attrs != nil {
		if err := writeAtomic(p.attrFile, p.attrs); err != nil {
			return changes, err
		}
		changes = append(changes, Change{Where: p.attrFile, Value: p.attrLine})
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

// attrPattern is the attributes pattern covering a library, C-quoted (as
// gitattributes allows) when the path holds whitespace, quotes or
// backslashes.
func attrPattern(libPath string) string {
	p := "/" + strings.Trim(libPath, "/") + "/**"
	if strings.ContainsAny(p, " \t\"\\") {
		return strconv.Quote(p)
	}
	return p
}

// planAttribute returns the attributes file's new lines with libPath routed
// to the driver (nil when it already is) and the line written.
func planAttribute(file, libPath string, force bool) ([]string, string, error) {
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return nil, "", fmt.Errorf("read %q: %w", file, err)
	}
	pattern, want := attrPattern(libPath), "merge="+DriverName
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	for i, l := range lines {
		pat, attrs := splitAttrLine(l)
		if pat != pattern {
			continue
		}
		for j, attr := range attrs {
			if attr == want {
				return nil, "", nil
			}
			if strings.HasPrefix(attr, "merge=") || attr == "-merge" || attr == "merge" || attr == "!merge" {
				if !force {
					return nil, "", &ConflictError{Where: file + ": " + pattern, Found: attr, Want: want}
				}
				// Replace only the merge attribute: the line's others
				// (e.g. git-lfs's filter=lfs) are not ours to drop.
				attrs[j] = want
				lines[i] = strings.Join(append([]string{pat}, attrs...), " ")
				return lines, lines[i], nil
			}
		}
	}
	line := pattern + " " + want
	return append(lines, line), line, nil
}

// splitAttrLine splits an attributes line into its pattern, as written
// (quoted or not), and its attributes.
func splitAttrLine(line string) (pattern string, attrs []string) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "\"") {
		if q, err := strconv.QuotedPrefix(line); err == nil {
			return q, strings.Fields(line[len(q):])
		}
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	return f[0], f[1:]
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

// ErrDriverMissing means the repository does not route a library through
// the descent merge driver (a fresh clone, say).
var ErrDriverMissing = errors.New("the descent merge driver is not registered")

// CheckMergeDriver verifies that git would merge the files under libPath
// with a merge.descent driver. Without it, merges of proposals would fall
// back to git's own merge and lose the fusion rules.
func CheckMergeDriver(ctx context.Context, repo *git.Repo, libPath string) error {
	attr, err := repo.CheckAttr(ctx, "merge", strings.Trim(libPath, "/")+"/SKILL.md")
	if err != nil {
		return err
	}
	_, ok, err := repo.ConfigGet(ctx, "merge."+DriverName+".driver")
	if err != nil {
		return err
	}
	switch {
	case attr != DriverName:
		return fmt.Errorf("%w for %s (merge attribute is %q): run `git descent init %s` in this repository", ErrDriverMissing, libPath, attr, libPath)
	case !ok:
		return fmt.Errorf("%w (merge.descent.driver is not set): run `git descent init %s` in this repository", ErrDriverMissing, libPath)
	}
	return nil
}
