package ledger

import (
	"fmt"
	"strings"
)

// Trailer is one "Key: value" line at the end of a commit message.
type Trailer struct{ Key, Value string }

// formatMessage builds a commit message from a subject, an optional body and
// trailers. Newlines in the subject are folded.
func formatMessage(subject, body string, trailers []Trailer) string {
	var b strings.Builder
	b.WriteString(oneLine(subject))
	b.WriteString("\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString("\n" + body + "\n")
	}
	if len(trailers) > 0 {
		b.WriteString("\n")
		for _, t := range trailers {
			fmt.Fprintf(&b, "%s: %s\n", t.Key, oneLine(t.Value))
		}
	}
	return b.String()
}

// parseMessage splits a commit message into subject, body and the trailers
// of its last paragraph (when every line of it is a trailer).
func parseMessage(msg string) (subject, body string, trailers []Trailer) {
	msg = strings.TrimRight(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	subject, rest, _ := strings.Cut(msg, "\n")
	paras := strings.Split(strings.Trim(rest, "\n"), "\n\n")
	last := paras[len(paras)-1]
	var ts []Trailer
	for _, line := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			ts = nil
			break
		}
		ts = append(ts, Trailer{Key: k, Value: v})
	}
	if ts != nil {
		paras = paras[:len(paras)-1]
	}
	return subject, strings.TrimSpace(strings.Join(paras, "\n\n")), ts
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func trailerValue(ts []Trailer, key string) string {
	for _, t := range ts {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}
