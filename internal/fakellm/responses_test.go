package fakellm

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// responses posts a Responses request as Codex does, with headers given as
// alternating name, value.
func responses(t *testing.T, s *Server, body string, header ...string) reply {
	t.Helper()
	r, err := send(context.Background(), http.MethodPost, s.URL()+"/responses", body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// responseItem is an output item as a client reads it.
type responseItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// responseResult is a response as a client puts it together.
type responseResult struct {
	ID     string         `json:"id"`
	Status string         `json:"status"`
	Model  string         `json:"model"`
	Output []responseItem `json:"output"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
	events []string // the events' names, for a stream
	deltas string   // the text of every output_text.delta
}

func (r responseResult) text() string {
	var texts []string
	for _, it := range r.Output {
		for _, c := range it.Content {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "")
}

// responseReply reads a JSON response, or a stream as Codex does: the items
// of output_item.done, and the usage of response.completed. It fails t
// unless the events are numbered from 0.
func responseReply(t *testing.T, r reply) responseResult {
	t.Helper()
	var res responseResult
	if r.header.Get("Content-Type") != "text/event-stream" {
		if err := json.Unmarshal([]byte(r.body), &res); err != nil || r.status != http.StatusOK {
			t.Fatalf("not a response (%d, %v): %s", r.status, err, r.body)
		}
		return res
	}
	evs := r.events(t)
	res.events = names(evs)
	for i, e := range evs {
		var d struct {
			SequenceNumber int            `json:"sequence_number"`
			Response       responseResult `json:"response"`
			Item           responseItem   `json:"item"`
			Delta          string         `json:"delta"`
		}
		if err := json.Unmarshal(e.data, &d); err != nil || d.SequenceNumber != i {
			t.Fatalf("event %d %s (%v): %s", i, e.name, err, e.data)
		}
		switch e.name {
		case "response.output_item.done":
			res.Output = append(res.Output, d.Item)
		case "response.output_text.delta":
			res.deltas += d.Delta
		case "response.completed":
			res.ID, res.Status, res.Model, res.Usage = d.Response.ID, d.Response.Status, d.Response.Model, d.Response.Usage
		}
	}
	return res
}

func TestResponsesStreamsText(t *testing.T) {
	s := start(t, []Rule{
		{Match: "You are Codex", Reply: "matched the system prompt"},
		{API: "responses", Match: "my invoice", Reply: "billing"},
	})
	r := responses(t, s, `{"model": "gpt-5.4", "stream": true, "instructions": "You are Codex",
		"input": [
			{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex"}]},
			{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "my invoice"}]},
			{"type": "reasoning", "summary": []}]}`, "Authorization", "Bearer sk-any")
	res := responseReply(t, r)
	wantEvents := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed",
	}
	if !reflect.DeepEqual(res.events, wantEvents) {
		t.Errorf("events %v, want %v", res.events, wantEvents)
	}
	if res.text() != "billing" || res.deltas != "billing" || res.Status != "completed" || res.Model != "gpt-5.4" {
		t.Errorf("response %+v, want billing from gpt-5.4", res)
	}
	// "my invoice" is 10 characters: 3 tokens; "billing" 2.
	u := res.Usage
	if u == nil || u.InputTokens != 3 || u.OutputTokens != 2 || u.TotalTokens != 5 || u.InputTokensDetails == nil || u.OutputTokensDetails == nil {
		t.Errorf("usage %+v, want 3 + 2 = 5 with the details objects", u)
	}
	want := Recorded{
		API: "responses", Model: "gpt-5.4", Auth: "ok", Status: 200, Rule: 1,
		Messages: []Message{{Role: "user", Content: "my invoice"}},
	}
	if got := s.Requests()[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

func TestResponsesFunctionCall(t *testing.T) {
	input := `{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"}`
	for _, stream := range []bool{false, true} {
		s := start(t, []Rule{{Match: "Failed tasks", Tool: "exec_command", Input: json.RawMessage(input)}})
		body, _ := json.Marshal(map[string]any{"model": "g", "stream": stream, "input": "Failed tasks: 1"})
		res := responseReply(t, responses(t, s, string(body)))
		want := []responseItem{{
			Type: "function_call", ID: "fc_fake_1", Status: "completed", CallID: "call_fake_1", Name: "exec_command",
			Arguments: `{"cmd":"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"}`,
		}}
		if !reflect.DeepEqual(res.Output, want) {
			t.Errorf("stream %v: output %+v, want only %+v", stream, res.Output, want)
		}
	}
}

func TestResponsesFunctionCallOutputIsLast(t *testing.T) {
	s := start(t, []Rule{
		{Last: "Success. Updated the following files", Match: "exec_command {", Reply: "Subject\n\nBody"},
		{Reply: "not the last"},
	})
	res := responseReply(t, responses(t, s, `{"model": "g", "input": [
		{"role": "user", "content": "edit it"},
		{"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"apply_patch\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "Success. Updated the following files:\nM SKILL.md\n"}]}`))
	if res.text() != "Subject\n\nBody" {
		t.Errorf("reply %q, want the rule matching the call's output", res.text())
	}
	want := []Message{
		{Role: "user", Content: "edit it"},
		{Role: "assistant", Calls: []ToolCall{{ID: "call_1", Name: "exec_command", Input: json.RawMessage(`{"cmd":"apply_patch"}`)}}},
		{Role: "tool", Results: []ToolResult{{ID: "call_1", Content: "Success. Updated the following files:\nM SKILL.md\n"}}},
	}
	if got := s.Requests()[0].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

func TestResponsesErrorsAndAuth(t *testing.T) {
	s := start(t, []Rule{{Match: "busy", Status: 529}, {Match: "slow", Status: 429, RetryAfter: "2"}, {Reply: "ok"}})
	s.SetKey("sk-right")
	for _, tc := range []struct {
		input, header string
		status        int
		want          apiError
	}{
		{"busy", "Bearer sk-right", 529, apiError{Message: "Overloaded", Type: "server_error"}},
		{"slow", "Bearer sk-right", 429, apiError{Message: "Too Many Requests", Type: "requests", Code: ptr("rate_limit_exceeded")}},
		{"hi", "Bearer sk-wrong", 401, apiError{Message: "Incorrect API key provided: sk-wrong", Type: "invalid_request_error", Code: ptr("invalid_api_key")}},
		{"hi", "", 401, apiError{Message: "You didn't provide an API key.", Type: "invalid_request_error", Code: ptr("invalid_api_key")}},
	} {
		var header []string
		if tc.header != "" {
			header = []string{"Authorization", tc.header}
		}
		r := responses(t, s, `{"model":"g","stream":true,"input":"`+tc.input+`"}`, header...)
		if got := r.apiError(t); r.status != tc.status || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: %d %+v, want %d %+v", tc.input, tc.header, r.status, got, tc.status, tc.want)
		}
	}
	if got := responseReply(t, responses(t, s, `{"model":"g","input":"hi"}`, "Authorization", "Bearer sk-right")); got.text() != "ok" {
		t.Errorf("right key: %+v, want ok", got)
	}
}
