package agent

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-descent/git-descent/library"
)

// The reply format of the reflective proposer. Markers stand alone on their
// lines; SEARCH text must match the file exactly, once.
const (
	markRationale = "RATIONALE:"
	markEdit      = "EDIT "
	markFile      = "FILE "
	markSearch    = "<<<<<<< SEARCH"
	markDivider   = "======="
	markReplace   = ">>>>>>> REPLACE"
	markContent   = "<<<<<<< CONTENT"
	markEnd       = ">>>>>>> END"
)

// EditProtocol explains the reply format to a model.
const EditProtocol = `Reply in exactly this format, and nothing else:

RATIONALE: <one line: what was wrong and how the edit fixes it>
<optional: a short paragraph with more detail>

EDIT <path relative to the skill directory>
<<<<<<< SEARCH
<text copied exactly from the current file, enough lines to be unique>
=======
<the text to put in its place>
>>>>>>> REPLACE

FILE <path relative to the skill directory>
<<<<<<< CONTENT
<the whole new content of the file>
>>>>>>> END

Use as many EDIT blocks (several SEARCH/REPLACE pairs may follow one EDIT line) and FILE blocks as you need.
If no change is needed, reply with the RATIONALE line and then a line NO CHANGE.
Use FILE only to create a new file or to rewrite a small one (at most %d bytes); change larger files with EDIT.
SEARCH text must appear exactly once in the file as it is now (after the earlier blocks of your reply).`

// editBlock is one change a reply asks for.
type editBlock struct {
	path    string
	search  string // EDIT: the text to find
	replace string // EDIT: its replacement
	whole   bool   // FILE: content replaces the file
	content string
}

// parseReply splits a proposer reply into its rationale and edit blocks.
// Anything malformed is an error that says where, for the model to fix.
func parseReply(reply string) (Rationale, []editBlock, error) {
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	var rat []string
	var blocks []editBlock
	cur := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, markRationale):
			rat = append(rat, strings.TrimSpace(strings.TrimPrefix(l, markRationale)))
		case strings.HasPrefix(l, markEdit):
			cur = strings.TrimSpace(strings.TrimPrefix(l, markEdit))
		case strings.HasPrefix(l, markFile):
			p := strings.TrimSpace(strings.TrimPrefix(l, markFile))
			if i+1 >= len(lines) || lines[i+1] != markContent {
				return Rationale{}, nil, fmt.Errorf("line %d: FILE %s must be followed by a line %q", i+1, p, markContent)
			}
			end := indexLine(lines, i+2, markEnd)
			if end < 0 {
				return Rationale{}, nil, fmt.Errorf("line %d: FILE %s has no closing %q line", i+1, p, markEnd)
			}
			blocks = append(blocks, editBlock{path: p, whole: true, content: joinLines(lines[i+2 : end])})
			i, cur = end, ""
		case l == markSearch:
			if cur == "" {
				return Rationale{}, nil, fmt.Errorf("line %d: SEARCH block without an EDIT <path> line before it", i+1)
			}
			div := indexLine(lines, i+1, markDivider)
			end := indexLine(lines, div+1, markReplace)
			if div < 0 || end < 0 {
				return Rationale{}, nil, fmt.Errorf("line %d: SEARCH block for %s needs a %q line and a closing %q line", i+1, cur, markDivider, markReplace)
			}
			blocks = append(blocks, editBlock{path: cur, search: joinLines(lines[i+1 : div]), replace: joinLines(lines[div+1 : end])})
			i = end
		case len(blocks) == 0 && cur == "" && len(rat) > 0 && strings.TrimSpace(l) != "":
			rat = append(rat, l) // the rationale's paragraph
		}
	}
	if len(rat) == 0 || rat[0] == "" {
		return Rationale{}, nil, errors.New("the reply has no RATIONALE: line")
	}
	if len(blocks) == 0 {
		for _, l := range lines {
			if strings.TrimSpace(l) == "NO CHANGE" {
				return ParseRationale(strings.Join(rat, "\n")), nil, nil
			}
		}
		return Rationale{}, nil, errors.New("the reply has no EDIT or FILE blocks (reply NO CHANGE if none is needed)")
	}
	r := ParseRationale(strings.Join(rat, "\n"))
	return r, blocks, nil
}

func indexLine(lines []string, from int, want string) int {
	if from < 0 {
		return -1
	}
	for i := from; i < len(lines); i++ {
		if lines[i] == want {
			return i
		}
	}
	return -1
}

// joinLines rejoins block lines; a block's text ends with a newline unless
// it is empty.
func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// editRules decide which paths a proposer may change and how.
type editRules struct {
	frozen       []string // L0 globs, relative to the library
	evals        string   // the eval file, always frozen
	wholeFileMax int      // FILE may rewrite existing files up to this size
}

// applyEdits checks every block against the files under dir and, only if
// all of them apply, writes the results. It refuses paths outside dir,
// frozen paths, paths through symlinks, SEARCH text that is missing or
// ambiguous, FILE rewrites of large files, and edits that change nothing.
func applyEdits(dir string, blocks []editBlock, rules editRules) ([]string, error) {
	next := map[string]string{} // path → new content
	var order []string
	for _, b := range blocks {
		rel, err := checkEditPath(dir, b.path, rules)
		if err != nil {
			return nil, err
		}
		cur, seen := next[rel]
		if !seen {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil && !os.IsNotExist(err) {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			cur = string(data)
			if b.whole && err == nil && len(data) > rules.wholeFileMax {
				return nil, fmt.Errorf("FILE %s: the file is %d bytes; change files over %d bytes with EDIT blocks", rel, len(data), rules.wholeFileMax)
			}
			if !b.whole && os.IsNotExist(err) {
				return nil, fmt.Errorf("EDIT %s: no such file; create new files with a FILE block", rel)
			}
			order = append(order, rel)
		}
		if b.whole {
			next[rel] = b.content
			continue
		}
		if b.search == "" {
			return nil, fmt.Errorf("EDIT %s: the SEARCH text is empty", rel)
		}
		switch n := strings.Count(cur, b.search); n {
		case 1:
			next[rel] = strings.Replace(cur, b.search, b.replace, 1)
		case 0:
			return nil, fmt.Errorf("EDIT %s: the SEARCH text was not found in the file; copy it exactly from the current file:\n%s", rel, clipText(b.search, 300))
		default:
			return nil, fmt.Errorf("EDIT %s: the SEARCH text appears %d times; include more surrounding lines so it is unique:\n%s", rel, n, clipText(b.search, 300))
		}
	}
	var changed []string
	for _, rel := range order {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		old, err := os.ReadFile(full)
		if err == nil && string(old) == next[rel] {
			continue
		}
		changed = append(changed, rel)
	}
	if len(changed) == 0 {
		return nil, errors.New("the edits change nothing")
	}
	for _, rel := range changed {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(next[rel]), 0o644); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// checkEditPath cleans a path from a reply and refuses those that leave
// the library, are frozen, or pass through a symlink.
func checkEditPath(dir, p string, rules editRules) (string, error) {
	clean := path.Clean(strings.ReplaceAll(p, "\\", "/"))
	switch {
	case p == "" || clean == ".":
		return "", errors.New("an EDIT or FILE line has no path")
	case path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../"):
		return "", fmt.Errorf("%s: paths must stay inside the skill directory", p)
	case clean == rules.evals || library.MatchAny(rules.frozen, clean):
		return "", fmt.Errorf("%s: the file is frozen and may not be changed", clean)
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == ".git" {
			return "", fmt.Errorf("%s: paths may not enter .git", clean)
		}
	}
	cur := dir
	for _, seg := range strings.Split(clean, "/") {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			break // the rest does not exist yet
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%s: the path goes through a symlink", clean)
		}
	}
	return clean, nil
}
