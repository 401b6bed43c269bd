package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// claudeResult is the object `claude -p --output-format json` prints, and
// the last line of `--output-format stream-json`.
type claudeResult struct {
	Type      string   `json:"type"`
	Subtype   string   `json:"subtype"`
	IsError   bool     `json:"is_error"`
	Result    string   `json:"result"`
	Errors    []string `json:"errors"`
	CostUSD   float64  `json:"total_cost_usd"`
	APIStatus int      `json:"api_error_status"` // null (0) when the request never got an answer
	APIError  string   `json:"api_error"`        // e.g. "connection_failed"
	APIType   string   `json:"api_error_type"`   // e.g. "overloaded_error"
	Terminal  string   `json:"terminal_reason"`  // e.g. "completed", "max_turns", "api_error"
	NumTurns  int      `json:"num_turns"`
	Denials   []denial `json:"permission_denials"`
	Usage     struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]json.RawMessage `json:"modelUsage"`
}

// denial is a tool call Claude Code's permission mode refused.
type denial struct {
	Tool  string         `json:"tool_name"`
	ID    string         `json:"tool_use_id"`
	Input map[string]any `json:"tool_input"`
}

// claudeMessage is a line of stream-json output other than the result; only
// tool results are read, for the reasons of refused calls.
type claudeMessage struct {
	Type    string `json:"type"`
	Message struct {
		Content []struct {
			Type    string          `json:"type"`
			ID      string          `json:"tool_use_id"`
			IsError bool            `json:"is_error"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
	} `json:"message"`
}

// parseClaude reads Claude Code's output: one JSON result object, an array
// of messages ending in it (--verbose in a user's settings), or JSON lines
// (stream-json), whose tool results give the reasons for refused calls.
// is_error decides failure (the subtype can say "success" on a failed run);
// an API that refused or could not be reached is an InfraError.
func parseClaude(stdout []byte) (Result, error) {
	r, reasons, err := readClaude(bytes.TrimSpace(stdout))
	if err != nil {
		// No account of the run at all: the client itself did not work.
		return Result{}, &InfraError{Err: err}
	}
	u := r.Usage
	res := Result{Text: r.Result, InputTokens: u.Input + u.CacheCreation + u.CacheRead, OutputTokens: u.Output, Cost: r.CostUSD}
	for m := range r.ModelUsage {
		if res.Model == "" || m < res.Model {
			res.Model = m // the first by name, so records are stable
		}
	}
	for _, d := range r.Denials {
		res.Denied = append(res.Denied, describeDenial(d, reasons[d.ID]))
	}
	if !r.IsError && !strings.HasPrefix(r.Subtype, "error") {
		return res, nil
	}
	msg := r.Result
	if msg == "" {
		msg = strings.Join(r.Errors, "; ")
	}
	if msg == "" {
		msg = r.Subtype
	}
	return res, claudeFailure(r, msg)
}

// readClaude finds the result in any of the three output shapes, with the
// text of every failed tool result by call ID.
func readClaude(data []byte) (claudeResult, map[string]string, error) {
	var r claudeResult
	reasons := map[string]string{}
	var lines [][]byte
	switch {
	case len(data) == 0:
		return r, nil, errors.New("claude printed nothing")
	case data[0] == '[':
		var all []json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			return r, nil, fmt.Errorf("claude: output is not JSON: %w", err)
		}
		for _, m := range all {
			lines = append(lines, m)
		}
	case bytes.IndexByte(data, '\n') > 0 && data[0] == '{':
		lines = bytes.Split(data, []byte("\n"))
	default:
		if err := json.Unmarshal(data, &r); err != nil {
			return r, nil, fmt.Errorf("claude: output is not JSON (%s): %w", clipText(string(data), 200), err)
		}
		return r, reasons, nil
	}
	found := false
	for _, line := range lines {
		var m claudeMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "result":
			if json.Unmarshal(line, &r) == nil {
				found = true
			}
		case "user":
			for _, c := range m.Message.Content {
				if c.Type == "tool_result" && c.IsError {
					reasons[c.ID] = contentText(c.Content)
				}
			}
		}
	}
	if !found {
		return r, nil, fmt.Errorf("claude: no result message in its output (%s)", clipText(string(data), 200))
	}
	return r, reasons, nil
}

// contentText is a tool result's content: a string or text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, " ")
}

// describeDenial names a refused call: the tool, the file or command it
// was for, and the client's reason when it gave one.
func describeDenial(d denial, reason string) string {
	s := d.Tool
	for _, k := range []string{"file_path", "notebook_path", "path", "command"} {
		if v, ok := d.Input[k].(string); ok && v != "" {
			s += " " + clipText(v, 160)
			break
		}
	}
	if reason = strings.TrimSpace(reason); reason != "" {
		s += ": " + clipText(oneLine(reason), 240)
	}
	return s
}

// claudeFixes are what Claude Code's fatal outages tell the user to do.
var claudeFixes = fixes{
	login: "give it ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or `login = user` to use your own login; see the README",
	key:   "check ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or the login",
	model: "check run-model / proposer-model and ANTHROPIC_BASE_URL",
}

// claudeFailure classifies a failed Claude Code run (see outage): its
// result carries the API's status, or says the request got no answer.
func claudeFailure(r claudeResult, msg string) error {
	err := fmt.Errorf("claude reported an error (%s): %s", r.Subtype, clipText(msg, 300))
	if r.APIStatus != 0 {
		err = fmt.Errorf("claude: the API answered %d %s: %s", r.APIStatus, r.APIType, clipText(msg, 300))
	}
	noLogin := strings.Contains(msg, "Not logged in") || strings.Contains(msg, "/login")
	unanswered := r.APIError != "" || r.Terminal == "api_error"
	return outage(err, r.APIStatus, msg, noLogin, unanswered, claudeFixes)
}

// fixes are what a client's fatal outages tell the user to do: no login,
// refused credentials, an unknown model.
type fixes struct{ login, key, model string }

// outage classifies a failed CLI agent run from what the client said: the
// HTTP status its API answered (0 for none), whether it has no login,
// whether its request never got an answer. No login, refused credentials,
// an unknown model and a spent usage limit are fatal, with the fix; an
// overloaded, rate-limited, failing or unreachable API is transient; the
// rest (say, the turn limit) is the run's own failure, err as it is.
func outage(err error, status int, msg string, noLogin, unanswered bool, fix fixes) error {
	fatal := func(hint string) error { return &InfraError{Err: fmt.Errorf("%w (%s)", err, hint), Fatal: true} }
	switch {
	case noLogin:
		return fatal(fix.login)
	case status == 401 || status == 403:
		return fatal(fix.key)
	case status == 404:
		return fatal(fix.model)
	case status == 429 && usageLimit(msg):
		return fatal("the account's usage limit: resume when it resets")
	case transientStatus(status), status == 0 && unanswered:
		return &InfraError{Err: err}
	}
	return err
}

// transientStatus reports an HTTP status worth retrying later: timeouts,
// conflicts, rate limits, server errors, 529 overloaded.
func transientStatus(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500 && status <= 599
}

func usageLimit(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "usage limit") || strings.Contains(m, "session limit") || strings.Contains(m, "insufficient_quota") || strings.Contains(m, "exceeded your current quota")
}

// codexEvent is one line of `codex exec --json`.
type codexEvent struct {
	Type string `json:"type"`
	Item *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Usage *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

// parseCodex reads Codex's JSONL events: the last agent message is the
// answer, turn.completed events carry usage, and turn.failed (or no
// completed turn at all) is a failure. Top-level "error" events can be
// transient reconnects and only explain a failure.
func parseCodex(stdout []byte) (Result, error) {
	var res Result
	var lastErr string
	completed, failed, events := false, "", 0
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev codexEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		events++
		switch ev.Type {
		case "item.completed":
			if ev.Item != nil && ev.Item.Type == "agent_message" {
				res.Text = ev.Item.Text
			}
		case "turn.completed":
			completed = true
			if u := ev.Usage; u != nil {
				res.InputTokens += u.Input
				res.OutputTokens += u.Output
			}
		case "turn.failed":
			failed = "turn failed"
			if ev.Error != nil && ev.Error.Message != "" {
				failed = ev.Error.Message
			}
		case "error":
			lastErr = ev.Message
		}
	}
	switch {
	case failed != "":
		return res, codexFailure(fmt.Errorf("codex reported an error: %s", clipText(failed, 300)), failed)
	case !completed && lastErr != "":
		return res, codexFailure(fmt.Errorf("codex did not finish: %s", clipText(lastErr, 300)), lastErr)
	case events == 0:
		// It never started a thread: a configuration or login problem that
		// its standard error explains.
		return res, &InfraError{Err: errors.New("codex printed no events")}
	case !completed:
		return res, errors.New("codex did not finish a turn (no turn.completed event in its output)")
	}
	return res, nil
}

var codexStatus = regexp.MustCompile(`(?:unexpected status|last status:) (\d{3})`)

// codexFixes are what Codex's fatal outages tell the user to do.
var codexFixes = fixes{
	login: "check the provider's key variable, or `login = user` to use your own login; see the README",
	key:   "check the provider's key variable, or `login = user` to use your own login; see the README",
	model: "check run-model / proposer-model and the provider's base_url in config.toml",
}

// codexFailure classifies a failed Codex turn by its message (see outage),
// which carries the API's status ("unexpected status 401 ...").
func codexFailure(err error, msg string) error {
	status := 0
	if m := codexStatus.FindStringSubmatch(msg); m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	lower := strings.ToLower(msg)
	noLogin := strings.Contains(msg, "Missing environment variable") || strings.Contains(lower, "not logged in")
	return outage(err, status, msg, noLogin, networkFailure(lower), codexFixes)
}

func networkFailure(lower string) bool {
	for _, s := range []string{"stream disconnected", "error sending request", "connection failed", "connection refused", "connection reset", "waiting for network", "timed out", "timeout"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// codexOffline reports the line Codex prints while it waits for a network
// that is not there, which it would do until the rollout's timeout.
func codexOffline(line []byte) bool {
	return bytes.Contains(line, []byte(`"type":"error"`)) && bytes.Contains(line, []byte("waiting for network"))
}
