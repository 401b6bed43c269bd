package cli

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// checkCommand reads a run, proposer, oracle or score-command template as
// the processes it starts will see it: agents and proposers run in a
// workspace outside the repository, so a path relative to the repository
// is never found there. It returns an error for what can never work (with
// the fix) and warnings for what does not work yet (a program not
// installed). Only the template is read; nothing is run.
func checkCommand(key, tmpl, top, libPath string) (warnings []string, err error) {
	switch tmpl {
	case "", library.RunnerOpenAI:
		return nil, nil
	case library.RunnerClaude, library.RunnerCodex:
		prog := strings.Fields(agent.Presets[tmpl].Run)[0]
		if !onPath(prog) {
			return []string{fmt.Sprintf("%s = %s: %s is not on PATH; install it before evolving", key, tmpl, prog)}, nil
		}
		return nil, nil
	}
	words := strings.Fields(tmpl)
	first := true
	for _, w := range words {
		w = strings.Trim(w, `'"`)
		if first && strings.Contains(w, "=") && !strings.HasPrefix(w, "/") {
			continue // VAR=value before the program
		}
		isProgram := first
		first = false
		switch {
		case strings.HasPrefix(w, library.RepoPlaceholder+"/"):
			rel := strings.TrimPrefix(w, library.RepoPlaceholder+"/")
			fi, err := os.Stat(filepath.Join(top, filepath.FromSlash(rel)))
			switch {
			case err != nil:
				return nil, fmt.Errorf("%s: %s: %s is not in the repository", key, w, rel)
			case isProgram && fi.Mode()&0o111 == 0:
				return nil, fmt.Errorf("%s: %s is not executable: chmod +x %s, or start the command with its interpreter", key, rel, rel)
			}
		case strings.HasPrefix(w, "{{"), strings.HasPrefix(w, "-"):
		case filepath.IsAbs(w):
			fi, err := os.Stat(w)
			switch {
			case err != nil && isProgram:
				warnings = append(warnings, fmt.Sprintf("%s: %s does not exist (yet)", key, w))
			case err == nil && isProgram && fi.Mode()&0o111 == 0:
				return nil, fmt.Errorf("%s: %s is not executable: chmod +x %s, or start the command with its interpreter", key, w, w)
			}
		case key != "score-command" && repoRelative(w, top, libPath): // the scorer runs at the root
			return nil, fmt.Errorf("%s: %q is a path in the repository, but agents and proposers run in a workspace outside it, where it is not found: write %s/%s",
				key, w, library.RepoPlaceholder, w)
		case isProgram && !strings.Contains(w, "/"):
			if !onPath(w) && !shellBuiltin(w) {
				warnings = append(warnings, fmt.Sprintf("%s: %s is not on PATH; install it, or give its absolute path", key, w))
			}
		}
	}
	return warnings, nil
}

// repoRelative reports whether w names a file relative to the repository
// root, outside the library (whose files the workspace has).
func repoRelative(w, top, libPath string) bool {
	if filepath.IsAbs(w) || strings.Contains(w, "{{") || !strings.ContainsAny(w, "/.") {
		return false
	}
	clean := path.Clean(w)
	if clean == libPath || strings.HasPrefix(clean, libPath+"/") {
		return false
	}
	fi, err := os.Stat(filepath.Join(top, filepath.FromSlash(clean)))
	return err == nil && fi.Mode().IsRegular()
}

// onPath reports whether prog is found on the PATH the library's processes
// get: git-descent's own directory first, then the caller's PATH.
func onPath(prog string) bool {
	_, err := sandbox.LookPath(prog, sandbox.Environ(nil, nil, git.ExecutablePath()))
	return err == nil
}

// shellBuiltin reports whether a command runs without being on PATH.
func shellBuiltin(w string) bool {
	switch w {
	case "echo", "printf", "cd", "exit", "true", "false", "test", "[", "read", "exec", "eval", "set", "export", ":", ".":
		return true
	}
	return false
}

// lintLibrary is what init and doctor report about a configured library:
// its commands (errors for what can never work), its SKILL.md against the
// Agent Skills format, and its eval file (keys no field reads, a
// skill_name that is not the skill's).
func lintLibrary(top string, lib *library.Library) (warnings []string, err error) {
	for _, c := range [][2]string{{"run", lib.Run}, {"proposer", lib.Proposer}, {"oracle", lib.Oracle}, {"score-command", lib.ScoreCommand}} {
		w, err := checkCommand(c[0], c[1], top, lib.Path)
		if err != nil {
			return warnings, err
		}
		warnings = append(warnings, w...)
	}
	dir := filepath.Join(top, filepath.FromSlash(lib.Path))
	warnings = append(warnings, library.CheckSkill(dir)...)
	evals := filepath.Join(dir, filepath.FromSlash(lib.Evals))
	data, err := os.ReadFile(evals)
	if err != nil {
		return warnings, nil // init's note and evolve's error say it is missing
	}
	in, err := eval.Inspect(path.Join(lib.Path, lib.Evals), data)
	if err != nil {
		return append(warnings, err.Error()), nil
	}
	warnings = append(warnings, in.Unknown...)
	if in.SkillName != "" && in.SkillName != filepath.Base(dir) && in.SkillName != lib.Name {
		warnings = append(warnings, fmt.Sprintf("%s: skill_name %q is not this skill's name %q", path.Join(lib.Path, lib.Evals), in.SkillName, filepath.Base(dir)))
	}
	return warnings, nil
}
