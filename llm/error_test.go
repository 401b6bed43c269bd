package llm

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestClientErrorsAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		status      int
		key, keyEnv string
		want        string // the message after "<base>: "
	}{
		{400, testKey, "TEST_API_KEY", `rejected the request (HTTP 400) for model "test-model": messages: too long`},
		{422, testKey, "TEST_API_KEY", `rejected the request (HTTP 422) for model "test-model": messages: too long`},
		{401, testKey, "TEST_API_KEY", `the API key was rejected (HTTP 401): check the key in $TEST_API_KEY: messages: too long`},
		{401, "", "", `the server requires an API key (HTTP 401): no API key was sent; set one: messages: too long`},
		{403, testKey, "TEST_API_KEY", `access denied (HTTP 403) for model "test-model": check that the key may use this model: messages: too long`},
		{404, testKey, "TEST_API_KEY", `not found (HTTP 404): check base-url "<base>" (it usually ends in /v1) and model "test-model": messages: too long`},
	} {
		s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			writeError(w, tc.status, "messages: too long")
		})
		c := newTestClient(t, s, func(cfg *Config) { cfg.Key, cfg.KeyEnv = tc.key, tc.keyEnv })
		_, err := c.Complete(t.Context(), hello)
		base := s.URL + "/v1"
		want := base + ": " + strings.ReplaceAll(tc.want, "<base>", base)
		if err == nil || err.Error() != want {
			t.Errorf("HTTP %d: err = %v\nwant       %s", tc.status, err, want)
		}
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Retryable || e.Attempts != 1 {
			t.Errorf("HTTP %d: error %+v, want that status, not retryable, 1 attempt", tc.status, e)
		}
		if s.calls.Load() != 1 {
			t.Errorf("HTTP %d: %d requests, want 1", tc.status, s.calls.Load())
		}
	}
}

func TestHTMLInsteadOfJSONIsNotRetried(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html>\n<html><head><title>Open WebUI</title></head></html>"))
	})
	c := newTestClient(t, s, nil)
	_, err := c.Complete(t.Context(), hello)
	want := `returned a response that is not JSON (HTTP 200, Content-Type "text/html; charset=utf-8") for model "test-model": check base-url "` +
		s.URL + `/v1" (it usually ends in /v1); the response began: <!doctype html> <html><head><title>Open WebUI</title></head></html>`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v\nwant …%s", err, want)
	}
	if s.calls.Load() != 1 {
		t.Errorf("%d requests, want 1", s.calls.Load())
	}
}

func TestServerMessageIsTruncated(t *testing.T) {
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusBadRequest, strings.Repeat("é", 400))
	})
	c := newTestClient(t, s, nil)
	_, err := c.Complete(t.Context(), hello)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	said := e.Msg[strings.Index(e.Msg, "é"):]
	if len(said) > serverMsgKeep+len("...") || !strings.HasSuffix(said, "é...") {
		t.Errorf("server message kept as %d bytes ending %q, want at most %d and whole runes", len(said), said[len(said)-8:], serverMsgKeep)
	}
}

// TestKeyNeverInErrors uses a server that echoes the Authorization header
// back in every kind of failure.
func TestKeyNeverInErrors(t *testing.T) {
	echoes := map[string]func(w http.ResponseWriter, r *http.Request){
		"401 JSON": func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+r.Header.Get("Authorization"))
		},
		"400 JSON": func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusBadRequest, "bad request with "+r.Header.Get("Authorization"))
		},
		"500 plain text, retried": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("panic: header " + r.Header.Get("Authorization")))
		},
		"200 HTML": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>" + r.Header.Get("Authorization") + "</p>"))
		},
		"200 error object": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"error":{"message":"key ` + r.Header.Get("Authorization") + `"}}`))
		},
		"key across the truncation point": func(w http.ResponseWriter, r *http.Request) {
			// after "Bearer ", the key starts 5 bytes before the cut
			writeError(w, http.StatusBadRequest, strings.Repeat("x", serverMsgKeep-12)+r.Header.Get("Authorization"))
		},
	}
	for name, echo := range echoes {
		s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { echo(w, r) })
		c := newTestClient(t, s, func(cfg *Config) { cfg.MaxRetries = 1 })
		_, err := c.Complete(t.Context(), hello)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if msg := err.Error(); strings.Contains(msg, testKey[:4]) || !strings.Contains(msg, "[reda") {
			t.Errorf("%s: err = %q, want the key redacted", name, msg)
		}
	}
}
