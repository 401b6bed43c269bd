package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Client calls one model at one endpoint. Safe for concurrent use: calls
// share only the Limiter and the usage totals, which mu guards.
type Client struct {
	cfg  Config // defaults applied; never changed after New
	base string // cfg.BaseURL with any password masked, for messages
	api  *openai.Client
	lim  *Limiter

	mu   sync.Mutex
	used Usage // totals over the client's life
}

// New returns a Client for cfg. It checks that BaseURL is an absolute http or
// https URL without query and that Model is set. Requests made through lim
// count against its limit; a nil lim means no limit. The Authorization header
// is sent only when cfg.Key is not empty.
func New(cfg Config, lim *Limiter) (*Client, error) {
	u, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("new llm client: %w", err)
	}
	cfg = cfg.withDefaults()
	oc := openai.DefaultConfig(cfg.Key)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = &http.Client{Transport: &transport{base: baseTransport()}}
	return &Client{
		cfg:  cfg,
		base: redact(u.Redacted(), cfg.Key),
		api:  openai.NewClientWithConfig(oc),
		lim:  lim,
	}, nil
}

// baseTransport returns a private copy of the default transport, so each
// Client has its own connection pool.
func baseTransport() http.RoundTripper {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return t.Clone()
	}
	return http.DefaultTransport
}

// Config returns the client's configuration with defaults applied and Key
// blanked.
func (c *Client) Config() Config {
	cfg := c.cfg
	cfg.Key = ""
	return cfg
}

// Usage returns the totals of every call over the client's life, failed
// calls included.
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *Client) record(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used.Add(u)
}

// Complete asks the model to continue req.Messages and returns its reply.
//
// Each attempt runs under its own Config.Timeout and holds one Limiter slot.
// A retryable failure — HTTP 429 or 5xx (or 408), the attempt's timeout
// passing while ctx is alive, a refused, reset or cut connection, or a reply
// without a message — is retried up to Config.MaxRetries times after a
// backoff (see backoff) of at least the server's Retry-After. Anything else
// ends the call at once, as does ctx ending, also during a backoff or when
// ctx's deadline would pass before the next retry.
//
// Every failure is an *Error. On failure the Response still carries the
// Usage the call spent, which is also added to the client's totals.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	if len(req.Messages) == 0 {
		return Response{}, c.newError(0, false, fmt.Sprintf("no messages to send to model %q", c.cfg.Model), ErrNoMessages)
	}
	creq := c.chatRequest(req)
	var used Usage
	defer func() { c.record(used) }()
	for n := 1; ; n++ {
		r := c.attempt(ctx, creq)
		used.Add(r.usage)
		if r.fail == nil {
			return Response{Text: r.text, Usage: used, Model: r.model}, nil
		}
		r.fail.Attempts = n
		if !r.fail.Retryable {
			return Response{Usage: used}, r.fail
		}
		if n > c.cfg.MaxRetries {
			return Response{Usage: used}, c.gaveUp(r.fail, "")
		}
		wait := backoff(n, c.cfg.RetryBase, c.cfg.MaxBackoff, r.serverWait)
		if err := c.pause(ctx, wait, r.fail); err != nil {
			return Response{Usage: used}, err
		}
		used.Retries++
	}
}

// pause waits before retrying after last. It returns an *Error instead when
// ctx's deadline would pass first or ctx ends while waiting.
func (c *Client) pause(ctx context.Context, wait time.Duration, last *Error) *Error {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return c.gaveUp(last, fmt.Sprintf(" (the context deadline comes before the next retry, due in %v)", wait.Round(time.Millisecond)))
	}
	slog.DebugContext(ctx, "llm: retrying", "base_url", c.base, "model", c.cfg.Model,
		"attempt", last.Attempts, "wait", wait, "error", last.Msg)
	if err := sleep(ctx, wait); err != nil {
		e := c.cancelled(ctx, err)
		e.Msg += "; the last attempt: " + last.Msg
		e.Status, e.Attempts = last.Status, last.Attempts
		return e
	}
	return nil
}

// gaveUp turns the last retryable failure into the call's error.
func (c *Client) gaveUp(last *Error, why string) *Error {
	e := *last
	plural := "s"
	if e.Attempts == 1 {
		plural = ""
	}
	e.Msg = fmt.Sprintf("gave up after %d attempt%s%s: %s", e.Attempts, plural, why, last.Msg)
	return &e
}

// Reach asks the endpoint for its list of models, to tell whether it
// answers at all: nil when it does, even with an error status (a server
// without that route still answers), and an error naming the endpoint when
// it refuses the key (401, 403) or does not answer.
func (c *Client) Reach(ctx context.Context) error {
	_, err := c.api.ListModels(ctx)
	if err == nil {
		return nil
	}
	status := 0
	var api *openai.APIError
	var req *openai.RequestError
	switch {
	case errors.As(err, &api):
		status = api.HTTPStatusCode
	case errors.As(err, &req):
		status = req.HTTPStatusCode
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s refuses the key (HTTP %d): check %s", c.base, status, c.cfg.KeyEnv)
	case status != 0:
		return nil
	}
	return fmt.Errorf("%s does not answer: %s", c.base, redact(err.Error(), c.cfg.Key))
}

// Endpoint is the client's base URL with any password masked.
func (c *Client) Endpoint() string { return c.base }
