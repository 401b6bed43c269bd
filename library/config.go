package library

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
)

// ErrNotConfigured means .descent has no library at the given path or name.
var ErrNotConfigured = errors.New("not configured")

// File returns the .descent path of a repository.
func File(repo *git.Repo) git.ConfigFile {
	return git.ConfigFile(filepath.Join(repo.Top(), FileName))
}

// LoadAll reads every library configured in the repository's .descent,
// sorted by name.
func LoadAll(ctx context.Context, repo *git.Repo) ([]*Library, error) {
	entries, err := repo.ConfigList(ctx, File(repo), `^library\.`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	byName := map[string][]git.ConfigEntry{}
	for _, e := range entries {
		name, key, ok := splitKey(e.Key)
		if !ok {
			continue
		}
		byName[name] = append(byName[name], git.ConfigEntry{Key: key, Value: e.Value})
	}
	var libs []*Library
	for name, es := range byName {
		l, err := parse(name, es)
		if err != nil {
			return nil, err
		}
		libs = append(libs, l)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	return libs, nil
}

// Find returns the library named by arg: its name or its path (as given on
// the command line, relative to the repository root). With arg "" and
// exactly one library configured, that one.
func Find(ctx context.Context, repo *git.Repo, arg string) (*Library, error) {
	libs, err := LoadAll(ctx, repo)
	if err != nil {
		return nil, err
	}
	if arg == "" {
		switch len(libs) {
		case 1:
			return libs[0], nil
		case 0:
			return nil, fmt.Errorf("no library in %s: %w (run `git descent init <path>` first)", FileName, ErrNotConfigured)
		}
		var names []string
		for _, l := range libs {
			names = append(names, l.Name)
		}
		return nil, fmt.Errorf("%d libraries configured (%s): name one", len(libs), strings.Join(names, ", "))
	}
	clean := CleanPath(arg)
	for _, l := range libs {
		if l.Name == arg || l.Path == clean {
			return l, nil
		}
	}
	return nil, fmt.Errorf("library %q: %w in %s (run `git descent init %s` first)", arg, ErrNotConfigured, FileName, arg)
}

// splitKey splits "library.<name>.<key>"; the name may contain dots.
func splitKey(k string) (name, key string, ok bool) {
	rest, ok := strings.CutPrefix(k, "library.")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// parse builds a library from its section's entries, defaults first.
func parse(name string, es []git.ConfigEntry) (*Library, error) {
	var p string
	for _, e := range es {
		if e.Key == "path" {
			p = e.Value
		}
	}
	if p == "" {
		return nil, fmt.Errorf("%s: library %q has no path (set library.%s.path)", FileName, name, name)
	}
	l := New(p)
	l.Name = name
	multi := map[string]bool{}
	for _, e := range es {
		if err := l.set(e.Key, e.Value, multi); err != nil {
			return nil, fmt.Errorf("%s: library.%s.%s = %q: %w", FileName, name, e.Key, e.Value, err)
		}
	}
	return l, nil
}

// set applies one key. The first value of a multi-valued key replaces the
// default list; later ones append.
func (l *Library) set(key, v string, multi map[string]bool) error {
	appendTo := func(dst *[]string) {
		if !multi[key] {
			*dst = nil
			multi[key] = true
		}
		if v != "" {
			*dst = append(*dst, v)
		}
	}
	var err error
	switch key {
	case "path":
		if err = checkRel(v); err == nil {
			l.Path = CleanPath(v)
		}
	case "evals":
		if err = checkRel(v); err == nil {
			l.Evals = CleanPath(v)
		}
	case "split":
		l.Split = v
	case "seed":
		l.Seed = v
	case "layout":
		if err = checkRel(v); err == nil {
			l.Layout = v
		}
	case "run":
		l.Run = v
	case "timeout":
		l.Timeout, err = time.ParseDuration(v)
	case "scorer":
		l.Scorer = v
	case "tolerance":
		l.Tolerance, err = strconv.ParseFloat(v, 64)
	case "score-command":
		l.ScoreCommand = v
	case "proposer":
		l.Proposer = v
	case "propose-timeout":
		l.ProposeTimout, err = time.ParseDuration(v)
	case "env":
		appendTo(&l.Env)
	case "frozen":
		appendTo(&l.Frozen)
	case "guarded":
		appendTo(&l.Guarded)
	case "hide":
		appendTo(&l.Hide)
	case "minibatch":
		l.Minibatch, err = strconv.Atoi(v)
	case "delta":
		l.Delta, err = strconv.ParseFloat(v, 64)
	case "delta-floor":
		l.DeltaFloor, err = strconv.ParseFloat(v, 64)
	case "anneal":
		l.HalfLife, err = strconv.ParseFloat(v, 64)
	case "promote-after":
		l.PromoteAfter, err = strconv.Atoi(v)
	default:
		return fmt.Errorf("unknown key (valid: %s)", strings.Join(Keys, ", "))
	}
	return err
}

// Keys are the keys a library section may set.
var Keys = []string{"path", "evals", "split", "seed", "layout", "run", "timeout", "scorer", "tolerance",
	"score-command", "proposer", "propose-timeout", "env", "frozen", "guarded", "hide",
	"minibatch", "delta", "delta-floor", "anneal", "promote-after"}
