package llm

import (
	"fmt"
	"net/url"
	"time"
)

// Config is one provider endpoint and model.
type Config struct {
	BaseURL    string        // e.g. "https://api.openai.com/v1"; required, absolute http or https
	Model      string        // required
	Key        string        // the API key itself (read from the environment by the caller); may be "" for local servers
	KeyEnv     string        // the NAME of the variable the key came from ("OPENAI_API_KEY"), for messages
	Timeout    time.Duration // per attempt; 0 means 2m
	MaxRetries int           // retries after the first attempt on retryable failures; <0 means 0; callers default to 4
	RetryBase  time.Duration // first backoff step; 0 means 1s
	MaxBackoff time.Duration // cap on one wait between attempts; 0 means 60s
	Price      Price         // zero means every call costs 0
	MaxTokens  int           // max completion tokens per request; 0 means the server's default
	// Temperature, when set, replaces every request's. Unset, requests keep
	// theirs (0, for repeatable answers), except that reasoning models (o1,
	// o3, o4, gpt-5...), which accept only 1, get 1.
	Temperature *float32
}

// Price is what a provider charges, in US dollars per million tokens.
type Price struct {
	Input  float64 // per 1M prompt tokens
	Output float64 // per 1M completion tokens
}

// cost returns the dollars charged for the given token counts.
func (p Price) cost(prompt, completion int64) float64 {
	return float64(prompt)/1e6*p.Input + float64(completion)/1e6*p.Output
}

const (
	defaultTimeout    = 2 * time.Minute
	defaultRetryBase  = time.Second
	defaultMaxBackoff = 60 * time.Second
)

// withDefaults returns c with its zero values replaced by the documented defaults.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.RetryBase == 0 {
		c.RetryBase = defaultRetryBase
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = defaultMaxBackoff
	}
	c.MaxRetries = max(c.MaxRetries, 0)
	return c
}

// validate checks c and returns the parsed base URL. Its errors never
// contain the key.
func (c Config) validate() (*url.URL, error) {
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		return nil, fmt.Errorf("base-url is empty: set it to the provider's OpenAI-compatible endpoint, e.g. %q", "https://api.openai.com/v1")
	case err != nil:
		return nil, fmt.Errorf("base-url %q: %w", redact(c.BaseURL, c.Key), err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("base-url %q is not an absolute http or https URL", redact(u.Redacted(), c.Key))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("base-url %q has a query or fragment: the request path is appended to it", redact(u.Redacted(), c.Key))
	case c.Model == "":
		return nil, fmt.Errorf("model is empty for base-url %q", redact(u.Redacted(), c.Key))
	}
	if err := c.validateNumbers(); err != nil {
		return nil, fmt.Errorf("model %q at %q: %w", c.Model, redact(u.Redacted(), c.Key), err)
	}
	return u, nil
}

// validateNumbers rejects negative durations, token limits and prices.
func (c Config) validateNumbers() error {
	switch {
	case c.Timeout < 0 || c.RetryBase < 0 || c.MaxBackoff < 0:
		return fmt.Errorf("negative timeout or backoff (%v, %v, %v)", c.Timeout, c.RetryBase, c.MaxBackoff)
	case c.MaxTokens < 0:
		return fmt.Errorf("negative max tokens %d", c.MaxTokens)
	case c.Price.Input < 0 || c.Price.Output < 0:
		return fmt.Errorf("negative price %+v", c.Price)
	}
	return nil
}
