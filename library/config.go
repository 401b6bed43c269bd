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
// sorted by name, with provider settings from the user's git config
// (`descent.*`) and the [descent] section of .descent underneath.
func LoadAll(ctx context.Context, repo *git.Repo) ([]*Library, error) {
	return load(ctx, repo, File(repo))
}

// load reads every library configured in file, as LoadAll documents.
func load(ctx context.Context, repo *git.Repo, file git.ConfigFile) ([]*Library, error) {
	entries, err := repo.ConfigList(ctx, file, `^(library|descent)\.`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	user, err := repo.ConfigList(ctx, git.EffectiveConfig, `^descent\.`)
	if err != nil {
		return nil, fmt.Errorf("read git config: %w", err)
	}
	shared := map[string][]git.ConfigEntry{"git config": nil, FileName: nil}
	byName := map[string][]git.ConfigEntry{}
	for _, e := range user {
		shared["git config"] = append(shared["git config"], git.ConfigEntry{Key: strings.TrimPrefix(e.Key, "descent."), Value: e.Value})
	}
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Key, "descent."); ok {
			shared[FileName] = append(shared[FileName], git.ConfigEntry{Key: rest, Value: e.Value})
			continue
		}
		name, key, ok := splitKey(e.Key)
		if !ok {
			continue
		}
		byName[name] = append(byName[name], git.ConfigEntry{Key: key, Value: e.Value})
	}
	var libs []*Library
	for name, es := range byName {
		l, err := parse(name, es, shared)
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
	for _, l := range libs {
		if near(arg, l.Name) || near(clean, l.Path) {
			return nil, fmt.Errorf("library %q: %w in %s; did you mean %q (%s)?", arg, ErrNotConfigured, FileName, l.Name, l.Path)
		}
	}
	return nil, fmt.Errorf("library %q: %w in %s (run `git descent init %s` first)", arg, ErrNotConfigured, FileName, arg)
}

// near reports whether a is within two edits (insertions, deletions,
// substitutions) of b: a mistyped name.
func near(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if d := len(x) - len(y); d > 2 || d < -2 {
		return false
	}
	prev := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur := make([]int, len(y)+1)
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(y)] <= 2
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

// parse builds a library from its section's entries, defaults first, then
// the shared provider settings (user git config, then .descent's [descent]).
func parse(name string, es []git.ConfigEntry, shared map[string][]git.ConfigEntry) (*Library, error) {
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
	if l.Path == "" || l.Path == ".." || strings.HasPrefix(l.Path, "../") {
		return nil, fmt.Errorf("%s: library.%s.path = %q: must name a directory inside the repository, below its top", FileName, name, p)
	}
	l.Name = name
	for _, where := range []string{"git config", FileName} {
		for _, e := range shared[where] {
			ok, err := l.Provider.set(e.Key, e.Value)
			if !ok {
				ok, err = l.Provider.setPrice(e.Key, e.Value)
			}
			if !ok {
				continue // descent.* keys of other features
			}
			if err != nil {
				return nil, fmt.Errorf("%s: descent.%s = %q: %w", where, e.Key, e.Value, err)
			}
		}
	}
	multi := map[string]bool{}
	for _, e := range es {
		if err := l.set(e.Key, e.Value, multi); err != nil {
			return nil, fmt.Errorf("%s: library.%s.%s = %q: %w", FileName, name, e.Key, e.Value, err)
		}
	}
	l.defaultRoles()
	return l, nil
}

// defaultRoles makes a configured model enough to evolve: without a run or
// proposer setting, the model runs and proposes.
func (l *Library) defaultRoles() {
	if l.Provider.Model == "" {
		return
	}
	if l.Run == "" {
		l.Run = RunnerOpenAI
	}
	if l.Proposer == "" {
		l.Proposer = RunnerOpenAI
	}
}

// Override applies provider settings given on the command line (key →
// value, keys from ProviderKeys) over the configuration.
func (l *Library) Override(settings map[string]string) error {
	for _, k := range ProviderKeys {
		v, ok := settings[k]
		if !ok {
			continue
		}
		if _, err := l.Provider.set(k, v); err != nil {
			return fmt.Errorf("--%s %q: %w", k, v, err)
		}
	}
	l.defaultRoles()
	return nil
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
		l.ProposeTimeout, err = time.ParseDuration(v)
	case "env":
		appendTo(&l.Env)
	case "offline-timeout":
		l.OfflineTimeout, err = time.ParseDuration(v)
	case "login":
		if v != LoginNone && v != LoginUser {
			return fmt.Errorf("must be %s (credentials from the environment only) or %s (also a copy of your stored Claude Code or Codex login)", LoginNone, LoginUser)
		}
		l.Login = v
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
	case "repeats":
		l.Repeats, err = strconv.Atoi(v)
		if err == nil && l.Repeats < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case "max-repeats":
		l.MaxRepeats, err = strconv.Atoi(v)
		if err == nil && l.MaxRepeats < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case "gate":
		if v != GateCalibrated && v != GateMean {
			return fmt.Errorf("must be %s (the noise-aware gate) or %s (the strict mean-difference baseline)", GateCalibrated, GateMean)
		}
		l.Gate = v
	case "promising-rounds":
		l.PromisingRounds, err = strconv.Atoi(v)
		if err == nil && l.PromisingRounds < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case "validation":
		if v != ValidationAuto && v != ValidationSplit && v != ValidationCross {
			return fmt.Errorf("must be %s, %s or %s", ValidationAuto, ValidationSplit, ValidationCross)
		}
		l.Validation = v
	case "fingerprint":
		appendTo(&l.Fingerprint)
	case "max-regressions":
		l.MaxRegressions, err = strconv.Atoi(v)
	case "max-changed-lines":
		l.MaxLines, err = strconv.Atoi(v)
	case "max-changed-files":
		l.MaxFiles, err = strconv.Atoi(v)
	case "max-file-size":
		l.MaxFileSize, err = parseSize(v)
	case "binary":
		l.Binary, err = strconv.ParseBool(v)
	case "staleness":
		if v != StalenessFull && v != StalenessGuarded && v != StalenessReflective {
			return fmt.Errorf("must be %s, %s or %s", StalenessFull, StalenessGuarded, StalenessReflective)
		}
		l.Staleness = v
	case "alpha":
		l.Alpha, err = strconv.Atoi(v)
	case "alpha-l1":
		l.AlphaL1, err = strconv.Atoi(v)
	case "hot-changes":
		l.HotChanges, err = strconv.Atoi(v)
	case "refile-limit":
		l.RefileLimit, err = strconv.Atoi(v)
	case "isolation":
		if v != "auto" && v != "bwrap" && v != "none" {
			return fmt.Errorf("must be auto (bwrap where bubblewrap works, else none), bwrap or none")
		}
		l.Isolation = v
	case "network":
		var on bool
		if on, err = strconv.ParseBool(v); err == nil {
			l.Network = strconv.FormatBool(on)
		}
	case "sandbox-read":
		appendTo(&l.SandboxRead)
	case "memory-limit":
		l.MemoryLimit = 0
		if v != "none" {
			l.MemoryLimit, err = parseSize(v)
		}
	case "cpu-limit":
		l.CPULimit = 0
		if v != "none" {
			l.CPULimit, err = time.ParseDuration(v)
			if err == nil && l.CPULimit < time.Second {
				err = fmt.Errorf("must be at least 1s, or none")
			}
		}
	case "oracle":
		l.Oracle = v
	case "oracle-timeout":
		l.OracleTimeout, err = time.ParseDuration(v)
	case "oracle-report":
		if v != OracleReportAuto && v != OracleReportExit {
			return fmt.Errorf("must be %s (the verdict is read from the report the oracle writes to $DESCENT_ORACLE_REPORT) or %s (its exit status alone: a candidate that makes it exit 0 early passes)", OracleReportAuto, OracleReportExit)
		}
		l.OracleReport = v
	case "oracle-files":
		appendTo(&l.OracleFiles)
	case "fusion-tournament":
		l.Tournament, err = strconv.ParseBool(v)
	case "on-commit":
		l.OnCommit = v
	case "on-promote":
		l.OnPromote = v
	default:
		ok, perr := l.Provider.set(key, v)
		if !ok {
			return fmt.Errorf("unknown key (valid: %s)", strings.Join(Keys, ", "))
		}
		err = perr
	}
	return err
}

// Keys are the keys a library section may set.
var Keys = append([]string{"path", "evals", "split", "seed", "layout", "run", "timeout", "scorer", "tolerance",
	"score-command", "proposer", "propose-timeout", "env", "offline-timeout", "login", "frozen", "guarded", "hide",
	"minibatch", "delta", "delta-floor", "anneal", "promote-after",
	"repeats", "max-repeats", "gate", "promising-rounds", "validation", "fingerprint",
	"max-regressions", "max-changed-lines", "max-changed-files", "max-file-size", "binary",
	"staleness", "alpha", "alpha-l1", "hot-changes", "refile-limit",
	"isolation", "network", "sandbox-read", "memory-limit", "cpu-limit",
	"oracle", "oracle-timeout", "oracle-report", "oracle-files", "fusion-tournament",
	"on-commit", "on-promote"}, ProviderKeys...)

// Built-in runners and proposers: the value of `run` or `proposer` that
// selects one instead of a command.
const (
	RunnerOpenAI = "openai" // an OpenAI-compatible model
	RunnerClaude = "claude" // Claude Code (`claude -p`)
	RunnerCodex  = "codex"  // Codex (`codex exec`)
)

// parseSize reads a number of bytes, with an optional k, m or g (KiB, MiB,
// GiB): "65536", "512k", "1m".
func parseSize(v string) (int64, error) {
	mult := int64(1)
	switch strings.ToLower(v[len(v)-min(len(v), 1):]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("must be a positive number of bytes, optionally with k, m or g (e.g. 1m)")
	}
	return n * mult, nil
}
