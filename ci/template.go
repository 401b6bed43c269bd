package ci

import (
	"bytes"
	"embed"
	"strconv"
	"strings"
	"text/template"
	"unicode"
)

//go:embed *.yml.tmpl
var templates embed.FS

// The templates' delimiters are [[ ]], since GitHub's expressions are
// ${{ }}.
var tmpl = template.Must(template.New("").Delims("[[", "]]").Funcs(template.FuncMap{
	"sh":  shellWord,
	"yq":  yamlScalar,
	"dur": Duration,
	"add": func(a, b int) int { return a + b },
}).ParseFS(templates, "*.yml.tmpl"))

// render executes the named template on p.
func render(name string, p *plan) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// shellWord quotes s for a POSIX shell when it needs to be.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/._-+,:@=", r)))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// yamlScalar writes s as a YAML scalar in block context: plain when it
// surely reads back as the same string, else double-quoted (Go's escapes
// are a subset of YAML's).
func yamlScalar(s string) string {
	if plainSafe(s) {
		return s
	}
	return strconv.Quote(s)
}

// plainSafe reports whether s, written unquoted as a mapping value or a
// sequence item, is read back as the string s: it starts with a letter or
// a '$' (none of YAML's indicators), holds no ": " or " #" and no control
// character, does not end in a space or ':', and is none of the words a
// YAML 1.1 reader takes for a boolean or null.
func plainSafe(s string) bool {
	if s == "" || !(unicode.IsLetter(rune(s[0])) || s[0] == '$') || strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.ContainsFunc(s, unicode.IsControl) {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}
