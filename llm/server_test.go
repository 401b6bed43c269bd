package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is an OpenAI-compatible POST /v1/chat/completions endpoint
// whose replies are scripted by request number.
type fakeServer struct {
	*httptest.Server
	calls atomic.Int64

	mu     sync.Mutex
	bodies []chatBody // every request body, in arrival order
	auths  []string   // every Authorization header, in arrival order
}

// chatBody is the part of a request body the tests check.
type chatBody struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Temperature         *float64  `json:"temperature"`
	MaxTokens           int       `json:"max_tokens"`
	MaxCompletionTokens int       `json:"max_completion_tokens"`
}

// newFakeServer starts a server calling reply for request n (1-based) after
// checking the method, path and body. It is closed when the test ends.
func newFakeServer(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	s := &fakeServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.calls.Add(1))
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("request %d: got %s %s, want POST /v1/chat/completions", n, r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		var body chatBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request %d: decode body: %v", n, err)
		}
		if body.Model == "" || len(body.Messages) == 0 {
			t.Errorf("request %d: body without model or messages: %+v", n, body)
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		reply(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) body(i int) chatBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

func (s *fakeServer) auth(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths[i]
}

// writeReply writes a successful completion with the given usage.
func writeReply(w http.ResponseWriter, text string, prompt, completion int) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"served-model",
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		text, prompt, completion, prompt+completion)
}

// writeError writes an OpenAI-style error object with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "test_error"}})
}

const testKey = "sk-test-0123456789abcdef"

// newTestClient returns a client of s with fast retries; edit adjusts the
// config before New.
func newTestClient(t *testing.T, s *fakeServer, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		BaseURL:    s.URL + "/v1",
		Model:      "test-model",
		Key:        testKey,
		KeyEnv:     "TEST_API_KEY",
		Timeout:    5 * time.Second,
		MaxRetries: 4,
		RetryBase:  2 * time.Millisecond,
		MaxBackoff: 20 * time.Millisecond,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// hello is a one-message request.
var hello = Request{Messages: []Message{{Role: RoleUser, Content: "hello"}}}
