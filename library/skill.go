package library

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SkillFile is the file the Agent Skills format puts at a skill's root.
const SkillFile = "SKILL.md"

// CheckSkill reads dir's SKILL.md against the Agent Skills format and
// returns what it finds wrong, for people: a missing file or frontmatter,
// and the rules on name (1 to 64 lowercase letters, digits and hyphens,
// not starting or ending with a hyphen, no two in a row, equal to the
// directory's name) and description (1 to 1024 characters). Agents that
// load skills by name may not load one that breaks them; a library that is
// not an Agent Skill may ignore them.
func CheckSkill(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, SkillFile))
	if errors.Is(err, os.ErrNotExist) {
		return []string{fmt.Sprintf("%s has no %s: an Agent Skill is a directory with a %s at its root", dir, SkillFile, SkillFile)}
	}
	if err != nil {
		return []string{err.Error()}
	}
	fields, ok := frontmatter(string(data))
	if !ok {
		return []string{fmt.Sprintf("%s has no frontmatter: start it with a block such as\n  ---\n  name: %s\n  description: What the skill does and when to use it.\n  ---", SkillFile, filepath.Base(dir))}
	}
	var out []string
	name, base := fields["name"], filepath.Base(dir)
	switch {
	case name == "":
		out = append(out, fmt.Sprintf("%s frontmatter has no name: add name: %s", SkillFile, base))
	case !validSkillName(name):
		out = append(out, fmt.Sprintf("%s name %q: use 1 to 64 lowercase letters, digits and single hyphens, not at either end", SkillFile, name))
	case name != base:
		out = append(out, fmt.Sprintf("%s name %q differs from its directory %q: agents look a skill up by its directory", SkillFile, name, base))
	}
	switch d := fields["description"]; {
	case d == "":
		out = append(out, fmt.Sprintf("%s frontmatter has no description: agents choose a skill by it, so say what it does and when to use it", SkillFile))
	case len([]rune(d)) > 1024:
		out = append(out, fmt.Sprintf("%s description is %d characters; the format allows 1024", SkillFile, len([]rune(d))))
	}
	return out
}

func validSkillName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// frontmatter reads the top-level scalar keys of a YAML frontmatter block
// (between "---" lines at the start): plain, quoted, and folded or literal
// block scalars, which is what name and description are written as. It is
// not a YAML parser; keys it cannot read come back empty.
func frontmatter(text string) (map[string]string, bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, false
	}
	fields := map[string]string{}
	key := ""
	var block []string
	flush := func() {
		if key != "" && block != nil {
			fields[key] = strings.TrimSpace(strings.Join(block, " "))
		}
		key, block = "", nil
	}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "---" {
			flush()
			return fields, true
		}
		if key != "" && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || l == "") {
			block = append(block, strings.TrimSpace(l))
			continue
		}
		flush()
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case v == "|" || v == ">" || v == "|-" || v == ">-" || v == "":
			key, block = k, []string{}
		case len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\''):
			fields[k] = v[1 : len(v)-1]
		default:
			fields[k] = v
		}
	}
	return nil, false // no closing ---
}
