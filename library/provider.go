package library

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Provider is how git-descent reaches OpenAI-compatible models: one endpoint
// and key for the library, a model per role. Settings come, lowest first,
// from the environment (OPENAI_BASE_URL), `descent.*` in the user's git
// config, the `[descent]` section of .descent, and the library's section.
type Provider struct {
	BaseURL       string
	Model         string // default model for every role
	RunModel      string // the openai runner's model ("" means Model)
	ProposerModel string
	JudgeModel    string
	KeyEnv        string        // name of the environment variable holding the key
	Timeout       time.Duration // per request attempt
	Retries       int           // retries on 429, 5xx and timeouts
	Concurrency   int           // requests in flight to this endpoint
	MaxTokens     int           // completion tokens per request; 0 means the server's default
	ContextBudget int           // characters of library and task text sent in one prompt
	Temperature   *float64      // sampling temperature; unset means 0 (1 for reasoning models)

	Prices map[string]Price // USD per million tokens, by model
}

// Price is a model's price in USD per million tokens.
type Price struct{ Input, Output float64 }

// Provider defaults.
const (
	DefaultBaseURL       = "https://api.openai.com/v1"
	DefaultKeyEnv        = "OPENAI_API_KEY"
	DefaultRetries       = 4
	DefaultConcurrency   = 4
	DefaultContextBudget = 48000
)

// defaultProvider is the provider before any config: OpenAI, or whatever
// OPENAI_BASE_URL names.
func defaultProvider() Provider {
	p := Provider{
		BaseURL:       DefaultBaseURL,
		KeyEnv:        DefaultKeyEnv,
		Timeout:       2 * time.Minute,
		Retries:       DefaultRetries,
		Concurrency:   DefaultConcurrency,
		ContextBudget: DefaultContextBudget,
		Prices:        map[string]Price{},
	}
	if u := os.Getenv("OPENAI_BASE_URL"); u != "" {
		p.BaseURL = u
	}
	return p
}

// ModelFor returns the model of a role: "run", "proposer" or "judge".
func (p *Provider) ModelFor(role string) string {
	m := map[string]string{"run": p.RunModel, "proposer": p.ProposerModel, "judge": p.JudgeModel}[role]
	if m == "" {
		return p.Model
	}
	return m
}

// ProviderKeys are the keys valid in `descent.*`, the [descent] section of
// .descent, and a library's section.
var ProviderKeys = []string{"base-url", "model", "run-model", "proposer-model", "judge-model", "api-key-env",
	"request-timeout", "max-retries", "concurrency", "max-completion-tokens", "context-budget", "temperature"}

// setProvider applies one provider key; ok is false for keys it does not
// know.
func (p *Provider) set(key, v string) (ok bool, err error) {
	switch key {
	case "base-url":
		u, perr := url.Parse(v)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return true, fmt.Errorf("must be an http or https URL such as %s", DefaultBaseURL)
		}
		p.BaseURL = strings.TrimRight(v, "/")
	case "model":
		p.Model = v
	case "run-model":
		p.RunModel = v
	case "proposer-model":
		p.ProposerModel = v
	case "judge-model":
		p.JudgeModel = v
	case "api-key-env":
		p.KeyEnv = v
	case "request-timeout":
		p.Timeout, err = time.ParseDuration(v)
	case "max-retries":
		p.Retries, err = strconv.Atoi(v)
	case "concurrency":
		p.Concurrency, err = strconv.Atoi(v)
	case "max-completion-tokens":
		p.MaxTokens, err = strconv.Atoi(v)
	case "context-budget":
		p.ContextBudget, err = strconv.Atoi(v)
	case "temperature":
		t, perr := strconv.ParseFloat(v, 64)
		if perr != nil || t < 0 || t > 2 {
			return true, fmt.Errorf("must be a number from 0 to 2")
		}
		p.Temperature = &t
	default:
		return false, nil
	}
	return true, err
}

// setPrice applies "<model>.input-price" or "<model>.output-price"; ok is
// false for other keys.
func (p *Provider) setPrice(key, v string) (ok bool, err error) {
	i := strings.LastIndex(key, ".")
	if i <= 0 {
		return false, nil
	}
	model, which := key[:i], key[i+1:]
	if which != "input-price" && which != "output-price" {
		return false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return true, fmt.Errorf("must be a price in USD per million tokens, such as 0.15")
	}
	pr := p.Prices[model]
	if which == "input-price" {
		pr.Input = f
	} else {
		pr.Output = f
	}
	p.Prices[model] = pr
	return true, nil
}

// Key reads the provider's API key from the environment. An unset key is
// allowed for endpoints on this machine (Ollama, llama.cpp, vLLM), which
// usually take none; elsewhere it is an error saying what to set.
func (p *Provider) Key() (string, error) {
	if p.KeyEnv == "" || p.KeyEnv == "none" {
		return "", nil
	}
	if k := os.Getenv(p.KeyEnv); k != "" {
		return k, nil
	}
	if local(p.BaseURL) {
		return "", nil
	}
	return "", fmt.Errorf("no API key for %s: set the environment variable %s (or point descent.api-key-env at the variable that holds your key)", p.BaseURL, p.KeyEnv)
}

func local(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}
