package library

import (
	"path"
	"strings"
)

// Match reports whether the slash-separated relative path p matches the
// glob pattern: `*`, `?` and `[...]` stay within one path segment, `**`
// matches any number of segments (including none), and a pattern without
// wildcards also matches everything below it ("scripts" matches
// "scripts/a.sh"). Patterns are anchored at the library root.
func Match(pattern, p string) bool {
	pattern = strings.Trim(pattern, "/")
	if pattern == "" {
		return false
	}
	if !strings.ContainsAny(pattern, "*?[") && (p == pattern || strings.HasPrefix(p, pattern+"/")) {
		return true
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// MatchAny reports whether p matches any of the patterns.
func MatchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if Match(pat, p) {
			return true
		}
	}
	return false
}
