// Package fakellm is a local OpenAI-compatible chat-completions server for
// tests. It answers from scripted rules, never touches the network beyond
// 127.0.0.1, and records every request so tests can check what a client
// sent.
package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// chatPath is the only route the server answers.
const chatPath = "/v1/chat/completions"

// maxBody bounds the request body the server reads.
const maxBody = 16 << 20

// Server is a running fake endpoint on 127.0.0.1. It is safe for concurrent
// requests and concurrent calls of its methods.
//
// Each request is served on its own goroutine by net/http; Close cancels the
// context of requests still waiting out a Delay and returns once every
// handler has finished.
type Server struct {
	http *http.Server
	url  string
	log  io.Writer // nil for no log; written under mu

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
		url:    "http://" + ln.Addr().String() + "/v1",
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

// URL is the base URL clients are configured with, ending in /v1, e.g.
// http://127.0.0.1:40123/v1.
func (s *Server) URL() string { return s.url }

// SetKey sets the API key the server expects. From then on a request is
// answered 401 unless it carries "Authorization: Bearer <key>", and the 401
// message echoes the key received, as some real providers do. With no key set
// (or ""), any authorization is accepted.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

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
	if !s.enter() {
		writeError(w, http.StatusServiceUnavailable, "fakellm: server closed")
		return
	}
	defer s.active.Done()
	auth, received, refused := s.checkAuth(r.Header.Get("Authorization"))
	i := s.arrive(auth)
	status, u := s.serve(w, r, i, received, refused)
	rec := s.finish(i, status, u)
	s.logf("fakellm: #%d %s %s model=%q auth=%s rule=%d status=%d\n", i+1, r.Method, r.URL.Path, rec.Model, rec.Auth, rec.Rule, rec.Status)
}

// serve writes the answer to request i and returns its status and usage.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, i int, received string, refused bool) (int, usage) {
	if r.Method != http.MethodPost || r.URL.Path != chatPath {
		return fail(w, http.StatusNotFound, fmt.Sprintf("fakellm: no route for %s %s; want POST %s", r.Method, r.URL.Path, chatPath))
	}
	req, parseErr := readRequest(r)
	s.describe(i, req)
	switch {
	case refused && received == "":
		return fail(w, http.StatusUnauthorized, "You didn't provide an API key.")
	case refused:
		return fail(w, http.StatusUnauthorized, "Incorrect API key provided: "+received)
	case parseErr != nil:
		return fail(w, http.StatusBadRequest, "fakellm: "+parseErr.Error())
	case req.Stream:
		return fail(w, http.StatusBadRequest, "fakellm: streaming is not supported")
	}
	n, rule, ok := s.choose(i, req)
	if !ok {
		return fail(w, http.StatusInternalServerError, "fakellm: no rule matches")
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
			msg = http.StatusText(rule.Status)
		}
		return fail(w, rule.Status, msg)
	}
	reply, err := replyFor(rule, req.Messages)
	if err != nil {
		return fail(w, http.StatusInternalServerError, fmt.Sprintf("fakellm: rule %d: %v", n, err))
	}
	u := usageFor(req.Messages, reply)
	writeCompletion(w, i+1, req.Model, reply, u)
	return http.StatusOK, u
}

func fail(w http.ResponseWriter, status int, message string) (int, usage) {
	writeError(w, status, message)
	return status, usage{}
}

// checkAuth classifies an Authorization header as "none" (absent), "ok" or
// "wrong", returns the key it carried (the whole header when it is not a
// Bearer token), and reports whether the request is refused: only when a key
// is expected and the header does not carry it.
func (s *Server) checkAuth(header string) (auth, received string, refused bool) {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	token, bearer := strings.CutPrefix(header, "Bearer ")
	received = header
	if bearer {
		received = token
	}
	switch {
	case header == "":
		return "none", "", key != ""
	case key == "" || bearer && token == key:
		return "ok", received, false
	}
	return "wrong", received, true
}

func readRequest(r *http.Request) (chatRequest, error) {
	var req chatRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return req, fmt.Errorf("read request body: %w", err)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return chatRequest{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	return req, nil
}

// choose picks the rule for request i, counts its use and records its index.
func (s *Server) choose(i int, req chatRequest) (int, Rule, bool) {
	text := transcript(req.Messages)
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, rule := range s.rules {
		if rule.Times > 0 && s.used[n] >= rule.Times {
			continue
		}
		if rule.Model != "" && rule.Model != req.Model {
			continue
		}
		if !strings.Contains(text, rule.Match) {
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

func replyFor(rule Rule, msgs []Message) (string, error) {
	switch {
	case rule.Echo:
		return lastUser(msgs), nil
	case rule.ReplyFile != "": // the file's bytes exactly, trailing newline included
		data, err := os.ReadFile(rule.ReplyFile)
		if err != nil {
			return "", fmt.Errorf("read reply file: %w", err)
		}
		return string(data), nil
	}
	return rule.Reply, nil
}

func (s *Server) logf(format string, args ...any) {
	if s.log == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.log, format, args...)
}
