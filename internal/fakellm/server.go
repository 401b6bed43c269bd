// Package fakellm is a local model endpoint for tests. On one port of
// 127.0.0.1 it speaks three protocols: OpenAI chat completions, the Anthropic
// Messages API (which Claude Code speaks) and the OpenAI Responses API (which
// Codex speaks). It answers all of them from the same scripted rules, which
// can make tool calls, never touches the network beyond 127.0.0.1, and
// records every request so tests can check what a client sent.
package fakellm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the request body the server reads.
const maxBody = 16 << 20

// Server is a running fake endpoint on 127.0.0.1. It is safe for concurrent
// requests and concurrent calls of its methods.
//
// Each request is served on its own goroutine by net/http; Close cancels the
// context of requests still waiting out a Delay and returns once every
// handler has finished.
type Server struct {
	http   *http.Server
	origin string    // http://127.0.0.1:PORT
	log    io.Writer // nil for no log; written under mu

	cancel context.CancelFunc // cancels the base context of every request
	served chan struct{}      // closed when the Serve goroutine returns
	once   sync.Once
	active sync.WaitGroup // handlers running; Add only under mu while !closed

	mu       sync.Mutex
	closed   bool
	rules    []Rule
	used     []int // times each rule has been used
	key      string
	recorded []Recorded
	stats    Stats
}

// Start serves rules on a random port of 127.0.0.1 until Close. A relative
// ReplyFile is read relative to the current directory (LoadRules has already
// made them relative to the rules file). Each finished request is logged as
// one line to log, which may be nil.
func Start(rules []Rule, log io.Writer) (*Server, error) {
	for i, r := range rules {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("start fake LLM server: rule %d: %w", i, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start fake LLM server: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		origin: "http://" + ln.Addr().String(),
		log:    log,
		cancel: cancel,
		served: make(chan struct{}),
		rules:  append([]Rule(nil), rules...),
		used:   make([]int, len(rules)),
	}
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.handle),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(s.served)
		s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// URL is the base URL OpenAI clients are configured with, ending in /v1,
// e.g. http://127.0.0.1:40123/v1.
func (s *Server) URL() string { return s.origin + "/v1" }

// Origin is the server's URL without a path, e.g. http://127.0.0.1:40123:
// what ANTHROPIC_BASE_URL is set to for Claude Code.
func (s *Server) Origin() string { return s.origin }

// Close stops the server and waits for every handler to return. Requests
// still in a Delay are cancelled. Close may be called more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		s.http.Close()
		<-s.served
		s.active.Wait()
	})
}

// enter registers a running handler, or reports that the server is closed.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active.Add(1)
	return true
}

// handle answers one request and records it.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	p := apiFor(r)
	if !s.enter() {
		p.writeError(w, http.StatusServiceUnavailable, "fakellm: server closed")
		return
	}
	defer s.active.Done()
	auth, refusal := s.checkAuth(p, r.Header)
	i := s.arrive(p.name(), auth)
	status, u := s.serve(w, r, p, i, refusal)
	rec := s.finish(i, status, u)
	s.logf("fakellm: #%d %s %s api=%s model=%q auth=%s rule=%d status=%d\n", i+1, r.Method, r.URL.Path, rec.API, rec.Model, rec.Auth, rec.Rule, rec.Status)
}

// serve writes the answer to request i, of protocol p, and returns its
// status and usage. A refusal other than "" is the message of a 401.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, p api, i int, refusal string) (int, usage) {
	switch {
	case r.URL.Path == helloPath && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		w.WriteHeader(http.StatusOK)
		return http.StatusOK, usage{}
	case r.Method != http.MethodPost || r.URL.Path != p.path():
		return fail(w, p, http.StatusNotFound, fmt.Sprintf("fakellm: no route for %s %s; want POST %s", r.Method, r.URL.Path, postPaths()))
	}
	req, parseErr := readRequest(r, p)
	s.describe(i, req)
	switch {
	case refusal != "":
		return fail(w, p, http.StatusUnauthorized, refusal)
	case parseErr != nil:
		return fail(w, p, http.StatusBadRequest, "fakellm: "+parseErr.Error())
	}
	n, rule, ok := s.choose(i, p.name(), req)
	if !ok {
		return fail(w, p, http.StatusInternalServerError, "fakellm: no rule matches")
	}
	if !wait(r.Context(), rule.Delay) {
		return StatusClientGone, usage{}
	}
	if rule.RetryAfter != "" {
		w.Header().Set("Retry-After", rule.RetryAfter)
	}
	if rule.failing() {
		msg := rule.Message
		if msg == "" {
			msg = statusText(rule.Status)
		}
		return fail(w, p, rule.Status, msg)
	}
	a, err := answerFor(rule, req, i+1)
	if err != nil {
		return fail(w, p, http.StatusInternalServerError, fmt.Sprintf("fakellm: rule %d: %v", n, err))
	}
	p.writeAnswer(w, i+1, req, a)
	return http.StatusOK, a.Usage
}

// statusText is the reason phrase of status. net/http has none for 529,
// Anthropic's "overloaded".
func statusText(status int) string {
	if status == 529 {
		return "Overloaded"
	}
	if text := http.StatusText(status); text != "" {
		return text
	}
	return fmt.Sprintf("status %d", status)
}

// postPaths lists the routes of the protocols, for the 404 message.
func postPaths() string {
	paths := make([]string, len(apis))
	for i, a := range apis {
		paths[i] = a.path()
	}
	return strings.Join(paths, ", ")
}

func fail(w http.ResponseWriter, p api, status int, message string) (int, usage) {
	p.writeError(w, status, message)
	return status, usage{}
}

func readRequest(r *http.Request, p api) (request, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return request{}, fmt.Errorf("read request body: %w", err)
	}
	return p.decode(body)
}

// choose picks the rule for request i, of protocol name, counts its use and
// records its index.
func (s *Server) choose(i int, name string, req request) (int, Rule, bool) {
	all, final := transcript(req.Messages), lastText(req.Messages)
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, rule := range s.rules {
		switch {
		case rule.Times > 0 && s.used[n] >= rule.Times,
			rule.Model != "" && rule.Model != req.Model,
			rule.API != "" && rule.API != name,
			!strings.Contains(all, rule.Match),
			!strings.Contains(final, rule.Last):
			continue
		}
		s.used[n]++
		s.recorded[i].Rule = n
		return n, rule, true
	}
	return -1, Rule{}, false
}

// wait sleeps for d and reports whether it did so before ctx ended.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.log == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.log, format, args...)
}
