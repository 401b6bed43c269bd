package fakellm

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Message is one message of a conversation as the client sent it, in the
// same form whichever protocol carried it: text, tool calls the assistant
// made, or results of tool calls.
type Message struct {
	Role    string       `json:"role"` // "system", "user", "assistant" or "tool"
	Content string       `json:"content"`
	Calls   []ToolCall   `json:"tool_calls,omitempty"`
	Results []ToolResult `json:"tool_results,omitempty"`
}

// ToolCall is a call of a tool the assistant made.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"` // the arguments as compact JSON (an object for every client so far)
}

// ToolResult is what a tool call returned, as the client reported it.
type ToolResult struct {
	ID      string `json:"id"` // the ID of the call
	Content string `json:"content"`
	Error   bool   `json:"error,omitempty"` // the client marked the result as an error
}

// text is what rules see of the message: its content unless empty, then
// each call as its name and input, then each result's content, one per line.
func (m Message) text() string {
	var parts []string
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, c := range m.Calls {
		parts = append(parts, c.Name+" "+string(c.Input))
	}
	for _, r := range m.Results {
		parts = append(parts, r.Content)
	}
	return strings.Join(parts, "\n")
}

// clone returns a copy sharing no memory with m.
func (m Message) clone() Message {
	m.Calls = slices.Clone(m.Calls)
	for i := range m.Calls {
		m.Calls[i].Input = bytes.Clone(m.Calls[i].Input)
	}
	m.Results = slices.Clone(m.Results)
	return m
}

// request is one request in the form common to the protocols.
type request struct {
	Model    string
	Messages []Message // for Anthropic and Responses, without the system prompt
	Stream   bool
}

// transcript is what a rule's Match searches: the text of every message,
// joined with "\n".
func transcript(msgs []Message) string {
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.text()
	}
	return strings.Join(texts, "\n")
}

// lastText is what a rule's Last searches: the text of the last message, or
// "".
func lastText(msgs []Message) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].text()
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

// input is a tool call's arguments as compact JSON, so that rules match
// them whatever spacing the client used. Arguments that are not JSON are
// kept as a JSON string.
func input(args []byte) json.RawMessage {
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		quoted, _ := json.Marshal(string(args)) // a string always encodes
		return quoted
	}
	return compact.Bytes()
}

// usage is the token accounting of one reply. Counts are deterministic:
// characters (runes) divided by 4, rounded up. The prompt is the text of
// every recorded message, counted message by message; the completion is the
// reply's text and its tool call's name and input.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageFor(msgs []Message, a answer) usage {
	prompt := 0
	for _, m := range msgs {
		prompt += utf8.RuneCountInString(m.text())
	}
	completion := utf8.RuneCountInString(a.Text)
	if a.Call != nil {
		completion += utf8.RuneCountInString(a.Call.Name) + utf8.RuneCount(a.Call.Input)
	}
	u := usage{PromptTokens: tokens(prompt), CompletionTokens: tokens(completion)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func tokens(chars int) int { return (chars + 3) / 4 }
