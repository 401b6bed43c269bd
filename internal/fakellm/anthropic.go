package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// helloPath is the route Claude Code probes before its first request (unless
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set); it is answered 200 with
// no body whatever the key.
const helloPath = "/api/hello"

// anthropicAPI is the Anthropic Messages API: POST /v1/messages (any query,
// such as Claude Code's ?beta=true), answered with server-sent events when
// the request streams and one JSON message otherwise.
type anthropicAPI struct{}

func (anthropicAPI) name() string { return "anthropic" }

func (anthropicAPI) path() string { return "/v1/messages" }

// credential is the x-api-key header, or else a Bearer token (how Claude
// Code sends ANTHROPIC_AUTH_TOKEN and OAuth tokens).
func (anthropicAPI) credential(h http.Header) (string, bool, bool) {
	if key := h.Get("X-Api-Key"); key != "" {
		return key, true, true
	}
	return bearer(h)
}

// unauthorized is Anthropic's 401 message, followed by a wrong key as the
// OpenAI message has it.
func (anthropicAPI) unauthorized(key string, sent bool) string {
	if !sent {
		return "x-api-key header is required"
	}
	return "invalid x-api-key: " + key
}

type anthropicRequest struct {
	Model    string             `json:"model"`
	Messages []anthropicMessage `json:"messages"`
	Stream   bool               `json:"stream"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or an array of blocks
}

// anthropicBlock is a content block as a client sends it: text, tool_use or
// tool_result; other types (thinking, image, ...) carry nothing rules see.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool result: a string or an array of blocks
	IsError   bool            `json:"is_error"`
}

// decode reads a Messages request, leaving out the system prompt: the
// "system" field and messages with role "system", which Claude Code adds
// mid-conversation.
func (anthropicAPI) decode(body []byte) (request, error) {
	var wire anthropicRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		return request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	req := request{Model: wire.Model, Stream: wire.Stream}
	for _, wm := range wire.Messages {
		if wm.Role == "system" {
			continue
		}
		m, err := wm.message()
		if err != nil {
			return request{}, err
		}
		req.Messages = append(req.Messages, m)
	}
	return req, nil
}

func (wm anthropicMessage) message() (Message, error) {
	m := Message{Role: wm.Role}
	var s string
	if err := json.Unmarshal(wm.Content, &s); err == nil {
		m.Content = s
		return m, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(wm.Content, &blocks); err != nil {
		return Message{}, fmt.Errorf("message content: want a string or an array of blocks")
	}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			m.Calls = append(m.Calls, ToolCall{ID: b.ID, Name: b.Name, Input: input(b.Input)})
		case "tool_result":
			content, err := contentText(b.Content)
			if err != nil {
				return Message{}, fmt.Errorf("tool_result content: %w", err)
			}
			m.Results = append(m.Results, ToolResult{ID: b.ToolUseID, Content: content, Error: b.IsError})
		}
	}
	m.Content = strings.Join(texts, "\n")
	return m, nil
}

// anthropicMessageReply is a whole reply: the JSON answer, and in a stream
// the message of message_start (with no content yet).
type anthropicMessageReply struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []any          `json:"content"` // textBlock and toolUseBlock
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type textBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// anthropicContent is the content blocks of a: its text, then its call.
func anthropicContent(a answer) []any {
	var out []any
	if a.showsText() {
		out = append(out, textBlock{Type: "text", Text: a.Text})
	}
	if a.Call != nil {
		out = append(out, toolUseBlock{Type: "tool_use", ID: a.Call.ID, Name: a.Call.Name, Input: a.Call.Input})
	}
	return out
}

func (anthropicAPI) writeAnswer(w http.ResponseWriter, seq int, req request, a answer) {
	stop := "end_turn"
	if a.Call != nil {
		stop = "tool_use"
	}
	msg := anthropicMessageReply{
		ID: fmt.Sprintf("msg_fake_%d", seq), Type: "message", Role: "assistant", Model: req.Model,
		Content: anthropicContent(a), StopReason: &stop,
		Usage: anthropicUsage{InputTokens: a.Usage.PromptTokens, OutputTokens: a.Usage.CompletionTokens},
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	writeAnthropicStream(startEvents(w), msg)
}

// writeAnthropicStream sends msg as the Messages API streams it: the usage of
// the prompt in message_start, each block as start, one delta and stop, and
// the stop reason with the output tokens in message_delta.
func writeAnthropicStream(ev events, msg anthropicMessageReply) {
	start := msg
	start.Content, start.StopReason = []any{}, nil
	start.Usage.OutputTokens = 0
	ev.send("message_start", map[string]any{"message": start})
	for i, b := range msg.Content {
		var empty, delta any
		switch b := b.(type) {
		case textBlock:
			empty = textBlock{Type: "text", Text: ""}
			delta = map[string]string{"type": "text_delta", "text": b.Text}
		case toolUseBlock:
			empty = toolUseBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}
			delta = map[string]string{"type": "input_json_delta", "partial_json": string(b.Input)}
		}
		ev.send("content_block_start", map[string]any{"index": i, "content_block": empty})
		ev.send("content_block_delta", map[string]any{"index": i, "delta": delta})
		ev.send("content_block_stop", map[string]any{"index": i})
	}
	ev.send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage.OutputTokens},
	})
	ev.send("message_stop", map[string]any{})
}

// writeError answers with the Messages API's error body, whose type is the
// one Anthropic uses for status (529 is overloaded_error).
func (anthropicAPI) writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": anthropicErrorType(status), "message": message},
	})
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
