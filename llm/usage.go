package llm

// Usage is what calls cost. The zero value is empty; values can be added
// with [Usage.Add] but a Usage itself is not safe for concurrent mutation.
type Usage struct {
	Requests         int64   // HTTP requests sent, retries included
	Retries          int64   // attempts after the first, summed over calls
	PromptTokens     int64   // as reported by the server; 0 when it reports none
	CompletionTokens int64   // as reported by the server; 0 when it reports none
	Cost             float64 // US dollars, from [Config.Price]
}

// Tokens returns prompt plus completion tokens.
func (u Usage) Tokens() int64 { return u.PromptTokens + u.CompletionTokens }

// Add adds v to u field by field.
func (u *Usage) Add(v Usage) {
	u.Requests += v.Requests
	u.Retries += v.Retries
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.Cost += v.Cost
}
