// Package library reads and writes the configuration of evolvable
// libraries: the `.descent` file at the repository root, in git-config
// syntax, with one `[library "<name>"]` section each.
//
//	[library "pdf-audit"]
//		path = skills/pdf-audit
//		evals = evals/evals.json
//		run = my-agent --prompt {{prompt}}
//		scorer = contains
//		proposer = my-proposer {{failures_file}}
//		layout = repo
//		frozen = evals/**
//		guarded = scripts/**
//		on-promote = {{repo}}/tools/open-pr.sh
//
// on-commit and on-promote are lifecycle hooks: commands run with the
// decision as JSON on stdin when dev takes a commit and when stable is
// promoted (for example to open a pull request from stable).
//
// The file lives outside every library, so a proposal can never edit it.
package library

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
)

// FileName is the configuration file at the repository root.
const FileName = ".descent"

// Library is one evolvable directory and how to evolve it. Paths inside it
// (Evals, globs) are relative to the library root and slash-separated.
type Library struct {
	Name string // the section name; by default the base name of Path
	Path string // repository-relative directory, slash-separated, no trailing slash

	Evals  string // the eval file, relative to the library root
	Split  string // train/validation/test fractions, e.g. "50/30/20"
	Seed   string // seed of the split hash
	Layout string // where rollouts see the library: repo, claude, codex, root, or a relative path; "" follows the runner

	Run            string        // rollout command template
	Timeout        time.Duration // per rollout
	Scorer         string        // exact, contains, regex, numeric, command
	Tolerance      float64       // numeric scorer tolerance
	ScoreCommand   string        // command scorer
	Proposer       string        // proposer command template
	ProposeTimeout time.Duration // per proposer run
	Env            []string      // environment variable names passed to commands ("NAME" or "PREFIX_*")
	OfflineTimeout time.Duration // how long a CLI agent may wait for the network before it is stopped
	Login          string        // LoginNone or LoginUser: whether CLI agents get the user's stored login

	Frozen  []string // L0 globs: never edited by a proposal
	Guarded []string // L1 globs: stricter gate
	Hide    []string // globs not materialized in rollout workspaces (eval answers)

	Provider Provider // OpenAI-compatible endpoint and models, for the openai runner, proposer and judge

	Minibatch    int     // train tasks per worker per round
	Delta        float64 // gate risk δ: accept when P(candidate better) > 1-δ
	DeltaFloor   float64 // δ never anneals below this
	HalfLife     float64 // dev commits for δ to halve; 0 disables annealing
	PromoteAfter int     // clean rounds before stable may catch up with dev

	Repeats         int    // rollouts of each (version, validation task) the gate starts with
	MaxRepeats      int    // the most the gate re-rolls a task whose outcome is uncertain
	Gate            string // calibrated (the noise-aware gate) or mean (the strict mean-difference baseline)
	PromisingRounds int    // rounds a promising proposal waits to be pooled before it expires
	// Validation is how candidates are judged: split (on the validation
	// split), cross (cross-fitted: on every train or validation task none
	// of its proposers saw), or auto (cross when the validation split has
	// fewer than CrossFitBelow tasks).
	Validation     string
	Fingerprint    []string // globs of repository files whose content is part of the rollout cache key
	MaxRegressions int      // tasks dev always passes that a candidate may fail
	MaxLines       int      // trust region: changed lines per proposal (0: no limit)
	MaxFiles       int      // trust region: changed files per proposal (0: no limit)
	MaxFileSize    int64    // bytes a file a proposal writes may hold
	Binary         bool     // a proposal may write binary files (a NUL in its first 8000 bytes)

	Staleness   string // full, guarded or reflective
	Alpha       int    // staleness tolerated for L2 files (guarded)
	AlphaL1     int    // staleness tolerated for L1 files
	HotChanges  int    // a file changed in this many of dev's last 10 commits is hot: its α halves
	RefileLimit int    // rounds a set-aside or outvoted proposal is re-filed before it expires

	// Isolation is how agents, proposers and the oracle are kept from the
	// machine: auto (bwrap where bubblewrap works, else none), bwrap or
	// none (see sandbox.Jail).
	Isolation   string
	Network     string        // under bwrap: "true", "false", or "" (on for the claude and codex agents, which need their API; off for commands)
	SandboxRead []string      // under bwrap: paths visible read-only besides the system (absolute, or relative to the repository)
	MemoryLimit int64         // bytes of data each agent, proposer or oracle process may hold; 0: no limit
	CPULimit    time.Duration // CPU time each such process may use; 0: as long as its timeout

	Oracle        string        // command that must pass for a change to L1 files
	OracleTimeout time.Duration // per oracle run
	// OracleReport is how the oracle's verdict is read: auto (from the
	// report it must write to $DESCENT_ORACLE_REPORT, JUnit XML or JSON,
	// with at least as many tests as dev's) or exit (its exit status alone).
	OracleReport string
	// OracleFiles are globs of files a test runner loads by name
	// (conftest.py, package.json, ...): with an oracle set they are frozen
	// (L0) too, so a candidate can neither shadow the runner nor change
	// how it sets up.
	OracleFiles []string
	Tournament  bool // score fusions against their single members

	// OnCommit and OnPromote are the library's lifecycle hooks: commands
	// (run by /bin/sh at the repository's root, {{repo}} expanded) that
	// get the decision as JSON on stdin when dev takes a commit and when
	// stable is promoted (see hooks.RunLifecycle). "" runs nothing.
	OnCommit  string
	OnPromote string
}

// Gates.
const (
	GateCalibrated = "calibrated"
	GateMean       = "mean"
)

// Validation modes.
const (
	ValidationAuto  = "auto"
	ValidationSplit = "split"
	ValidationCross = "cross"
)

// CrossFitBelow is the validation split size under which auto cross-fits:
// below it a fixed split wastes evals and leaves what only validation
// covers unlearnable (DESIGN.md, decision 35).
const CrossFitBelow = 30

// CrossFits reports whether candidates are judged cross-fitted when the
// validation split holds n tasks: asked for, or automatic below
// CrossFitBelow.
func (l *Library) CrossFits(n int) bool {
	switch l.Validation {
	case ValidationCross:
		return true
	case ValidationSplit:
		return false
	}
	return n < CrossFitBelow
}

// Staleness policies.
const (
	StalenessFull       = "full"
	StalenessGuarded    = "guarded"
	StalenessReflective = "reflective"
)

// Defaults for keys a .descent file leaves out.
const (
	DefaultLayout       = "" // the runner's: .claude/skills/<name> for claude, .agents/skills/<name> for codex, else the repository path
	DefaultScorer       = "exact"
	DefaultSplit        = "50/30/20"
	DefaultTimeout      = 10 * time.Minute
	DefaultMinibatch    = 4
	DefaultDelta        = 0.2
	DefaultDeltaFloor   = 0.05
	DefaultHalfLife     = 20
	DefaultPromoteAfter = 3
	DefaultMaxLines     = 400
	DefaultMaxFiles     = 8
	DefaultMaxFileSize  = 1 << 20
	DefaultAlpha        = 3
	DefaultAlphaL1      = 1
	DefaultHotChanges   = 4
	DefaultRefileLimit  = 3
	DefaultMaxRepeats   = 4
	DefaultPromising    = 5
	DefaultOffline      = time.Minute
	DefaultIsolation    = "auto"
	OracleReportAuto    = "auto"
	OracleReportExit    = "exit"
	DefaultMemoryLimit  = 4 << 30
)

// DefaultOracleFiles are the files test runners load by name, anywhere in
// the library: Python's (pytest, its plugins and settings, the interpreter's
// startup hooks), Node's, make's and Go's.
var DefaultOracleFiles = []string{
	"**/conftest.py", "**/pytest.py", "**/pytest.ini", "**/tox.ini", "**/setup.cfg", "**/setup.py", "**/pyproject.toml",
	"**/noxfile.py", "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
	"**/package.json", "**/jest.config.*", "**/vitest.config.*", "**/.mocharc*",
	"**/Makefile", "**/makefile", "**/GNUmakefile", "**/go.mod", "**/*_test.go",
}

// Values of Login.
const (
	LoginNone = "none" // CLI agents get credentials from the environment only
	LoginUser = "user" // and a copy of the user's stored login (subscription, `codex login`)
)

// New returns a library at path with every default filled in.
func New(p string) *Library {
	p = CleanPath(p)
	return &Library{
		Name:            path.Base(p),
		Path:            p,
		Evals:           "evals/evals.json",
		Split:           DefaultSplit,
		Layout:          DefaultLayout,
		Timeout:         DefaultTimeout,
		ProposeTimeout:  DefaultTimeout,
		OfflineTimeout:  DefaultOffline,
		Login:           LoginNone,
		Scorer:          DefaultScorer,
		Frozen:          []string{"evals/**"},
		Guarded:         []string{"scripts/**"},
		Hide:            []string{"evals/**"},
		Minibatch:       DefaultMinibatch,
		Delta:           DefaultDelta,
		DeltaFloor:      DefaultDeltaFloor,
		HalfLife:        DefaultHalfLife,
		PromoteAfter:    DefaultPromoteAfter,
		Provider:        defaultProvider(),
		Repeats:         1,
		MaxRepeats:      DefaultMaxRepeats,
		Gate:            GateCalibrated,
		PromisingRounds: DefaultPromising,
		Validation:      ValidationAuto,
		MaxLines:        DefaultMaxLines,
		MaxFiles:        DefaultMaxFiles,
		MaxFileSize:     DefaultMaxFileSize,
		Staleness:       StalenessGuarded,
		Alpha:           DefaultAlpha,
		AlphaL1:         DefaultAlphaL1,
		HotChanges:      DefaultHotChanges,
		RefileLimit:     DefaultRefileLimit,
		OracleTimeout:   DefaultTimeout,
		Isolation:       DefaultIsolation,
		OracleReport:    OracleReportAuto,
		OracleFiles:     slices.Clone(DefaultOracleFiles),
		MemoryLimit:     DefaultMemoryLimit,
	}
}

// CleanPath normalises a library path given by a user: slash-separated,
// relative, no "./" prefix or trailing slash; "" stays "".
func CleanPath(p string) string {
	p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	p = strings.TrimPrefix(strings.Trim(p, "/"), "./")
	if p == "." {
		return ""
	}
	return p
}

// checkRel refuses a path that would leave the directory it is relative
// to: absolute, or with a ".." segment.
func checkRel(p string) error {
	clean := path.Clean(strings.ReplaceAll(p, "\\", "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("must be a relative path inside the library's directory")
	}
	return nil
}

// RepoPath turns a path inside the library into a repository path.
func (l *Library) RepoPath(rel string) string { return l.Path + "/" + rel }

// Rel turns a repository path into a path relative to the library root,
// and reports whether it is inside the library at all.
func (l *Library) Rel(repoPath string) (string, bool) {
	rel, ok := strings.CutPrefix(repoPath, l.Path+"/")
	return rel, ok
}

// Layer is a governance layer of a file.
type Layer int

// Layers, from frozen to free.
const (
	L0 Layer = iota // frozen: never edited by the loop
	L1              // guarded: code and scripts
	L2              // free: instructions and prompts
)

func (l Layer) String() string { return fmt.Sprintf("L%d", int(l)) }

// LayerOf returns the layer of a path relative to the library root.
func (l *Library) LayerOf(rel string) Layer {
	switch {
	case MatchAny(l.Frozen, rel) || rel == l.Evals || l.Oracle != "" && MatchAny(l.OracleFiles, rel):
		return L0
	case MatchAny(l.Guarded, rel):
		return L1
	}
	return L2
}

// Hidden reports whether a library file stays out of rollout workspaces:
// the eval file and anything under Hide, so an agent never reads answers.
func (l *Library) Hidden(rel string) bool {
	return rel == l.Evals || MatchAny(l.Hide, rel)
}

// LayoutDir is the directory, relative to a rollout workspace, where the
// library is materialized. With no layout set it is where the runner looks
// for project skills (Claude Code, Codex), else the library's own path.
func (l *Library) LayoutDir() string {
	layout := l.Layout
	if layout == "" {
		layout = "repo"
		if l.Run == RunnerClaude || l.Run == RunnerCodex {
			layout = l.Run
		}
	}
	switch layout {
	case "repo":
		return l.Path
	case "claude":
		return ".claude/skills/" + l.Name
	case "codex":
		return ".agents/skills/" + l.Name
	case "root", ".":
		return ""
	}
	return CleanPath(layout) // checked relative when read
}

// RepoPlaceholder in a run, proposer, oracle, score-command, on-commit or
// on-promote template is the repository's root, for commands that live in
// the repository: agents and proposers run outside it, so a path relative
// to it is not found.
const RepoPlaceholder = "{{repo}}"

// ExpandRepo replaces RepoPlaceholder in a command template with top,
// quoted as a shell word when it needs to be. Templates keep the
// placeholder in .descent (and in the rollout cache's key), so the
// configuration and the cache hold in a clone elsewhere.
func ExpandRepo(command, top string) string {
	if !strings.Contains(command, RepoPlaceholder) {
		return command
	}
	q := top
	if strings.ContainsFunc(top, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ',' || r == ':' || r == '@' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		q = "'" + strings.ReplaceAll(top, "'", `'\''`) + "'"
	}
	return strings.ReplaceAll(command, RepoPlaceholder, q)
}
