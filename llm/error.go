package llm

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Error is a failed [Client.Complete]. Its message names the base URL and the
// model, says what to fix, and never contains the API key: every occurrence
// of the key (4 bytes or longer) is replaced by "[redacted]", including in
// text the server sent back.
type Error struct {
	BaseURL   string // the endpoint, with any password in it masked
	Model     string
	Status    int    // HTTP status of the last response; 0 if none arrived
	Retryable bool   // the failure is transient and a later call may succeed; Complete already retried it
	Attempts  int    // HTTP attempts made by the call
	Msg       string // what went wrong and what to fix, after the BaseURL prefix

	// cause is what Unwrap exposes: the caller's context error or
	// ErrNoMessages. Never a go-openai or net/http error, whose text may hold
	// the key.
	cause error
}

// Error returns "<base URL>: <Msg>".
func (e *Error) Error() string { return e.BaseURL + ": " + e.Msg }

// Unwrap returns context.Canceled or context.DeadlineExceeded when the
// caller's context ended the call, ErrNoMessages for an empty request, and nil
// otherwise.
func (e *Error) Unwrap() error { return e.cause }

// ErrNoMessages is the cause of the error Complete returns for a request
// without messages.
var ErrNoMessages = errors.New("request has no messages")

const (
	redacted      = "[redacted]"
	serverMsgKeep = 300 // bytes of a server's message kept in an Error
)

// redact replaces every occurrence of key in s. Keys shorter than 4 bytes are
// left alone: replacing them would mangle ordinary text and hide nothing.
func redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, redacted)
}

// serverText prepares text a server sent for an error message: the key
// redacted first (so truncation cannot leave a fragment of it), whitespace
// collapsed, and at most serverMsgKeep bytes kept, cut at a rune boundary.
func serverText(s, key string) string {
	s = strings.Join(strings.Fields(redact(s, key)), " ")
	if len(s) <= serverMsgKeep {
		return s
	}
	cut := serverMsgKeep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
