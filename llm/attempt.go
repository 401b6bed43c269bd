package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// result is the outcome of one attempt.
type result struct {
	text, model string
	usage       Usage         // requests sent and tokens reported by this attempt
	fail        *Error        // nil on success
	serverWait  time.Duration // the wait the server asked for before a retry
}

// errAttemptTimeout is the cause of an attempt's context when its own
// timeout, not the caller's context, ended it.
var errAttemptTimeout = errors.New("per-attempt timeout")

// attempt sends creq once (plus any redirects), holding a Limiter slot and
// under its own timeout.
func (c *Client) attempt(ctx context.Context, creq openai.ChatCompletionRequest) result {
	if err := ctx.Err(); err != nil {
		return result{fail: c.cancelled(ctx, err)}
	}
	if err := c.lim.acquire(ctx); err != nil {
		return result{fail: c.cancelled(ctx, err)}
	}
	defer c.lim.release()
	actx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errAttemptTimeout)
	defer cancel()
	ex := &exchange{}
	resp, err := c.api.CreateChatCompletion(withExchange(actx, ex), creq)
	seen := ex.snapshot()
	r := result{usage: c.usageOf(resp), serverWait: seen.retryAfter, model: resp.Model}
	r.usage.Requests = int64(seen.requests)
	if err != nil || seen.status/100 != 2 {
		r.fail = c.classify(ctx, actx, err, seen)
		return r
	}
	r.text, r.fail = c.reply(resp, seen)
	return r
}

// reply returns the text of a decoded 2xx response. A reply without text is
// retryable — providers under load sometimes send one — unless its reason
// (a refusal, the token limit, a content filter) would recur.
func (c *Client) reply(resp openai.ChatCompletionResponse, seen snapshot) (string, *Error) {
	m := c.cfg.Model
	if len(resp.Choices) > 0 {
		choice := resp.Choices[0]
		switch {
		case strings.TrimSpace(choice.Message.Content) != "":
			return choice.Message.Content, nil
		case choice.Message.Refusal != "":
			return "", c.newError(seen.status, false, fmt.Sprintf("model %q refused: %s", m, serverText(choice.Message.Refusal, c.cfg.Key)), nil)
		case choice.FinishReason == openai.FinishReasonLength:
			return "", c.newError(seen.status, false, fmt.Sprintf("returned no message for model %q: it reached the completion-token limit (finish_reason \"length\"); raise max tokens", m), nil)
		case choice.FinishReason == openai.FinishReasonContentFilter:
			return "", c.newError(seen.status, false, fmt.Sprintf("returned no message for model %q: the provider's content filter withheld it", m), nil)
		}
	}
	msg := fmt.Sprintf("returned no message for model %q", m)
	if said := errorInBody(seen.body); said != "" {
		msg += ": " + serverText(said, c.cfg.Key)
	}
	return "", c.newError(seen.status, true, msg, nil)
}

// errorInBody returns the message of an OpenAI-style {"error": {...}} object
// some providers put in a 2xx body; "" if there is none.
func errorInBody(body []byte) string {
	var e openai.ErrorResponse
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Message
}
