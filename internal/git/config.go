package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ConfigEntry is one key and value of a git config file.
type ConfigEntry struct {
	Key   string // lower-cased section and name; the subsection keeps its case
	Value string
}

// ConfigFile names a config file: a path (e.g. the repository's .descent),
// "" for the repository's own config (.git/config), or EffectiveConfig.
type ConfigFile string

// EffectiveConfig reads the configuration git itself would use here:
// system, global, repository and worktree files together.
const EffectiveConfig ConfigFile = "\x00effective"

func (f ConfigFile) args() []string {
	switch f {
	case "":
		return []string{"--local"}
	case EffectiveConfig:
		return nil
	}
	return []string{"--file", string(f)}
}

// ConfigList returns every entry of a config file whose key matches the
// regular expression (all entries when pattern is "."). A missing file has
// no entries.
func (r *Repo) ConfigList(ctx context.Context, file ConfigFile, pattern string) ([]ConfigEntry, error) {
	args := append([]string{"config"}, file.args()...)
	args = append(args, "--null", "--get-regexp", pattern)
	out, code, err := r.runCode(ctx, cmd{okCodes: []int{1}}, args...)
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "No such file") {
			return nil, nil
		}
		return nil, err
	}
	if code == 1 {
		return nil, nil
	}
	var es []ConfigEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n")
		es = append(es, ConfigEntry{Key: k, Value: v})
	}
	return es, nil
}

// ConfigGet returns the value of key in the user's effective git config
// (system, global and repository), and whether it is set.
func (r *Repo) ConfigGet(ctx context.Context, key string) (string, bool, error) {
	out, code, err := r.runCode(ctx, cmd{okCodes: []int{1}}, "config", "--get", key)
	if err != nil || code == 1 {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\n"), true, nil
}

// ConfigSet sets key to value in file, replacing a single existing value.
func (r *Repo) ConfigSet(ctx context.Context, file ConfigFile, key, value string) error {
	args := append([]string{"config"}, file.args()...)
	_, err := r.run(ctx, cmd{}, append(args, key, value)...)
	return err
}

// ConfigReplaceAll sets key to exactly values in file (a multi-valued key).
func (r *Repo) ConfigReplaceAll(ctx context.Context, file ConfigFile, key string, values []string) error {
	args := append([]string{"config"}, file.args()...)
	if _, _, err := r.runCode(ctx, cmd{okCodes: []int{5}}, append(args, "--unset-all", key)...); err != nil {
		return err
	}
	for _, v := range values {
		if _, err := r.run(ctx, cmd{}, append(args, "--add", key, v)...); err != nil {
			return err
		}
	}
	return nil
}

// CheckAttr returns the value of attribute attr for path as git sees it
// (from .gitattributes, .git/info/attributes and core.attributesFile):
// "unspecified", "set", "unset", or the value.
func (r *Repo) CheckAttr(ctx context.Context, attr, path string) (string, error) {
	return r.checkAttr(ctx, cmd{}, attr, path)
}

// checkAttr runs `git check-attr` for one attribute and path as c says
// (its directory and environment decide which attributes files git reads).
func (r *Repo) checkAttr(ctx context.Context, c cmd, attr, path string) (string, error) {
	out, err := r.run(ctx, c, "check-attr", "-z", attr, "--", path)
	if err != nil {
		return "", err
	}
	f := strings.Split(string(out), "\x00")
	if len(f) < 3 {
		return "", fmt.Errorf("git check-attr: unexpected output %q", out)
	}
	return f[2], nil
}

// Pager returns the pager git would use for its own output, as git var
// GIT_PAGER reports it: GIT_PAGER, core.pager, PAGER, or git's default.
// "cat" means none.
func (r *Repo) Pager(ctx context.Context) (string, error) {
	var c cmd
	if p, ok := os.LookupEnv("PAGER"); ok {
		c.env = []string{"PAGER=" + p} // git's environment does not keep it
	}
	out, err := r.run(ctx, c, "var", "GIT_PAGER")
	return strings.TrimSpace(string(out)), err
}
