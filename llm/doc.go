// Package llm calls chat models through OpenAI-compatible endpoints
// (OpenAI, DeepSeek, GLM, OpenRouter, vLLM, llama.cpp server, Ollama's /v1).
//
// A [Client] sends one model a list of messages and returns the reply, the
// tokens it cost and their price. It retries what is transient — HTTP 429 and
// 5xx, a per-attempt timeout, a dropped connection — with exponential backoff
// and "equal jitter", honouring the server's Retry-After, and never retries a
// request the server rejected (400, 401, 403, 404, 422) or one whose caller's
// context has ended. A [Limiter] shared by the Clients of one provider bounds
// how many requests are in flight to it at once.
//
// Every failure is an [*Error] whose message names the base URL and model,
// says what to fix, and never contains the API key.
package llm
