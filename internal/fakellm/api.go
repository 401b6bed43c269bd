package fakellm

import (
	"net/http"
	"slices"
)

// api is one protocol the server speaks. Implementations hold no state, so
// their methods are safe to call concurrently.
type api interface {
	// name is the protocol in rules and records: "chat", "anthropic" or
	// "responses".
	name() string
	// path is the route of its requests; the query string is ignored.
	path() string
	// credential returns the API key the request carries, whether it
	// carries one at all, and whether it is in the form the protocol wants.
	credential(h http.Header) (key string, sent, wellFormed bool)
	// unauthorized is the message of the 401 refusing key (sent or not).
	unauthorized(key string, sent bool) string
	// decode reads a request body. With an error it may still return what it
	// read, so that the request is recorded.
	decode(body []byte) (request, error)
	// writeAnswer writes a to req, the seq-th request (1-based).
	writeAnswer(w http.ResponseWriter, seq int, req request, a answer)
	// writeError writes status with the protocol's error body.
	writeError(w http.ResponseWriter, status int, message string)
}

// apis are the protocols the server speaks, all on one port.
var apis = []api{chatAPI{}, anthropicAPI{}, responsesAPI{}}

// knownAPI reports whether name is the name of a protocol in apis.
func knownAPI(name string) bool {
	return slices.ContainsFunc(apis, func(a api) bool { return a.name() == name })
}

// apiFor is the protocol of r: the one whose path (or, for Anthropic, the
// hello probe) r asks for; else Anthropic when r carries the
// anthropic-version header every Anthropic client sends; else chat. Its
// error body answers requests for unknown routes.
func apiFor(r *http.Request) api {
	for _, a := range apis {
		if r.URL.Path == a.path() {
			return a
		}
	}
	if r.URL.Path == helloPath || r.Header.Get("Anthropic-Version") != "" {
		return anthropicAPI{}
	}
	return chatAPI{}
}
