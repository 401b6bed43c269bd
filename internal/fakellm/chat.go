package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// created is the fixed creation time of every reply, so that replies are
// byte-for-byte stable across runs.
const created = 1764417600

// chatAPI is OpenAI chat completions: POST /v1/chat/completions, answered
// with one JSON completion; streaming is refused.
type chatAPI struct{}

func (chatAPI) name() string { return "chat" }

func (chatAPI) path() string { return "/v1/chat/completions" }

func (chatAPI) credential(h http.Header) (string, bool, bool) { return bearer(h) }

func (chatAPI) unauthorized(key string, sent bool) string { return openAIUnauthorized(key, sent) }

func (chatAPI) writeError(w http.ResponseWriter, status int, message string) {
	writeOpenAIError(w, status, message)
}

// chatMessage is a chat message on the wire.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, null, or an array of parts
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // JSON, as a string
	} `json:"function"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
}

// decode reads a chat request. Every message is kept, system ones included;
// a "tool" message becomes a ToolResult.
func (chatAPI) decode(body []byte) (request, error) {
	var wire chatRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		return request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	req := request{Model: wire.Model, Stream: wire.Stream}
	for _, wm := range wire.Messages {
		m, err := wm.message()
		if err != nil {
			return request{}, err
		}
		req.Messages = append(req.Messages, m)
	}
	if req.Stream {
		return req, errors.New("streaming is not supported")
	}
	return req, nil
}

func (wm chatMessage) message() (Message, error) {
	content, err := contentText(wm.Content)
	if err != nil {
		return Message{}, fmt.Errorf("message content: %w", err)
	}
	m := Message{Role: wm.Role, Content: content}
	if wm.Role == "tool" {
		m.Content = ""
		m.Results = []ToolResult{{ID: wm.ToolCallID, Content: content}}
	}
	for _, c := range wm.ToolCalls {
		m.Calls = append(m.Calls, ToolCall{ID: c.ID, Name: c.Function.Name, Input: input([]byte(c.Function.Arguments))})
	}
	return m, nil
}

// contentText reads content given as a string, null, or an array of parts,
// whose "text" fields are joined with "\n".
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

type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   usage    `json:"usage"`
}

type choice struct {
	Index        int          `json:"index"`
	Message      replyMessage `json:"message"`
	FinishReason string       `json:"finish_reason"`
}

// replyMessage is the assistant message of a completion.
type replyMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

func (chatAPI) writeAnswer(w http.ResponseWriter, seq int, req request, a answer) {
	msg := replyMessage{Role: "assistant", Content: a.Text}
	finish := "stop"
	if a.Call != nil {
		call := chatToolCall{ID: a.Call.ID, Type: "function"}
		call.Function.Name, call.Function.Arguments = a.Call.Name, string(a.Call.Input)
		msg.ToolCalls, finish = []chatToolCall{call}, "tool_calls"
	}
	writeJSON(w, http.StatusOK, completion{
		ID:      fmt.Sprintf("fake-%d", seq),
		Object:  "chat.completion",
		Created: created,
		Model:   req.Model,
		Choices: []choice{{Message: msg, FinishReason: finish}},
		Usage:   a.Usage,
	})
}

// openAIUnauthorized is OpenAI's 401 message, which echoes a wrong key.
func openAIUnauthorized(key string, sent bool) string {
	if !sent {
		return "You didn't provide an API key."
	}
	return "Incorrect API key provided: " + key
}

type errorBody struct {
	Error apiError `json:"error"`
}

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    *string `json:"code"`
}

// writeOpenAIError answers with status and an OpenAI-style error body whose
// type and code are the ones OpenAI uses for that status. Chat completions
// and Responses share it.
func writeOpenAIError(w http.ResponseWriter, status int, message string) {
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
