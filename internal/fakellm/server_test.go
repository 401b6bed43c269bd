package fakellm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func start(t *testing.T, rules []Rule) *Server {
	t.Helper()
	s, err := Start(rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// reply is what a test client got back.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) content(t *testing.T) string {
	t.Helper()
	var c completion
	if err := json.Unmarshal([]byte(r.body), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("not a completion (%v): %s", err, r.body)
	}
	return c.Choices[0].Message.Content
}

func (r reply) apiError(t *testing.T) apiError {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatalf("not an error body (%v): %s", err, r.body)
	}
	return e.Error
}

// send makes one request with headers given as alternating name, value; it
// may run on any goroutine.
func send(ctx context.Context, method, url, body string, header ...string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(data)}, nil
}

// event is one server-sent event of a streamed reply.
type event struct {
	name string
	data json.RawMessage
}

// events parses the body as server-sent events, failing t unless it is a
// stream and every event has JSON data whose "type" is the event's name.
func (r reply) events(t *testing.T) []event {
	t.Helper()
	if ct := r.header.Get("Content-Type"); r.status != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("not a stream (status %d, Content-Type %q): %s", r.status, ct, r.body)
	}
	var out []event
	for _, chunk := range strings.Split(strings.TrimSuffix(r.body, "\n\n"), "\n\n") {
		var e event
		for _, line := range strings.Split(chunk, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				e.name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.data = json.RawMessage(v)
			}
		}
		var typed struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(e.data, &typed); err != nil || typed.Type != e.name {
			t.Fatalf("event %q has data %s, want JSON of that type", e.name, e.data)
		}
		out = append(out, e)
	}
	return out
}

func names(events []event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

// chat posts a chat-completions request for model with messages given as
// alternating role, content.
func chat(t *testing.T, s *Server, auth, model string, roleContent ...string) reply {
	t.Helper()
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var msgs []msg
	for i := 0; i+1 < len(roleContent); i += 2 {
		msgs = append(msgs, msg{roleContent[i], roleContent[i+1]})
	}
	body, err := json.Marshal(map[string]any{"model": model, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	if auth != "" {
		header = []string{"Authorization", auth}
	}
	r, err := send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", string(body), header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRuleMatchesBySubstringAndModel(t *testing.T) {
	s := start(t, []Rule{
		{Match: "weather", Model: "small", Reply: "small weather"},
		{Match: "weather", Reply: "any weather"},
		{Match: "be brief\nhello", Reply: "joined"},
		{Match: "", Reply: "fallback"},
	})
	for _, tc := range []struct {
		model, system, user, want string
		rule                      int
	}{
		{"small", "", "the weather today?", "small weather", 0},
		{"large", "", "the weather today?", "any weather", 1},
		{"small", "be brief", "hello there", "joined", 2},
		{"small", "", "hello", "fallback", 3},
	} {
		r := chat(t, s, "", tc.model, "system", tc.system, "user", tc.user)
		if r.status != http.StatusOK || r.content(t) != tc.want {
			t.Errorf("%s %q: got %d %s, want %q", tc.model, tc.user, r.status, r.body, tc.want)
		}
		reqs := s.Requests()
		if got := reqs[len(reqs)-1].Rule; got != tc.rule {
			t.Errorf("%s %q: recorded rule %d, want %d", tc.model, tc.user, got, tc.rule)
		}
	}
}

func TestTimesExhaustsToNextRule(t *testing.T) {
	s := start(t, []Rule{
		{Match: "", Times: 2, Status: 429, Message: "slow down", RetryAfter: "1"},
		{Match: "", Reply: "ok"},
	})
	for i := range 2 {
		r := chat(t, s, "", "m", "user", "hi")
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("request %d: status %d, want 429: %s", i, r.status, r.body)
		}
		if got := r.header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After %q, want %q", got, "1")
		}
		want := apiError{Message: "slow down", Type: "requests", Code: ptr("rate_limit_exceeded")}
		if got := r.apiError(t); !reflect.DeepEqual(got, want) {
			t.Errorf("error %+v, want %+v", got, want)
		}
	}
	r := chat(t, s, "", "m", "user", "hi")
	if r.status != http.StatusOK || r.content(t) != "ok" || r.header.Get("Retry-After") != "" {
		t.Errorf("third request: %d %v %s, want 200 ok without Retry-After", r.status, r.header, r.body)
	}
}

func TestStatusWithoutMessageUsesStatusText(t *testing.T) {
	s := start(t, []Rule{{Match: "", Status: 503}})
	r := chat(t, s, "", "m", "user", "hi")
	want := apiError{Message: "Service Unavailable", Type: "server_error"}
	if got := r.apiError(t); r.status != 503 || !reflect.DeepEqual(got, want) {
		t.Errorf("got %d %+v, want 503 %+v", r.status, got, want)
	}
}

func TestDelayWaitsThenAnswers(t *testing.T) {
	s := start(t, []Rule{{Match: "", Reply: "late", Delay: 50 * time.Millisecond}})
	begin := time.Now()
	r := chat(t, s, "", "m", "user", "hi")
	if elapsed := time.Since(begin); elapsed < 50*time.Millisecond {
		t.Errorf("answered after %v, want at least 50ms", elapsed)
	}
	if r.content(t) != "late" {
		t.Errorf("reply %s, want late", r.body)
	}
}

func TestDelayStopsWhenClientGoesAway(t *testing.T) {
	s := start(t, []Rule{{Match: "", Reply: "never", Delay: time.Minute}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if _, err := send(ctx, http.MethodPost, s.URL()+"/chat/completions", body); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Requests()[0].Status != StatusClientGone {
		if time.Now().After(deadline) {
			t.Fatalf("handler still waiting 5s after the client left: %+v", s.Requests())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.ByStatus[StatusClientGone] != 1 || st.CompletionTokens != 0 {
		t.Errorf("stats %+v, want one %d and no tokens", st, StatusClientGone)
	}
}

func TestCloseCancelsDelay(t *testing.T) {
	s := start(t, []Rule{{Match: "", Delay: time.Minute}})
	body := `{"model":"m","messages":[]}`
	go send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", body) // fails at Close, as it should
	for len(s.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waiting for a delayed handler after 5s")
	}
}

func TestEchoRepliesWithLastUserMessage(t *testing.T) {
	s := start(t, []Rule{{Match: "", Echo: true}})
	r := chat(t, s, "", "m", "system", "sys", "user", "first", "assistant", "ack", "user", "second <&>")
	if got := r.content(t); got != "second <&>" {
		t.Errorf("echo %q, want %q", got, "second <&>")
	}
	if !strings.Contains(r.body, `"second <&>"`) {
		t.Errorf("body escapes HTML: %s", r.body)
	}
}

func TestContentPartsAreJoined(t *testing.T) {
	s := start(t, []Rule{{Match: "one\ntwo", Echo: true}})
	body := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}]}`
	r, err := send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.content(t); got != "one\ntwo" {
		t.Errorf("content %q, want parts joined", got)
	}
}

func TestReplyFileIsRelativeToRulesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fixtures")
	writeFile(t, filepath.Join(dir, "answer.md"), "# Answer\n")
	writeFile(t, filepath.Join(dir, "rules.json"), `[{"match": "", "reply_file": "answer.md"}]`)
	rules, err := LoadRules(filepath.Join(dir, "rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, rules)
	if got := chat(t, s, "", "m", "user", "hi").content(t); got != "# Answer\n" {
		t.Errorf("reply %q, want the file's bytes", got)
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	writeFile(t, path, `[
		{"match": "a", "last": "done", "model": "m", "api": "anthropic", "reply": "x", "tool": "Write", "input": {"file_path": "/w/a"},
		 "status": 200, "retry_after": "2", "delay": "1500ms", "times": 3},
		{"match": "", "echo": true}
	]`)
	rules, err := LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Rule{
		Match: "a", Last: "done", Model: "m", API: "anthropic", Reply: "x", Tool: "Write", Input: json.RawMessage(`{"file_path": "/w/a"}`),
		Status: 200, RetryAfter: "2", Delay: 1500 * time.Millisecond, Times: 3,
	}
	if len(rules) != 2 || !reflect.DeepEqual(rules[0], want) || !rules[1].Echo {
		t.Errorf("rules %+v, want %+v and an echo rule", rules, want)
	}
	data, err := json.Marshal(rules[0])
	if err != nil {
		t.Fatal(err)
	}
	var back Rule
	want.Input = json.RawMessage(`{"file_path":"/w/a"}`) // encoding/json compacts a RawMessage
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("round trip %s: %+v %v", data, back, err)
	}
}

func TestLoadRulesErrorsNameFileAndRule(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"not an array", `{"match": ""}`, "want a JSON array"},
		{"unknown field", `[{"match": ""}, {"mach": "x"}]`, `rule 1: json: unknown field "mach"`},
		{"bad delay", `[{"delay": "soon"}]`, "rule 0: delay: time: invalid duration"},
		{"two replies", `[{"reply": "a", "echo": true}]`, "rule 0: set at most one of"},
		{"bad status", `[{"status": 302}]`, "rule 0: status 302"},
		{"message without status", `[{"message": "oops"}]`, "rule 0: message needs a status"},
		{"negative times", `[{"times": -1}]`, "rule 0: times -1"},
		{"missing reply file", `[{"reply_file": "gone.txt"}]`, "rule 0: reply_file:"},
		{"unknown api", `[{"api": "gemini"}]`, `rule 0: api "gemini": want chat, anthropic or responses`},
		{"input without tool", `[{"input": {"a": 1}}]`, "rule 0: input needs a tool"},
		{"input not an object", `[{"tool": "Bash", "input": ["ls"]}]`, `rule 0: input ["ls"]: want a JSON object`},
		{"tool with status", `[{"tool": "Bash", "status": 500}]`, "rule 0: set a tool or an error status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rules.json")
			writeFile(t, path, tc.json)
			_, err := LoadRules(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q and containing %q", err, path, tc.want)
			}
		})
	}
	if _, err := LoadRules(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}

func TestStartRejectsInvalidRules(t *testing.T) {
	if _, err := Start([]Rule{{Match: ""}, {Status: 99}}, nil); err == nil || !strings.Contains(err.Error(), "rule 1") {
		t.Errorf("error %v, want one naming rule 1", err)
	}
}

func TestNoMatchingRuleIs500(t *testing.T) {
	s := start(t, []Rule{{Match: "never said"}})
	r := chat(t, s, "", "m", "user", "hi")
	if got := r.apiError(t); r.status != 500 || got.Message != "fakellm: no rule matches" {
		t.Errorf("got %d %+v, want 500 no rule matches", r.status, got)
	}
	if got := s.Requests()[0]; got.Rule != -1 || got.Status != 500 {
		t.Errorf("recorded %+v, want rule -1 status 500", got)
	}
}

func TestOtherRoutesAre404(t *testing.T) {
	s := start(t, []Rule{{Match: ""}})
	base := strings.TrimSuffix(s.URL(), "/v1")
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/v1/models"},
		{http.MethodPost, "/v1/completions"},
		{http.MethodGet, "/v1/chat/completions"},
		{http.MethodPost, "/chat/completions"},
	} {
		r, err := send(context.Background(), tc.method, base+tc.path, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.apiError(t); r.status != 404 || got.Code == nil || *got.Code != "unknown_url" {
			t.Errorf("%s %s: %d %s, want 404 unknown_url", tc.method, tc.path, r.status, r.body)
		}
	}
	if st := s.Stats(); st.Requests != 4 || st.ByStatus[404] != 4 {
		t.Errorf("stats %+v, want 4 requests answered 404", st)
	}
}

func TestBadRequestsAre400(t *testing.T) {
	s := start(t, []Rule{{Match: ""}})
	for _, body := range []string{`{"model": "m", "messages": [`, `{"model":"m","messages":[],"stream":true}`} {
		r, err := send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", body)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.apiError(t); r.status != 400 || got.Type != "invalid_request_error" || !strings.HasPrefix(got.Message, "fakellm: ") {
			t.Errorf("%s: %d %s, want 400 invalid_request_error", body, r.status, r.body)
		}
	}
}

func TestAuthWithKey(t *testing.T) {
	s := start(t, []Rule{{Match: "", Reply: "ok"}})
	s.SetKey("sk-right")
	for _, tc := range []struct {
		header, auth string
		status       int
		message      string
	}{
		{"Bearer sk-right", "ok", 200, ""},
		{"", "none", 401, "You didn't provide an API key."},
		{"Bearer sk-leaked-secret", "wrong", 401, "Incorrect API key provided: sk-leaked-secret"},
		{"sk-right", "wrong", 401, "Incorrect API key provided: sk-right"},
	} {
		r := chat(t, s, tc.header, "m", "user", "hi")
		if r.status != tc.status {
			t.Errorf("%q: status %d, want %d", tc.header, r.status, tc.status)
		}
		if tc.status == 401 {
			want := apiError{Message: tc.message, Type: "invalid_request_error", Code: ptr("invalid_api_key")}
			if got := r.apiError(t); !reflect.DeepEqual(got, want) {
				t.Errorf("%q: error %+v, want %+v", tc.header, got, want)
			}
		}
		reqs := s.Requests()
		if got := reqs[len(reqs)-1]; got.Auth != tc.auth || got.Model != "m" || len(got.Messages) != 1 {
			t.Errorf("%q: recorded %+v, want auth %q with the request", tc.header, got, tc.auth)
		}
	}
}

func TestAuthWithoutKeyAcceptsAnything(t *testing.T) {
	s := start(t, []Rule{{Match: "", Reply: "ok"}})
	for header, want := range map[string]string{"": "none", "Bearer whatever": "ok"} {
		if r := chat(t, s, header, "m", "user", "hi"); r.status != 200 {
			t.Errorf("%q: status %d, want 200", header, r.status)
		}
		reqs := s.Requests()
		if got := reqs[len(reqs)-1].Auth; got != want {
			t.Errorf("%q: auth %q, want %q", header, got, want)
		}
	}
}

func TestCompletionIsDeterministic(t *testing.T) {
	s := start(t, []Rule{{Match: "", Reply: "héllo"}})
	// Contents "abcde" and "xyz" are 8 characters: 2 prompt tokens; the reply
	// is 5 characters (6 bytes): 2 completion tokens.
	r := chat(t, s, "", "gpt-test", "system", "abcde", "user", "xyz")
	want := `{"id":"fake-1","object":"chat.completion","created":1764417600,"model":"gpt-test",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"héllo"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}` + "\n"
	if r.body != want {
		t.Errorf("body\n%s\nwant\n%s", r.body, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	chat(t, s, "", "gpt-test", "user", "123456789") // 9 characters: 3 tokens
	st := s.Stats()
	if st.PromptTokens != 5 || st.CompletionTokens != 4 || st.Requests != 2 || st.ByStatus[200] != 2 {
		t.Errorf("stats %+v, want 2 requests, 5 prompt and 4 completion tokens", st)
	}
}

func TestRequestsAreRecordedInOrderAsCopies(t *testing.T) {
	s := start(t, []Rule{{Match: "one", Reply: "1"}})
	chat(t, s, "", "a", "user", "one")
	chat(t, s, "", "b", "user", "two")
	reqs := s.Requests()
	want := []Recorded{
		{API: "chat", Model: "a", Messages: []Message{{Role: "user", Content: "one"}}, Auth: "none", Status: 200, Rule: 0},
		{API: "chat", Model: "b", Messages: []Message{{Role: "user", Content: "two"}}, Auth: "none", Status: 500, Rule: -1},
	}
	if !reflect.DeepEqual(reqs, want) {
		t.Fatalf("recorded %+v, want %+v", reqs, want)
	}
	reqs[0].Messages[0].Content = "changed"
	if got := s.Requests()[0].Messages[0].Content; got != "one" {
		t.Errorf("Requests shares memory with the server: %q", got)
	}
}

func TestConcurrentRequestsShareTimes(t *testing.T) {
	s := start(t, []Rule{{Match: "", Times: 5, Reply: "first"}, {Match: "", Reply: "rest"}})
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	replies := make([]reply, 20)
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() {
			replies[i], errs[i] = send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", body)
		})
	}
	wg.Wait()
	got := map[string]int{}
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got[r.content(t)]++
	}
	if got["first"] != 5 || got["rest"] != 15 {
		t.Errorf("replies %v, want 5 first and 15 rest", got)
	}
	if st := s.Stats(); st.Requests != 20 || st.ByStatus[200] != 20 {
		t.Errorf("stats %+v", st)
	}
}

func TestChatToolCall(t *testing.T) {
	s := start(t, []Rule{
		{Last: "a.txt", Reply: "listed"},
		{Match: "list", API: "chat", Tool: "shell", Input: json.RawMessage(`{ "cmd": "ls" }`)},
	})
	r := chat(t, s, "", "m", "user", "list the files")
	var c struct {
		Choices []struct {
			Message      replyMessage `json:"message"`
			FinishReason string       `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(r.body), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("not a completion (%v): %s", err, r.body)
	}
	calls := c.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_fake_1" || calls[0].Type != "function" ||
		calls[0].Function.Name != "shell" || calls[0].Function.Arguments != `{"cmd":"ls"}` || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("reply %s, want one shell call with compact arguments and finish_reason tool_calls", r.body)
	}

	body := `{"model": "m", "messages": [
		{"role": "user", "content": "list the files"},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "call_fake_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}}]},
		{"role": "tool", "tool_call_id": "call_fake_1", "content": "a.txt"}]}`
	r, err := send(context.Background(), http.MethodPost, s.URL()+"/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.content(t); got != "listed" {
		t.Errorf("reply to the tool result %q, want listed", got)
	}
	want := []Message{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", Calls: []ToolCall{{ID: "call_fake_1", Name: "shell", Input: json.RawMessage(`{"cmd":"ls"}`)}}},
		{Role: "tool", Results: []ToolResult{{ID: "call_fake_1", Content: "a.txt"}}},
	}
	if got := s.Requests()[1].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

func TestAPIRestrictsRule(t *testing.T) {
	s := start(t, []Rule{
		{API: "anthropic", Reply: "from anthropic"},
		{API: "responses", Reply: "from responses"},
		{Reply: "from chat"},
	})
	if got := chat(t, s, "", "m", "user", "hi").content(t); got != "from chat" {
		t.Errorf("chat got %q", got)
	}
	if got := anthropicReply(t, messages(t, s, `{"model":"c","messages":[{"role":"user","content":"hi"}]}`)); got.text() != "from anthropic" {
		t.Errorf("anthropic got %+v", got)
	}
	if got := responseReply(t, responses(t, s, `{"model":"g","input":"hi"}`)); got.text() != "from responses" {
		t.Errorf("responses got %+v", got)
	}
	var apis []string
	for _, r := range s.Requests() {
		apis = append(apis, r.API)
	}
	if want := []string{"chat", "anthropic", "responses"}; !reflect.DeepEqual(apis, want) {
		t.Errorf("recorded APIs %v, want %v", apis, want)
	}
}

func TestStatsSumOverProtocols(t *testing.T) {
	s := start(t, []Rule{{Reply: "12345678"}}) // 2 completion tokens
	chat(t, s, "", "m", "user", "abcd")        // 1 prompt token
	messages(t, s, `{"model":"c","stream":true,"messages":[{"role":"user","content":"abcdefgh"}]}`)
	responses(t, s, `{"model":"g","stream":true,"input":[{"role":"user","content":"abcdefghijkl"}]}`)
	st := s.Stats()
	if st.Requests != 3 || st.ByStatus[200] != 3 || st.PromptTokens != 1+2+3 || st.CompletionTokens != 3*2 {
		t.Errorf("stats %+v, want 3 answered, 6 prompt and 6 completion tokens", st)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ptr(s string) *string { return &s }
