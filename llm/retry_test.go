package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRetryAfterIsHonoured(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "rate limit reached")
			return
		}
		writeReply(w, "ok", 1, 1)
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.RetryBase, cfg.MaxBackoff = time.Millisecond, 5*time.Second })

	start := time.Now()
	resp, err := c.Complete(t.Context(), hello)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if elapsed < 950*time.Millisecond {
		t.Errorf("took %v, want at least the 1s Retry-After", elapsed)
	}
	if resp.Usage.Requests != 2 || resp.Usage.Retries != 1 {
		t.Errorf("usage %+v, want 2 requests and 1 retry", resp.Usage)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			writeError(w, http.StatusInternalServerError, "internal")
		case 2:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("<html><body>503 Service Unavailable</body></html>"))
		default:
			writeReply(w, "ok", 1, 1)
		}
	})
	c := newTestClient(t, s, nil)
	resp, err := c.Complete(t.Context(), hello)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "ok" || resp.Usage.Requests != 3 || resp.Usage.Retries != 2 {
		t.Errorf("got %+v, want ok after 3 requests and 2 retries", resp)
	}
}

func TestRateLimitExhaustsRetries(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusTooManyRequests, "Rate limit reached for requests")
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.MaxRetries = 2 })
	resp, err := c.Complete(t.Context(), hello)

	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := s.URL + `/v1: gave up after 3 attempts: rate limited (HTTP 429) for model "test-model": Rate limit reached for requests`
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if e.Status != 429 || !e.Retryable || e.Attempts != 3 {
		t.Errorf("error %+v, want status 429, retryable, 3 attempts", e)
	}
	if s.calls.Load() != 3 || resp.Usage.Requests != 3 || resp.Usage.Retries != 2 {
		t.Errorf("%d requests, usage %+v; want 3 requests and 2 retries", s.calls.Load(), resp.Usage)
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			select { // outlast the client's per-attempt timeout
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		writeReply(w, "late but fine", 1, 1)
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond })
	resp, err := c.Complete(t.Context(), hello)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "late but fine" || resp.Usage.Requests != 2 || resp.Usage.Retries != 1 {
		t.Errorf("got %+v, want a reply after 2 requests and 1 retry", resp)
	}
}

func TestCallerCancelEndsTheCallWithoutRetry(t *testing.T) {
	started := make(chan struct{}, 1)
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	c := newTestClient(t, s, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	resp, err := c.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Retryable {
		t.Errorf("err = %#v, want a non-retryable *Error", err)
	}
	if s.calls.Load() != 1 || resp.Usage.Requests != 1 || resp.Usage.Retries != 0 {
		t.Errorf("%d requests, usage %+v; want 1 request and no retry", s.calls.Load(), resp.Usage)
	}
}

func TestCallerCancelDuringBackoffEndsTheCall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, "overloaded")
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.MaxBackoff = time.Minute })
	_, err := c.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if s.calls.Load() != 1 {
		t.Errorf("%d requests, want 1", s.calls.Load())
	}
}

func TestDeadlineBeforeNextRetryGivesUpAtOnce(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, "overloaded")
	})
	c := newTestClient(t, s, func(cfg *Config) { cfg.MaxBackoff = time.Minute })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := c.Complete(ctx, hello)
	if err == nil || !strings.Contains(err.Error(), "gave up after 1 attempt (the context deadline comes before the next retry") {
		t.Fatalf("err = %v, want giving up before the deadline", err)
	}
	if ctx.Err() != nil || s.calls.Load() != 1 {
		t.Errorf("ctx err %v after %d requests; want the call to end before its deadline after 1 request", ctx.Err(), s.calls.Load())
	}
}

func TestRefusedConnectionIsRetried(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c, err := New(Config{BaseURL: dead.URL + "/v1", Model: "m", MaxRetries: 2, RetryBase: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(t.Context(), hello)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || !strings.Contains(err.Error(), "gave up after 3 attempts") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want giving up after 3 refused attempts", err)
	}
	if resp.Usage.Requests != 3 || resp.Usage.Retries != 2 {
		t.Errorf("usage %+v, want 3 requests and 2 retries", resp.Usage)
	}
}

func TestCutResponseIsRetried(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 2 {
			writeReply(w, "whole", 1, 1)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		if n == 2 { // headers promise more body than is sent
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"choices\":")
			buf.Flush()
		}
	})
	c := newTestClient(t, s, nil)
	resp, err := c.Complete(t.Context(), hello)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "whole" || resp.Usage.Requests != 3 || resp.Usage.Retries != 2 {
		t.Errorf("got %+v, want a reply after 3 requests and 2 retries", resp)
	}
}

func TestReplyWithoutMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		requests   int64
		retryable  bool
		want       string
	}{
		{"no choices", `{"choices":[],"usage":{"prompt_tokens":3}}`, 2, true,
			`gave up after 2 attempts: returned no message for model "test-model"`},
		{"error object in a 200", `{"error":{"message":"upstream overloaded"}}`, 2, true,
			`returned no message for model "test-model": upstream overloaded`},
		{"token limit", `{"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":3}}`, 1, false,
			`it reached the completion-token limit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tc.body))
			})
			c := newTestClient(t, s, func(cfg *Config) { cfg.MaxRetries = 1 })
			resp, err := c.Complete(t.Context(), hello)
			var e *Error
			if !errors.As(err, &e) || e.Retryable != tc.retryable || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want retryable=%v containing %q", err, tc.retryable, tc.want)
			}
			if s.calls.Load() != tc.requests || resp.Usage.Requests != tc.requests {
				t.Errorf("%d requests, usage %+v; want %d", s.calls.Load(), resp.Usage, tc.requests)
			}
		})
	}
}
