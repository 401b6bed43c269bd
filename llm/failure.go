package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	openai "github.com/sashabaranov/go-openai"
)

// newError returns an *Error for this client with the key redacted from
// msg. Complete sets Attempts.
func (c *Client) newError(status int, retryable bool, msg string, cause error) *Error {
	return &Error{
		BaseURL:   c.base,
		Model:     c.cfg.Model,
		Status:    status,
		Retryable: retryable,
		Msg:       redact(msg, c.cfg.Key),
		cause:     cause,
	}
}

// cancelled is the error for a call the caller's context ended; err is
// ctx.Err().
func (c *Client) cancelled(ctx context.Context, err error) *Error {
	return c.newError(0, false, fmt.Sprintf("request to model %q cancelled: %v", c.cfg.Model, context.Cause(ctx)), err)
}

// classify turns a failed attempt into an *Error, deciding whether it is
// retryable. err is what go-openai returned; seen is what the transport saw.
func (c *Client) classify(ctx, actx context.Context, err error, seen snapshot) *Error {
	m := c.cfg.Model
	switch {
	case ctx.Err() != nil:
		return c.cancelled(ctx, ctx.Err())
	case errors.Is(context.Cause(actx), errAttemptTimeout):
		return c.newError(seen.status, true, fmt.Sprintf("no reply from model %q within the per-attempt timeout of %v", m, c.cfg.Timeout), nil)
	case seen.status != 0 && seen.status/100 != 2:
		return c.statusError(seen.status, serverMessage(err, seen))
	case seen.requests == 0:
		return c.newError(0, false, fmt.Sprintf("request for model %q not sent: %v", m, err), nil)
	case transient(err) && seen.status != 0:
		return c.newError(seen.status, true, fmt.Sprintf("read the reply of model %q (HTTP %d): %v", m, seen.status, err), nil)
	case transient(err):
		return c.newError(0, true, fmt.Sprintf("send request for model %q: %v", m, err), nil)
	case isJSONError(err):
		return c.newError(seen.status, false, fmt.Sprintf("returned a response that is not JSON (HTTP %d, Content-Type %q) for model %q: check base-url %q (it usually ends in /v1); the response began: %s",
			seen.status, seen.contentType, m, c.base, serverText(string(seen.body), c.cfg.Key)), nil)
	default:
		return c.newError(seen.status, false, fmt.Sprintf("send request for model %q: %v", m, err), nil)
	}
}

// statusError is the error for a non-2xx response; server is the message
// the server gave, possibly "".
func (c *Client) statusError(status int, server string) *Error {
	m, said := c.cfg.Model, ""
	if server = serverText(server, c.cfg.Key); server != "" {
		said = ": " + server
	}
	switch {
	case status == http.StatusUnauthorized:
		return c.newError(status, false, c.unauthorized()+said, nil)
	case status == http.StatusForbidden:
		return c.newError(status, false, fmt.Sprintf("access denied (HTTP 403) for model %q: check that the key may use this model%s", m, said), nil)
	case status == http.StatusNotFound:
		return c.newError(status, false, fmt.Sprintf("not found (HTTP 404): check base-url %q (it usually ends in /v1) and model %q%s", c.base, m, said), nil)
	case status == http.StatusTooManyRequests:
		return c.newError(status, true, fmt.Sprintf("rate limited (HTTP 429) for model %q%s", m, said), nil)
	case status == http.StatusRequestTimeout:
		return c.newError(status, true, fmt.Sprintf("timed out reading the request (HTTP 408) for model %q%s", m, said), nil)
	case status >= 500:
		return c.newError(status, true, fmt.Sprintf("server error (HTTP %d) for model %q%s", status, m, said), nil)
	case status >= 400:
		return c.newError(status, false, fmt.Sprintf("rejected the request (HTTP %d) for model %q%s", status, m, said), nil)
	default:
		return c.newError(status, false, fmt.Sprintf("unexpected HTTP %d for model %q: check base-url %q%s", status, m, c.base, said), nil)
	}
}

// unauthorized says what to fix after an HTTP 401.
func (c *Client) unauthorized() string {
	switch {
	case c.cfg.Key != "" && c.cfg.KeyEnv != "":
		return "the API key was rejected (HTTP 401): check the key in $" + c.cfg.KeyEnv
	case c.cfg.Key != "":
		return "the API key was rejected (HTTP 401): check the key"
	case c.cfg.KeyEnv != "":
		return "the server requires an API key (HTTP 401): no API key was sent; set $" + c.cfg.KeyEnv
	default:
		return "the server requires an API key (HTTP 401): no API key was sent; set one"
	}
}

// serverMessage returns the message the server gave with an error status:
// the "message" of an OpenAI-style error object, else the raw body.
func serverMessage(err error, seen snapshot) string {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return apiErr.Message
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && len(reqErr.Body) > 0 {
		return string(reqErr.Body)
	}
	return string(seen.body)
}

// transient reports whether err is a network failure worth retrying: a
// refused, reset, aborted or cut connection, a truncated response, or a
// timeout below the caller's (dialing, TLS handshake, DNS).
func transient(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// isJSONError reports whether err comes from decoding a body that is not the
// expected JSON.
func isJSONError(err error) bool {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &syntaxErr) || errors.As(err, &typeErr)
}
