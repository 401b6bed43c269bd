package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Failure is a failed task as the demo proposer reads it.
type Failure struct {
	Prompt string
	Output string
}

// Propose is the demo proposer: for each failure whose units it knows and
// the skill lacks, it adds the factor to SKILL.md's list, and returns the
// rationale (subject, body). It returns an empty subject when it has
// nothing to add.
func Propose(skillDir string, failures []Failure) (subject, body string, err error) {
	path := filepath.Join(skillDir, "SKILL.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("demo proposer: %w", err)
	}
	have, err := readFactors(skillDir)
	if err != nil {
		return "", "", err
	}
	var add []family
	var why []string
	for _, fl := range failures {
		m := questionRE.FindStringSubmatch(strings.TrimSpace(fl.Prompt))
		if m == nil {
			continue
		}
		f, ok := lookup(m[2], m[3])
		if !ok || covered(have, f) || covered(add, f) {
			continue
		}
		add = append(add, f)
		why = append(why, fmt.Sprintf("- %q answered %q: the skill has no factor for %s to %s.", fl.Prompt, fl.Output, m[2], m[3]))
	}
	if len(add) == 0 {
		return "", "", nil
	}
	text := insertFactors(string(data), add)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", "", fmt.Errorf("demo proposer: %w", err)
	}
	var names []string
	for _, f := range add {
		names = append(names, f.From+"→"+f.To)
	}
	subject = "Add conversion factors for " + strings.Join(names, ", ")
	body = "Failed tasks:\n" + strings.Join(why, "\n")
	return subject, body, nil
}

func lookup(a, b string) (family, bool) {
	for _, f := range known {
		if f.From == a && f.To == b || f.From == b && f.To == a {
			return f, true
		}
	}
	return family{}, false
}

func covered(fs []family, f family) bool {
	for _, g := range fs {
		if g.From == f.From && g.To == f.To || g.From == f.To && g.To == f.From {
			return true
		}
	}
	return false
}

// insertFactors adds each factor line where it belongs in the list, which
// is kept sorted by unit, as a careful editor would.
func insertFactors(text string, add []family) string {
	lines := strings.Split(text, "\n")
	for _, f := range add {
		line := fmt.Sprintf("- 1 %s = %s %s", f.From, strconv.FormatFloat(f.Factor, 'f', -1, 64), f.To)
		at, last := -1, -1
		for i, l := range lines {
			if !factorRE.MatchString(l) {
				continue
			}
			last = i
			if at < 0 && strings.ToLower(l) > strings.ToLower(line) {
				at = i
			}
		}
		if at < 0 {
			at = last + 1
			if last < 0 {
				at = len(lines)
			}
		}
		lines = append(lines[:at], append([]string{line}, lines[at:]...)...)
	}
	return strings.Join(lines, "\n")
}

// Repair is the demo proposer re-making an older proposal on the current
// skill: it re-adds the factor lines the old change added that the skill
// still lacks, and returns an empty subject (declining) when none is.
func Repair(skillDir, diff string) (subject, body string, err error) {
	have, err := readFactors(skillDir)
	if err != nil {
		return "", "", err
	}
	var add []family
	for _, line := range strings.Split(diff, "\n") {
		rest, ok := strings.CutPrefix(line, "+")
		if !ok {
			continue
		}
		m := factorRE.FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		f, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		fam := family{From: m[1], To: m[3], Factor: f}
		if !covered(have, fam) && !covered(add, fam) {
			add = append(add, fam)
		}
	}
	if len(add) == 0 {
		return "", "", nil
	}
	path := filepath.Join(skillDir, "SKILL.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("demo proposer: %w", err)
	}
	if err := os.WriteFile(path, []byte(insertFactors(string(data), add)), 0o644); err != nil {
		return "", "", fmt.Errorf("demo proposer: %w", err)
	}
	var names []string
	for _, f := range add {
		names = append(names, f.From+"→"+f.To)
	}
	return "Re-apply conversion factors for " + strings.Join(names, ", "), "The skill changed since this edit was first made; these factors were still missing.", nil
}
