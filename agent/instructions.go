package agent

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// refPattern finds relative file references in Markdown: link targets and
// code spans or words that look like paths ("references/rules.md").
var refPattern = regexp.MustCompile("\\]\\(([^)\\s#]+)|`([^`\\s]+)`|([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\\.[A-Za-z0-9]+)")

// Instructions renders a library for a model that cannot open files: its
// SKILL.md first (or, without one, its Markdown files), then the files
// SKILL.md refers to, in order of first mention, each under a "# File:"
// header, within budget characters. cut names what was left out or
// shortened, or is "" when everything fit.
func Instructions(dir string, budget int) (text, cut string) {
	var order []string
	if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil {
		order = append(order, "SKILL.md")
	} else {
		order = markdownFiles(dir)
	}
	for i := 0; i < len(order) && i < 200; i++ {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(order[i])))
		if err != nil {
			continue
		}
		for _, ref := range references(dir, path.Dir(order[i]), data) {
			if !containsString(order, ref) {
				order = append(order, ref)
			}
		}
	}
	var b strings.Builder
	var left []string
	for _, rel := range order {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		head := "# File: " + rel + "\n\n"
		room := budget - b.Len() - len(head) - 2
		switch {
		case len(data) <= room:
			b.WriteString(head)
			b.Write(data)
			b.WriteString("\n\n")
		case rel == order[0] && room > 0:
			b.WriteString(head)
			b.WriteString(clipText(string(data), room-40))
			b.WriteString("\n\n")
			left = append(left, fmt.Sprintf("%s (shortened from %d characters)", rel, len(data)))
		default:
			left = append(left, fmt.Sprintf("%s (%d characters)", rel, len(data)))
		}
	}
	if len(left) > 0 {
		cut = fmt.Sprintf("instructions cut to the %d-character context budget: left out %s", budget, strings.Join(left, ", "))
	}
	return strings.TrimRight(b.String(), "\n") + "\n", cut
}

// references lists the existing regular files a document refers to, as
// paths relative to the library root, never outside it.
func references(root, from string, data []byte) []string {
	var out []string
	for _, m := range refPattern.FindAllStringSubmatch(string(data), -1) {
		ref := m[1] + m[2] + m[3]
		if ref == "" || strings.Contains(ref, "://") || strings.HasPrefix(ref, "/") {
			continue
		}
		for _, cand := range []string{path.Join(from, ref), path.Clean(ref)} {
			if cand == ".." || strings.HasPrefix(cand, "../") {
				continue
			}
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(cand)))
			if err == nil && fi.Mode().IsRegular() && !containsString(out, cand) {
				out = append(out, cand)
				break
			}
		}
	}
	return out
}

// markdownFiles lists the library's Markdown files, sorted, for a library
// without a SKILL.md.
func markdownFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
