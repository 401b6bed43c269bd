package fakellm

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// messages posts an Anthropic Messages request as Claude Code does, to
// /v1/messages?beta=true with an anthropic-version header, and headers given
// as alternating name, value.
func messages(t *testing.T, s *Server, body string, header ...string) reply {
	t.Helper()
	header = append([]string{"Anthropic-Version", "2023-06-01"}, header...)
	r, err := send(context.Background(), http.MethodPost, s.Origin()+"/v1/messages?beta=true", body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// anthropicResult is a reply as a client puts it together, from one JSON
// message or from a stream.
type anthropicResult struct {
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	events []string // the events' names, for a stream
}

func (a anthropicResult) text() string {
	var texts []string
	for _, b := range a.Content {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "")
}

func anthropicReply(t *testing.T, r reply) anthropicResult {
	t.Helper()
	var a anthropicResult
	if r.header.Get("Content-Type") != "text/event-stream" {
		if err := json.Unmarshal([]byte(r.body), &a); err != nil || r.status != http.StatusOK {
			t.Fatalf("not a message (%d, %v): %s", r.status, err, r.body)
		}
		return a
	}
	evs := r.events(t)
	a.events = names(evs)
	for _, e := range evs {
		var d struct {
			Message      anthropicResult `json:"message"`
			Index        int             `json:"index"`
			ContentBlock anthropicBlock  `json:"content_block"`
			Delta        struct {
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(e.data, &d); err != nil {
			t.Fatalf("event %s: %v", e.name, err)
		}
		switch e.name {
		case "message_start":
			a.Model, a.Usage = d.Message.Model, d.Message.Usage
		case "content_block_start":
			a.Content = append(a.Content, d.ContentBlock)
			a.Content[d.Index].Input = nil
		case "content_block_delta":
			a.Content[d.Index].Text += d.Delta.Text
			a.Content[d.Index].Input = append(a.Content[d.Index].Input, d.Delta.PartialJSON...)
		case "message_delta":
			a.StopReason, a.Usage.OutputTokens = d.Delta.StopReason, d.Usage.OutputTokens
		}
	}
	return a
}

func TestAnthropicStreamsText(t *testing.T) {
	s := start(t, []Rule{
		{Match: "You are Claude", Reply: "matched the system prompt"},
		{API: "anthropic", Match: "my invoice", Reply: "billing"},
	})
	r := messages(t, s, `{"model": "claude-test", "stream": true, "max_tokens": 1000,
		"system": [{"type": "text", "text": "You are Claude"}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "which team?"}, {"type": "text", "text": "my invoice"}]},
			{"role": "system", "content": [{"type": "text", "text": "You are Claude, still"}]}]}`, "X-Api-Key", "sk-any")
	a := anthropicReply(t, r)
	wantEvents := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(a.events, wantEvents) {
		t.Errorf("events %v, want %v", a.events, wantEvents)
	}
	// "which team?\nmy invoice" is 22 characters: 6 tokens; "billing" 2.
	if a.text() != "billing" || a.StopReason != "end_turn" || a.Model != "claude-test" || a.Usage.InputTokens != 6 || a.Usage.OutputTokens != 2 {
		t.Errorf("reply %+v, want billing, end_turn, claude-test, 6 and 2 tokens", a)
	}
	want := Recorded{
		API: "anthropic", Model: "claude-test", Auth: "ok", Status: 200, Rule: 1,
		Messages: []Message{{Role: "user", Content: "which team?\nmy invoice"}},
	}
	if got := s.Requests()[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
	if st := s.Stats(); st.PromptTokens != 6 || st.CompletionTokens != 2 {
		t.Errorf("stats %+v, want the usage served", st)
	}
}

func TestAnthropicToolUse(t *testing.T) {
	input := `{"file_path": "/w/SKILL.md", "content": "new\n"}`
	for _, stream := range []bool{false, true} {
		s := start(t, []Rule{{Match: "Failed tasks", Reply: "Editing.", Tool: "Write", Input: json.RawMessage(input)}})
		body, _ := json.Marshal(map[string]any{"model": "c", "stream": stream, "messages": []any{map[string]any{"role": "user", "content": "Failed tasks: 1"}}})
		a := anthropicReply(t, messages(t, s, string(body)))
		want := []anthropicBlock{
			{Type: "text", Text: "Editing."},
			{Type: "tool_use", ID: "call_fake_1", Name: "Write", Input: json.RawMessage(`{"file_path":"/w/SKILL.md","content":"new\n"}`)},
		}
		if !reflect.DeepEqual(a.Content, want) || a.StopReason != "tool_use" {
			t.Errorf("stream %v: content %+v stop %q, want %+v and tool_use", stream, a.Content, a.StopReason, want)
		}
	}
}

func TestAnthropicToolResultIsLast(t *testing.T) {
	s := start(t, []Rule{
		{Last: "3 files", Match: `Bash {"command":"ls"}`, Reply: "done"},
		{Reply: "not the last"},
	})
	a := anthropicReply(t, messages(t, s, `{"model": "c", "messages": [
		{"role": "user", "content": "count the files"},
		{"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "3 files"}]},
		                             {"type": "text", "text": "<system-reminder>keep going</system-reminder>"}]}]}`))
	if a.text() != "done" {
		t.Errorf("reply %q, want the rule matching the tool result", a.text())
	}
	want := []Message{
		{Role: "user", Content: "count the files"},
		{Role: "assistant", Calls: []ToolCall{{ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}},
		{Role: "user", Content: "<system-reminder>keep going</system-reminder>", Results: []ToolResult{{ID: "toolu_1", Content: "3 files", Error: true}}},
	}
	if got := s.Requests()[0].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

// anthropicError is the Messages API's error body.
type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r reply) anthropicError(t *testing.T) anthropicError {
	t.Helper()
	var e anthropicError
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Type != "error" {
		t.Fatalf("not an Anthropic error body (%v): %s", err, r.body)
	}
	return e
}

func TestAnthropicErrors(t *testing.T) {
	s := start(t, []Rule{
		{Match: "a", Status: 529},
		{Match: "b", Status: 429, Message: "slow down"},
		{Match: "c", Status: 500},
		{Match: "d", Status: 403},
	})
	for _, tc := range []struct {
		content, typ, message string
		status                int
	}{
		{"a", "overloaded_error", "Overloaded", 529},
		{"b", "rate_limit_error", "slow down", 429},
		{"c", "api_error", "Internal Server Error", 500},
		{"d", "permission_error", "Forbidden", 403},
		{"e", "api_error", "fakellm: no rule matches", 500},
	} {
		r := messages(t, s, `{"model":"c","stream":true,"messages":[{"role":"user","content":"`+tc.content+`"}]}`)
		if e := r.anthropicError(t); r.status != tc.status || e.Error.Type != tc.typ || e.Error.Message != tc.message {
			t.Errorf("%s: %d %+v, want %d %s %q", tc.content, r.status, e, tc.status, tc.typ, tc.message)
		}
	}
	r := messages(t, s, `{"model":`)
	if e := r.anthropicError(t); r.status != 400 || e.Error.Type != "invalid_request_error" {
		t.Errorf("bad JSON: %d %+v, want 400 invalid_request_error", r.status, e)
	}
	r, err := send(context.Background(), http.MethodPost, s.Origin()+"/v1/messages/batches", `{}`, "Anthropic-Version", "2023-06-01")
	if err != nil {
		t.Fatal(err)
	}
	if e := r.anthropicError(t); r.status != 404 || e.Error.Type != "not_found_error" {
		t.Errorf("unknown route: %d %+v, want 404 not_found_error", r.status, e)
	}
	if got := s.Requests()[len(s.Requests())-1].API; got != "anthropic" {
		t.Errorf("unknown route recorded as %q, want anthropic", got)
	}
}

func TestAnthropicAuth(t *testing.T) {
	s := start(t, []Rule{{Reply: "ok"}})
	s.SetKey("sk-right")
	body := `{"model":"c","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		header       []string
		auth         string
		status       int
		errorMessage string
	}{
		{[]string{"X-Api-Key", "sk-right"}, "ok", 200, ""},
		{[]string{"Authorization", "Bearer sk-right"}, "ok", 200, ""},
		{[]string{"X-Api-Key", "sk-wrong"}, "wrong", 401, "invalid x-api-key: sk-wrong"},
		{nil, "none", 401, "x-api-key header is required"},
	} {
		r := messages(t, s, body, tc.header...)
		if r.status != tc.status {
			t.Errorf("%v: status %d, want %d", tc.header, r.status, tc.status)
		}
		if tc.status == 401 {
			if e := r.anthropicError(t); e.Error.Type != "authentication_error" || e.Error.Message != tc.errorMessage {
				t.Errorf("%v: error %+v, want authentication_error %q", tc.header, e, tc.errorMessage)
			}
		}
		reqs := s.Requests()
		if got := reqs[len(reqs)-1].Auth; got != tc.auth {
			t.Errorf("%v: auth %q, want %q", tc.header, got, tc.auth)
		}
	}
}

func TestAnthropicHello(t *testing.T) {
	s := start(t, []Rule{})
	s.SetKey("sk-right")
	r, err := send(context.Background(), http.MethodHead, s.Origin()+"/api/hello", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK {
		t.Errorf("HEAD /api/hello: %d, want 200 whatever the key", r.status)
	}
	want := Recorded{API: "anthropic", Auth: "none", Status: 200, Rule: -1}
	if got := s.Requests(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}
