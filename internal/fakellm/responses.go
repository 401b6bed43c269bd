package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// responsesAPI is the OpenAI Responses API, which Codex speaks: POST
// /v1/responses, answered with server-sent events when the request streams
// and one JSON response otherwise.
type responsesAPI struct{}

func (responsesAPI) name() string { return "responses" }

func (responsesAPI) path() string { return "/v1/responses" }

func (responsesAPI) credential(h http.Header) (string, bool, bool) { return bearer(h) }

func (responsesAPI) unauthorized(key string, sent bool) string { return openAIUnauthorized(key, sent) }

func (responsesAPI) writeError(w http.ResponseWriter, status int, message string) {
	writeOpenAIError(w, status, message)
}

type responsesRequest struct {
	Model  string          `json:"model"`
	Input  json.RawMessage `json:"input"` // a string or an array of items
	Stream bool            `json:"stream"`
}

// responsesItem is an input item: a message, a function_call the model made
// earlier, or the function_call_output holding what the call returned; other
// types (reasoning, ...) carry nothing rules see.
type responsesItem struct {
	Type      string          `json:"type"` // "" for a message given by role alone
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or an array of parts
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"` // a string or an array of parts
}

// decode reads a Responses request, leaving out the system prompt:
// "instructions" and messages with role "system" or "developer", where Codex
// puts its own.
func (responsesAPI) decode(body []byte) (request, error) {
	var wire responsesRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		return request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	req := request{Model: wire.Model, Stream: wire.Stream}
	var s string
	if err := json.Unmarshal(wire.Input, &s); err == nil {
		req.Messages = []Message{{Role: "user", Content: s}}
		return req, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(wire.Input, &items); err != nil {
		return request{}, fmt.Errorf("input: want a string or an array of items")
	}
	for _, it := range items {
		m, ok, err := it.message()
		if err != nil {
			return request{}, err
		}
		if ok {
			req.Messages = append(req.Messages, m)
		}
	}
	return req, nil
}

// message is the item as a Message, or false for an item rules do not see.
func (it responsesItem) message() (Message, bool, error) {
	switch {
	case it.Type == "function_call":
		call := ToolCall{ID: it.CallID, Name: it.Name, Input: input([]byte(it.Arguments))}
		return Message{Role: "assistant", Calls: []ToolCall{call}}, true, nil
	case it.Type == "function_call_output":
		out, err := contentText(it.Output)
		if err != nil {
			return Message{}, false, fmt.Errorf("function_call_output output: %w", err)
		}
		return Message{Role: "tool", Results: []ToolResult{{ID: it.CallID, Content: out}}}, true, nil
	case it.Type != "message" && it.Type != "", it.Role == "system", it.Role == "developer":
		return Message{}, false, nil
	}
	content, err := contentText(it.Content)
	if err != nil {
		return Message{}, false, fmt.Errorf("message content: %w", err)
	}
	return Message{Role: it.Role, Content: content}, true, nil
}

// responseObject is a response: in a stream, as created (in progress, no
// output) and as completed; otherwise the JSON answer.
type responseObject struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"` // "response"
	CreatedAt int64           `json:"created_at"`
	Status    string          `json:"status"`
	Model     string          `json:"model"`
	Output    []any           `json:"output"` // messageItem and functionCallItem
	Usage     *responsesUsage `json:"usage"`
}

// responsesUsage carries the details objects Codex reads.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"` // "message"
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"` // "output_text"
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"` // "function_call"
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON, as a string
}

func (responsesAPI) writeAnswer(w http.ResponseWriter, seq int, req request, a answer) {
	u := &responsesUsage{InputTokens: a.Usage.PromptTokens, OutputTokens: a.Usage.CompletionTokens, TotalTokens: a.Usage.TotalTokens}
	resp := responseObject{
		ID: fmt.Sprintf("resp_fake_%d", seq), Object: "response", CreatedAt: created,
		Status: "completed", Model: req.Model, Output: []any{}, Usage: u,
	}
	if a.showsText() {
		text := outputText{Type: "output_text", Text: a.Text, Annotations: []any{}}
		resp.Output = append(resp.Output, messageItem{
			ID: fmt.Sprintf("msg_fake_%d", seq), Type: "message", Status: "completed", Role: "assistant",
			Content: []outputText{text},
		})
	}
	if a.Call != nil {
		resp.Output = append(resp.Output, functionCallItem{
			ID: fmt.Sprintf("fc_fake_%d", seq), Type: "function_call", Status: "completed",
			CallID: a.Call.ID, Name: a.Call.Name, Arguments: string(a.Call.Input),
		})
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s := &responsesStream{ev: startEvents(w)}
	s.write(resp)
}

// responsesStream numbers the events of one streamed response.
type responsesStream struct {
	ev  events
	seq int
}

func (s *responsesStream) send(name string, fields map[string]any) {
	fields["sequence_number"] = s.seq
	s.seq++
	s.ev.send(name, fields)
}

// write streams resp as the Responses API does: response.created, each
// output item as added, its text or arguments as one delta and done, the
// item done, and response.completed with the usage.
func (s *responsesStream) write(resp responseObject) {
	begun := resp
	begun.Status, begun.Output, begun.Usage = "in_progress", []any{}, nil
	s.send("response.created", map[string]any{"response": begun})
	s.send("response.in_progress", map[string]any{"response": begun})
	for i, item := range resp.Output {
		switch item := item.(type) {
		case messageItem:
			s.writeMessage(i, item)
		case functionCallItem:
			s.writeFunctionCall(i, item)
		}
	}
	s.send("response.completed", map[string]any{"response": resp})
}

func (s *responsesStream) writeMessage(i int, item messageItem) {
	text := item.Content[0]
	begun := item
	begun.Status, begun.Content = "in_progress", []outputText{}
	with := func(k string, v any) map[string]any {
		return map[string]any{"item_id": item.ID, "output_index": i, "content_index": 0, k: v}
	}
	s.send("response.output_item.added", map[string]any{"output_index": i, "item": begun})
	s.send("response.content_part.added", with("part", outputText{Type: "output_text", Text: "", Annotations: []any{}}))
	s.send("response.output_text.delta", with("delta", text.Text))
	s.send("response.output_text.done", with("text", text.Text))
	s.send("response.content_part.done", with("part", text))
	s.send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}

func (s *responsesStream) writeFunctionCall(i int, item functionCallItem) {
	begun := item
	begun.Status, begun.Arguments = "in_progress", ""
	s.send("response.output_item.added", map[string]any{"output_index": i, "item": begun})
	s.send("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": i, "delta": item.Arguments})
	s.send("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": i, "arguments": item.Arguments})
	s.send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}
