package fakellm

import (
	"maps"
	"slices"
)

// StatusClientGone is the Status recorded for a request whose client went
// away (or whose server was closed) during the rule's Delay; nothing was
// written to it. 499 is nginx's "client closed request".
const StatusClientGone = 499

// Recorded is one request as the server saw it.
type Recorded struct {
	// API is the protocol: "chat", "anthropic" or "responses". A request for
	// an unknown route has the protocol whose error body answered it:
	// anthropic when it carries an anthropic-version header, else chat.
	API      string    `json:"api"`
	Model    string    `json:"model"`    // the model the client asked for
	Messages []Message `json:"messages"` // tool calls and results included; for anthropic and responses, no system prompt
	Auth     string    `json:"auth"`     // "none" (no key sent), "ok", or "wrong"; see Server.SetKey
	Status   int       `json:"status"`   // what the server answered; 0 while still in progress
	Rule     int       `json:"rule"`     // index of the rule used, -1 when none was
}

// Requests returns copies of every request received so far, in arrival order,
// including ones the server refused (404, 400, 401) and Claude Code's probe of
// /api/hello.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.recorded))
	for i, r := range s.recorded {
		r.Messages = slices.Clone(r.Messages)
		for j, m := range r.Messages {
			r.Messages[j] = m.clone()
		}
		out[i] = r
	}
	return out
}

// Stats summarises what the server has answered.
type Stats struct {
	Requests         int         // every request received, finished or not
	ByStatus         map[int]int // finished requests by the status answered
	PromptTokens     int         // summed over successful (200) replies of every protocol
	CompletionTokens int         // summed over successful (200) replies of every protocol
}

// Stats returns a snapshot of the counters; the map is the caller's.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = len(s.recorded)
	st.ByStatus = maps.Clone(s.stats.ByStatus)
	if st.ByStatus == nil {
		st.ByStatus = map[int]int{}
	}
	return st
}

// arrive records a new request and returns its index, which is also its
// 0-based arrival sequence.
func (s *Server) arrive(api, auth string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = append(s.recorded, Recorded{API: api, Auth: auth, Rule: -1})
	return len(s.recorded) - 1
}

// describe records what the request asked for.
func (s *Server) describe(i int, req request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded[i].Model = req.Model
	s.recorded[i].Messages = req.Messages
}

// finish records the answer to request i, counts it, and returns the record.
func (s *Server) finish(i, status int, u usage) Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded[i].Status = status
	if s.stats.ByStatus == nil {
		s.stats.ByStatus = map[int]int{}
	}
	s.stats.ByStatus[status]++
	s.stats.PromptTokens += u.PromptTokens
	s.stats.CompletionTokens += u.CompletionTokens
	return s.recorded[i]
}
