package llm

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// exchange is what the transport saw of one attempt's HTTP traffic.
// go-openai's errors carry neither response headers nor the body of a 2xx
// response it could not decode, so Complete puts an exchange in each
// attempt's context and the transport fills it in. An exchange belongs to
// one attempt; mu guards it because the transport and the body reader may
// run on goroutines other than the one that reads it.
type exchange struct {
	mu          sync.Mutex
	requests    int           // HTTP requests sent (more than 1 only when redirected)
	status      int           // of the last response; 0 if none arrived
	retryAfter  time.Duration // wait the last response asked for; 0 if none
	contentType string        // of the last response
	body        []byte        // the first bodyKeep bytes of the last response's body
}

// bodyKeep bounds how much of a response body an exchange keeps.
const bodyKeep = 4096

type exchangeKey struct{}

// withExchange returns ctx carrying ex for the transport.
func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// snapshot is an exchange's fields, copied under its lock.
type snapshot struct {
	requests    int
	status      int
	retryAfter  time.Duration
	contentType string
	body        []byte
}

func (ex *exchange) snapshot() snapshot {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return snapshot{ex.requests, ex.status, ex.retryAfter, ex.contentType, append([]byte(nil), ex.body...)}
}

func (ex *exchange) sent() {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.requests++
}

func (ex *exchange) received(resp *http.Response, now time.Time) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.status = resp.StatusCode
	ex.retryAfter = retryAfter(resp.Header, now)
	ex.contentType = resp.Header.Get("Content-Type")
	ex.body = ex.body[:0]
}

// transport is the http.RoundTripper under go-openai. For requests carrying
// an exchange it records each response's status, Retry-After and the start
// of its body, and restores a zero temperature go-openai left out. Other
// requests pass through untouched.
type transport struct {
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return t.base.RoundTrip(req)
	}
	req, err := withZeroTemperature(req)
	if err != nil {
		return nil, err
	}
	ex.sent()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ex.received(resp, time.Now())
	resp.Body = &recordedBody{ReadCloser: resp.Body, ex: ex}
	return resp, nil
}

// recordedBody copies the first bodyKeep bytes read from a response body
// into its exchange.
type recordedBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.ex.mu.Lock()
	defer b.ex.mu.Unlock()
	if room := bodyKeep - len(b.ex.body); room > 0 {
		b.ex.body = append(b.ex.body, p[:min(n, room)]...)
	}
	return n, err
}
