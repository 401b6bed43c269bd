package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	questionRE = regexp.MustCompile(`Convert ([0-9.]+) (\S+) to (\S+?)\.?$`)
	factorRE   = regexp.MustCompile(`(?m)^- 1 (\S+) = ([0-9.]+) (\S+)\s*$`)
)

// Answer is the demo agent: it answers a conversion question using only the
// factors written in the Markdown files of the skill at skillDir.
func Answer(skillDir, prompt string) (string, error) {
	factors, err := readFactors(skillDir)
	if err != nil {
		return "", err
	}
	m := questionRE.FindStringSubmatch(strings.TrimSpace(prompt))
	if m == nil {
		return "unknown: not a conversion question", nil
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return "unknown: bad number", nil
	}
	from, to := m[2], m[3]
	for _, f := range factors {
		switch {
		case f.From == from && f.To == to:
			return answer(v*f.Factor, to), nil
		case f.From == to && f.To == from:
			return answer(v/f.Factor, to), nil
		}
	}
	return fmt.Sprintf("unknown: the skill has no factor for %s to %s", from, to), nil
}

// readFactors collects every "- 1 X = F Y" line of the skill's .md files.
func readFactors(skillDir string) ([]family, error) {
	var files []string
	err := filepath.WalkDir(skillDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read skill %q: %w", skillDir, err)
	}
	sort.Strings(files)
	var fs []family
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, m := range factorRE.FindAllStringSubmatch(string(data), -1) {
			f, err := strconv.ParseFloat(m[2], 64)
			if err == nil && f > 0 {
				fs = append(fs, family{From: m[1], To: m[3], Factor: f})
			}
		}
	}
	return fs, nil
}
