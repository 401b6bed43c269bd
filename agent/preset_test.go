package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestParseClaude(t *testing.T) {
	ok := `{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"num_turns":2,"result":"8.05 km","session_id":"s1","total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":5},"modelUsage":{"claude-sonnet":{"inputTokens":10,"costUSD":0.5}}}`
	r, err := parseClaude([]byte(ok))
	if err != nil || r.Text != "8.05 km" || r.InputTokens != 17 || r.OutputTokens != 5 || r.Cost != 0.5 || r.Model != "claude-sonnet" {
		t.Fatalf("parseClaude = %+v, %v", r, err)
	}
	// Verbose settings print every message as an array; the result is last.
	arr := `[{"type":"system","subtype":"init"},{"type":"assistant"},` + ok + `]`
	if r, err := parseClaude([]byte(arr)); err != nil || r.Text != "8.05 km" {
		t.Fatalf("array: %+v, %v", r, err)
	}
	// is_error decides, even with subtype "success"; usage is still read.
	limit := `{"is_error":true,"num_turns":29,"total_cost_usd":2.39,"usage":{"input_tokens":100,"output_tokens":7},"subtype":"success","api_error_status":429,"result":"You've hit your session limit","type":"result"}`
	r, err = parseClaude([]byte(limit))
	var infra *InfraError
	if !errors.As(err, &infra) || !strings.Contains(err.Error(), "session limit") || r.Cost != 2.39 {
		t.Fatalf("limit: %+v, %v", r, err)
	}
	if _, err := parseClaude([]byte(`{"type":"result","is_error":true,"result":"Not logged in · Please run /login"}`)); !errors.As(err, &infra) {
		t.Fatalf("not logged in: %v", err)
	}
	sub := `{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["reached max turns"],"usage":{}}`
	if _, err := parseClaude([]byte(sub)); err == nil || !strings.Contains(err.Error(), "error_max_turns") || !strings.Contains(err.Error(), "reached max turns") {
		t.Fatalf("error subtype: %v", err)
	}
	if _, err := parseClaude([]byte("Not JSON at all")); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("garbage: %v", err)
	}
}

func TestParseCodex(t *testing.T) {
	ok := strings.Join([]string{
		`{"type":"thread.started","thread_id":"0199"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}`,
		`{"type":"error","message":"Reconnecting... 1/5"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"first"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"8.05 km"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122,"reasoning_output_tokens":9}}`,
	}, "\n")
	r, err := parseCodex([]byte(ok))
	if err != nil || r.Text != "8.05 km" || r.InputTokens != 24763 || r.OutputTokens != 122 {
		t.Fatalf("parseCodex = %+v, %v", r, err)
	}
	failed := `{"type":"error","message":"stream disconnected"}` + "\n" + `{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`
	if _, err := parseCodex([]byte(failed)); err == nil || !strings.Contains(err.Error(), "stream disconnected before completion") {
		t.Fatalf("failed: %v", err)
	}
	if _, err := parseCodex([]byte(`{"type":"turn.started"}`)); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("unfinished: %v", err)
	}
}

func TestPriceCostsTokensOnlyWithoutReportedCost(t *testing.T) {
	p := Price{Input: 2, Output: 8}
	if c, u := p.spend(Result{InputTokens: 1_000_000, OutputTokens: 500_000}, false); c != 6 || u != 0 {
		t.Fatalf("cost = %v, unpriced %d", c, u)
	}
	if c, u := p.spend(Result{InputTokens: 1_000_000, Cost: 0.25}, true); c != 0.25 || u != 0 {
		t.Fatalf("reported cost replaced: %v, %d", c, u)
	}
	// No price and no report: unknown, never $0.
	if c, u := (Price{}).spend(Result{InputTokens: 100, OutputTokens: 5}, false); c != 0 || u != 105 {
		t.Fatalf("unpriced = %v, %d", c, u)
	}
}

func TestAgentErrorPrefersTheOutputsAccount(t *testing.T) {
	exit := errors.New("exit status 1")
	infra := &InfraError{Err: errors.New("Not logged in")}
	var ie *InfraError
	if err := agentError(exit, infra); !errors.As(err, &ie) {
		t.Fatalf("infra lost behind the exit: %v", err)
	}
	if err := agentError(exit, errors.New("max turns")); err == nil || !strings.Contains(err.Error(), "exit status 1 (max turns)") {
		t.Fatalf("both: %v", err)
	}
	if err := agentError(nil, nil); err != nil {
		t.Fatalf("clean: %v", err)
	}
	if err := agentError(exit, nil); err != exit {
		t.Fatalf("exit only: %v", err)
	}
}

// Rate limits are transient for both clients; a spent usage limit is not.
func TestRateLimitsAreTransient(t *testing.T) {
	var infra *InfraError
	_, err := parseCodex([]byte(`{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}`))
	if !errors.As(err, &infra) || infra.Fatal {
		t.Fatalf("codex 429: %v", err)
	}
	_, err = parseCodex([]byte(`{"type":"turn.failed","error":{"message":"unexpected status 429 Too Many Requests: You've hit your usage limit."}}`))
	if !errors.As(err, &infra) || !infra.Fatal {
		t.Fatalf("codex usage limit: %v", err)
	}
	_, err = parseClaude([]byte(`{"type":"result","is_error":true,"api_error_status":429,"api_error_type":"rate_limit_error","result":"API Error: Rate limited"}`))
	if !errors.As(err, &infra) || infra.Fatal {
		t.Fatalf("claude 429: %v", err)
	}
	_, err = parseCodex([]byte(`{"type":"turn.failed","error":{"message":"Your input exceeds the context window of this model."}}`))
	if err == nil || errors.As(err, &infra) {
		t.Fatalf("a run's own failure taken for an outage: %v", err)
	}
}
