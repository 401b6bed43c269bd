package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// claudeResult is the object `claude -p --output-format json` prints.
type claudeResult struct {
	Type     string   `json:"type"`
	Subtype  string   `json:"subtype"`
	IsError  bool     `json:"is_error"`
	Result   string   `json:"result"`
	Errors   []string `json:"errors"`
	CostUSD  float64  `json:"total_cost_usd"`
	APIError int      `json:"api_error_status"`
	NumTurns int      `json:"num_turns"`
	Usage    struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]json.RawMessage `json:"modelUsage"`
}

// parseClaude reads Claude Code's JSON result. With verbose output enabled
// in a user's settings it prints an array of messages whose last "result"
// element is the same object. is_error decides failure (the subtype can
// say "success" on a failed run).
func parseClaude(stdout []byte) (Result, error) {
	data := bytes.TrimSpace(stdout)
	var r claudeResult
	if len(data) > 0 && data[0] == '[' {
		var all []json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			return Result{}, fmt.Errorf("claude: output is not JSON: %w", err)
		}
		found := false
		for i := len(all) - 1; i >= 0 && !found; i-- {
			var m claudeResult
			if json.Unmarshal(all[i], &m) == nil && m.Type == "result" {
				r, found = m, true
			}
		}
		if !found {
			return Result{}, errors.New("claude: no result message in its output")
		}
	} else if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, fmt.Errorf("claude: output is not JSON (%s): %w", clipText(string(data), 200), err)
	}
	u := r.Usage
	res := Result{Text: r.Result, InputTokens: u.Input + u.CacheCreation + u.CacheRead, OutputTokens: u.Output, Cost: r.CostUSD}
	for m := range r.ModelUsage {
		res.Model = m
	}
	if r.IsError || strings.HasPrefix(r.Subtype, "error") {
		msg := r.Result
		if msg == "" {
			msg = strings.Join(r.Errors, "; ")
		}
		if msg == "" {
			msg = r.Subtype
		}
		err := fmt.Errorf("claude reported an error (%s): %s", r.Subtype, clipText(msg, 300))
		// Its API refusing, or no login, says nothing about the skill.
		if r.APIError != 0 || strings.HasPrefix(msg, "Not logged in") || strings.Contains(msg, "Invalid API key") {
			return res, &InfraError{Err: fmt.Errorf("%w (check its login or ANTHROPIC_API_KEY)", err), Fatal: true}
		}
		return res, err
	}
	return res, nil
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
	completed, failed := false, ""
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
		return res, fmt.Errorf("codex reported an error: %s", clipText(failed, 300))
	case !completed && lastErr != "":
		return res, fmt.Errorf("codex did not finish: %s", clipText(lastErr, 300))
	case !completed:
		return res, errors.New("codex did not finish a turn (no turn.completed event in its output)")
	}
	return res, nil
}
