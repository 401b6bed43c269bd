package llm

import (
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// Roles a [Message] may have.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // RoleSystem, RoleUser or RoleAssistant
	Content string
}

// Request is one chat completion to ask for.
type Request struct {
	Messages    []Message // at least one
	Temperature float32   // sent as given, 0 included (deterministic where the model supports it)
}

// Response is a model's reply.
type Response struct {
	Text  string
	Usage Usage  // of this call, retries included
	Model string // as reported by the server
}

// chatRequest builds the go-openai request for req.
func (c *Client) chatRequest(req Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{
		Model:       c.cfg.Model,
		Messages:    make([]openai.ChatCompletionMessage, len(req.Messages)),
		Temperature: req.Temperature,
	}
	switch {
	case c.cfg.Temperature != nil:
		out.Temperature = *c.cfg.Temperature
	case rejectsMaxTokens(c.cfg.Model):
		out.Temperature = 1 // reasoning models refuse anything else
	}
	for i, m := range req.Messages {
		out.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	if c.cfg.MaxTokens > 0 {
		if rejectsMaxTokens(c.cfg.Model) {
			out.MaxCompletionTokens = c.cfg.MaxTokens
		} else {
			out.MaxTokens = c.cfg.MaxTokens
		}
	}
	return out
}

// rejectsMaxTokens reports whether go-openai refuses max_tokens for model
// (OpenAI's reasoning models: o1, o3, o4, gpt-5...). Those get
// max_completion_tokens; every other model gets max_tokens, which all
// OpenAI-compatible servers understand.
func rejectsMaxTokens(model string) bool {
	err := openai.NewReasoningValidator().Validate(openai.ChatCompletionRequest{Model: model, MaxTokens: 1})
	return errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated) || errors.Is(err, openai.ErrO1MaxTokensDeprecated)
}

// usageOf returns the tokens and cost resp reports; 0 when it reports none.
func (c *Client) usageOf(resp openai.ChatCompletionResponse) Usage {
	u := Usage{
		PromptTokens:     int64(resp.Usage.PromptTokens),
		CompletionTokens: int64(resp.Usage.CompletionTokens),
	}
	u.Cost = c.cfg.Price.cost(u.PromptTokens, u.CompletionTokens)
	return u
}
