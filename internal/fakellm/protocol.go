package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// created is the fixed "created" time of every completion, so that replies
// are byte-for-byte stable across runs.
const created = 1764417600

// Message is one chat message as the client sent it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// UnmarshalJSON accepts content as a string, null, or an array of parts, whose
// "text" fields are joined with "\n".
func (m *Message) UnmarshalJSON(data []byte) error {
	var wire struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	content, err := contentText(wire.Content)
	if err != nil {
		return fmt.Errorf("message content: %w", err)
	}
	*m = Message{Role: wire.Role, Content: content}
	return nil
}

func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or an array of parts")
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n"), nil
}

// chatRequest is the part of a chat-completions request the server reads.
type chatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Stream   bool      `json:"stream"`
}

// transcript is what rules match against: every content, joined with "\n".
func transcript(msgs []Message) string {
	contents := make([]string, len(msgs))
	for i, m := range msgs {
		contents[i] = m.Content
	}
	return strings.Join(contents, "\n")
}

// lastUser is the content of the last message with role "user", or "".
func lastUser(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// usage is the token accounting of one completion. Counts are deterministic:
// characters (runes) divided by 4, rounded up.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageFor(msgs []Message, reply string) usage {
	prompt := 0
	for _, m := range msgs {
		prompt += utf8.RuneCountInString(m.Content)
	}
	u := usage{PromptTokens: tokens(prompt), CompletionTokens: tokens(utf8.RuneCountInString(reply))}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func tokens(chars int) int { return (chars + 3) / 4 }

type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   usage    `json:"usage"`
}

type choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

func writeCompletion(w http.ResponseWriter, seq int, model, reply string, u usage) {
	writeJSON(w, http.StatusOK, completion{
		ID:      fmt.Sprintf("fake-%d", seq),
		Object:  "chat.completion",
		Created: created,
		Model:   model,
		Choices: []choice{{
			Message:      Message{Role: "assistant", Content: reply},
			FinishReason: "stop",
		}},
		Usage: u,
	})
}

type errorBody struct {
	Error apiError `json:"error"`
}

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    *string `json:"code"`
}

// writeError answers with status and an OpenAI-style error body whose type
// and code are the ones OpenAI uses for that status.
func writeError(w http.ResponseWriter, status int, message string) {
	e := apiError{Message: message, Type: "invalid_request_error"}
	code := func(c string) *string { return &c }
	switch {
	case status == http.StatusUnauthorized:
		e.Code = code("invalid_api_key")
	case status == http.StatusNotFound:
		e.Code = code("unknown_url")
	case status == http.StatusTooManyRequests:
		e.Type, e.Code = "requests", code("rate_limit_exceeded")
	case status >= 500:
		e.Type = "server_error"
	}
	writeJSON(w, status, errorBody{Error: e})
}

// writeJSON writes v without HTML escaping, so that scripts can match replies
// containing <, > and & literally.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("fakellm: encode %T: %v", v, err)) // only plain structs reach here
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
