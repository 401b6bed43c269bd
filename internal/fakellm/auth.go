package fakellm

import (
	"net/http"
	"strings"
)

// SetKey sets the API key the server expects. From then on a request is
// answered 401 unless it carries the key: as "Authorization: Bearer <key>"
// for chat completions and Responses, and as "x-api-key: <key>" or a Bearer
// token for Anthropic. The 401 message echoes a wrong key, as some real
// providers do. With no key set (or ""), any authorization is accepted.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// bearer returns the token of an "Authorization: Bearer" header; a header in
// another form is returned whole and not well formed.
func bearer(h http.Header) (key string, sent, wellFormed bool) {
	header := h.Get("Authorization")
	if token, ok := strings.CutPrefix(header, "Bearer "); ok {
		return token, true, true
	}
	return header, header != "", false
}

// checkAuth classifies the key a request of protocol p carries in h as
// "none" (not sent), "ok" or "wrong", and returns the message of the 401
// refusing it: only when a key is expected and the request does not carry
// it; otherwise "".
func (s *Server) checkAuth(p api, h http.Header) (auth, refusal string) {
	s.mu.Lock()
	want := s.key
	s.mu.Unlock()
	key, sent, wellFormed := p.credential(h)
	switch {
	case !sent && want == "":
		return "none", ""
	case !sent:
		return "none", p.unauthorized(key, false)
	case want == "" || wellFormed && key == want:
		return "ok", ""
	}
	return "wrong", p.unauthorized(key, true)
}
