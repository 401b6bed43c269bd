package llm

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCompleteReturnsTextUsageAndCost(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		writeReply(w, "hi there", 1200, 300)
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.Price = Price{Input: 2.5, Output: 10} })
	req := Request{Messages: []Message{{Role: RoleSystem, Content: "be brief"}, {Role: RoleUser, Content: "hello"}}}

	resp, err := c.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "hi there" || resp.Model != "served-model" {
		t.Errorf("got text %q model %q, want %q %q", resp.Text, resp.Model, "hi there", "served-model")
	}
	want := Usage{Requests: 1, PromptTokens: 1200, CompletionTokens: 300, Cost: resp.Usage.Cost}
	if resp.Usage != want || math.Abs(resp.Usage.Cost-0.006) > 1e-12 {
		t.Errorf("usage %+v, want %+v costing $0.006", resp.Usage, want)
	}
	if resp.Usage.Tokens() != 1500 {
		t.Errorf("Tokens() = %d, want 1500", resp.Usage.Tokens())
	}
	body := s.body(0)
	if body.Model != "test-model" || len(body.Messages) != 2 || body.Messages[0] != req.Messages[0] || body.Messages[1] != req.Messages[1] {
		t.Errorf("server got body %+v, want model %q and messages %+v", body, "test-model", req.Messages)
	}
	if got := s.auth(0); got != "Bearer "+testKey {
		t.Errorf("Authorization %q, want the bearer key", got)
	}
}

func TestCompleteSendsTemperatureEvenWhenZero(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { writeReply(w, "ok", 1, 1) })
	c := newTestClient(t, s, nil)
	for i, temp := range []float32{0, 0.7} {
		req := hello
		req.Temperature = temp
		if _, err := c.Complete(t.Context(), req); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		got := s.body(i).Temperature
		if got == nil || math.Abs(*got-float64(temp)) > 1e-6 {
			t.Errorf("temperature %v: server got %v", temp, got)
		}
	}
}

func TestCompleteSendsMaxTokensTheWayTheModelAccepts(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { writeReply(w, "ok", 1, 1) })
	for i, model := range []string{"llama-3", "gpt-5"} {
		c := newTestClient(t, s, func(cfg *Config) { cfg.Model, cfg.MaxTokens = model, 100 })
		if _, err := c.Complete(t.Context(), hello); err != nil {
			t.Fatalf("%s: Complete: %v", model, err)
		}
		got := s.body(i)
		if model == "gpt-5" && (got.MaxCompletionTokens != 100 || got.MaxTokens != 0) ||
			model != "gpt-5" && (got.MaxTokens != 100 || got.MaxCompletionTokens != 0) {
			t.Errorf("%s: max_tokens %d, max_completion_tokens %d", model, got.MaxTokens, got.MaxCompletionTokens)
		}
	}
}

func TestCompleteWithoutKeySendsNoAuthorization(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { writeReply(w, "ok", 1, 1) })
	c := newTestClient(t, s, func(cfg *Config) { cfg.Key, cfg.KeyEnv = "", "" })
	if _, err := c.Complete(t.Context(), hello); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := s.auth(0); got != "" {
		t.Errorf("Authorization %q, want none", got)
	}
}

func TestCompleteRejectsEmptyRequest(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { writeReply(w, "ok", 1, 1) })
	c := newTestClient(t, s, nil)
	_, err := c.Complete(t.Context(), Request{})
	if !errors.Is(err, ErrNoMessages) {
		t.Errorf("err = %v, want ErrNoMessages", err)
	}
	if s.calls.Load() != 0 {
		t.Errorf("%d requests, want 0", s.calls.Load())
	}
}

func TestUsageTotalsAreExact(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1: // call 1
			writeReply(w, "a", 10, 5)
		case 2: // call 2, retried
			writeError(w, http.StatusInternalServerError, "boom")
		case 3:
			writeReply(w, "b", 20, 7)
		default: // call 3: rate limited until it gives up
			writeError(w, http.StatusTooManyRequests, "slow down")
		}
	})
	price := Price{Input: 1, Output: 4}
	c := newTestClient(t, s, func(cfg *Config) { cfg.Price, cfg.MaxRetries = price, 1 })

	var sum Usage
	for call, want := range []Usage{
		{Requests: 1, PromptTokens: 10, CompletionTokens: 5, Cost: price.cost(10, 5)},
		{Requests: 2, Retries: 1, PromptTokens: 20, CompletionTokens: 7, Cost: price.cost(20, 7)},
		{Requests: 2, Retries: 1},
	} {
		resp, err := c.Complete(t.Context(), hello)
		if (err != nil) != (call == 2) {
			t.Fatalf("call %d: err = %v", call+1, err)
		}
		if resp.Usage != want {
			t.Errorf("call %d: usage %+v, want %+v", call+1, resp.Usage, want)
		}
		sum.Add(want)
	}
	if got := c.Usage(); got != sum {
		t.Errorf("client usage %+v, want %+v", got, sum)
	}
	if sum.Requests != 5 || sum.Retries != 2 || sum.Tokens() != 42 || s.calls.Load() != 5 {
		t.Errorf("totals %+v over %d requests, want 5 requests, 2 retries, 42 tokens", sum, s.calls.Load())
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Model: "m"},
		{BaseURL: "api.openai.com/v1", Model: "m"},
		{BaseURL: "ftp://host/v1", Model: "m"},
		{BaseURL: "https:///v1", Model: "m"},
		{BaseURL: "https://host/v1?x=1", Model: "m"},
		{BaseURL: "https://host/v1"},
		{BaseURL: "https://host/v1", Model: "m", Timeout: -time.Second},
		{BaseURL: "https://host/v1", Model: "m", MaxTokens: -1},
		{BaseURL: "https://user:" + testKey + "@host/v1", Key: testKey},
	} {
		_, err := New(cfg, nil)
		if err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
			continue
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("New error %q contains the key", err)
		}
	}
}

func TestConfigBlanksKeyAndAppliesDefaults(t *testing.T) {
	c, err := New(Config{BaseURL: "http://localhost:8080/v1", Model: "m", Key: testKey, MaxRetries: -3}, NewLimiter(0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	got := c.Config()
	want := Config{BaseURL: "http://localhost:8080/v1", Model: "m", Timeout: 2 * time.Minute,
		RetryBase: time.Second, MaxBackoff: time.Minute}
	if got != want {
		t.Errorf("Config() = %+v, want %+v", got, want)
	}
}

// Reasoning models accept only temperature 1; a configured temperature
// overrides every request.
func TestTemperatureForReasoningModelsAndOverride(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { writeReply(w, "ok", 1, 1) })
	gpt5 := newTestClient(t, s, func(cfg *Config) { cfg.Model = "gpt-5" })
	if _, err := gpt5.Complete(t.Context(), hello); err != nil {
		t.Fatalf("gpt-5: %v", err)
	}
	if got := s.body(0).Temperature; got == nil || *got != 1 {
		t.Errorf("gpt-5 temperature = %v, want 1", got)
	}
	set := float32(0.3)
	fixed := newTestClient(t, s, func(cfg *Config) { cfg.Temperature = &set })
	if _, err := fixed.Complete(t.Context(), hello); err != nil {
		t.Fatalf("configured: %v", err)
	}
	if got := s.body(1).Temperature; got == nil || math.Abs(*got-0.3) > 1e-6 {
		t.Errorf("configured temperature = %v, want 0.3", got)
	}
}
