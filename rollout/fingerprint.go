package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/library"
)

// cacheVersion changes when what a cached record means changes.
const cacheVersion = "rollout v2"

// maxScript is the largest program found on PATH whose content is hashed:
// scripts are small, interpreters and binaries are not hashed.
const maxScript = 1 << 20

// ConfigHash digests everything besides the library tree, the task and the
// repeat that decides a rollout's result: the runner's and scorer's
// configuration, and the content of the files they run. Those files are
// every word of the run and score-command templates that names an existing
// file (an absolute path, or one relative to the repository root top), the
// first word of each when it is a script found on PATH (a file starting
// with "#!"), and every file matched by the library's fingerprint globs
// (relative to top). Editing the agent's own script therefore invalidates
// its cached rollouts. agent are more parts that decide results, such as a
// CLI agent's own settings (agent.CLI.Fingerprint). A fingerprint glob that
// matches no file is an error.
func ConfigHash(l *library.Library, top string, agent ...string) (string, error) {
	p := l.Provider
	h := sha256.New()
	parts := []string{cacheVersion, l.Run, l.Layout, l.LayoutDir(), l.Scorer, fmt.Sprint(l.Tolerance), l.ScoreCommand,
		strings.Join(l.Hide, "\x01"), l.Evals, strings.Join(l.Env, "\x01"), l.Timeout.String(),
		p.BaseURL, p.ModelFor("run"), p.ModelFor("judge"), fmt.Sprint(p.ContextBudget, p.MaxTokens)}
	for _, part := range append(parts, agent...) {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	files, err := fingerprintFiles(l, top)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("library %q: fingerprint %s: %w", l.Name, f, err)
		}
		// Inside the repository by its relative path, so that a clone
		// elsewhere keeps its cache valid.
		name := f
		if rel, err := filepath.Rel(top, f); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
		fmt.Fprintf(h, "file %s %d\x00", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fingerprintFiles lists the files whose content ConfigHash covers, sorted.
func fingerprintFiles(l *library.Library, top string) ([]string, error) {
	set := map[string]bool{}
	for _, cmd := range []string{l.Run, l.ScoreCommand} {
		if cmd == library.RunnerOpenAI || cmd == library.RunnerClaude || cmd == library.RunnerCodex {
			continue // a built-in: its version is in the evidence, not on PATH
		}
		words := commandWords(cmd)
		for i, w := range words {
			if f := existingFile(w, top); f != "" {
				set[f] = true
			} else if i == 0 {
				if f := scriptOnPath(w); f != "" {
					set[f] = true
				}
			}
		}
	}
	for _, glob := range l.Fingerprint {
		matched, err := globFiles(top, glob)
		if err != nil {
			return nil, fmt.Errorf("library %q: fingerprint %q: %w", l.Name, glob, err)
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("library %q: fingerprint %q matches no file under %s (globs are relative to the repository root)", l.Name, glob, top)
		}
		for _, f := range matched {
			set[f] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// commandWords splits a command template into words the way a reader
// would: on blanks and shell operators outside quotes, quotes removed,
// placeholders dropped; NAME=value and --flag=value give their value.
func commandWords(cmd string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	flush := func() {
		w := cur.String()
		cur.Reset()
		if k, v, ok := strings.Cut(w, "="); ok && !strings.Contains(k, "/") {
			w = v
		}
		// {{repo}}/x is x in the repository, which existingFile resolves.
		w = strings.TrimPrefix(w, library.RepoPlaceholder+"/")
		if w != "" && !strings.Contains(w, "{{") && !strings.HasPrefix(w, "-") {
			words = append(words, w)
		}
	}
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";|&<>()`", r):
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return words
}

// existingFile returns the absolute path of w when it names a regular file:
// an absolute path, or a path relative to top with a slash in it.
func existingFile(w, top string) string {
	if !strings.Contains(w, "/") {
		return ""
	}
	p := w
	if !filepath.IsAbs(p) {
		p = filepath.Join(top, filepath.FromSlash(w))
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}

// scriptOnPath returns the file PATH finds for name when it is a small
// script.
func scriptOnPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxScript {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 2)
	if n, _ := f.Read(head); n == 2 && string(head) == "#!" {
		return p
	}
	return ""
}

// globFiles returns the regular files under top matching glob (library
// glob syntax, slash-separated, relative to top), walking only the glob's
// literal leading directories.
func globFiles(top, glob string) ([]string, error) {
	glob = library.CleanPath(glob)
	if glob == "" || strings.HasPrefix(glob, "../") {
		return nil, errors.New("must be a path inside the repository")
	}
	dir := glob
	if i := strings.IndexAny(dir, "*?["); i >= 0 {
		dir = path.Dir(dir[:i+1])
	}
	root := filepath.Join(top, filepath.FromSlash(dir))
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && library.MatchAny([]string{glob}, filepath.ToSlash(rel)) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
