package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Rule is one scripted behaviour. For each request the server uses the first
// rule, in order, whose Match is a substring of the request's transcript,
// whose Last is a substring of the last message, whose Model (if set) equals
// the requested model, whose API (if set) is the request's protocol, and
// whose Times is not used up.
//
// The transcript is the text of every message joined with "\n", where a
// message's text is its content, then each tool call it carries as the tool's
// name, a space and the input as JSON, then each tool result's content, one
// per line. Chat-completions transcripts include system messages; Anthropic
// and Responses transcripts leave out the system prompt (the "system" field,
// "instructions", and system or developer messages), which Claude Code and
// Codex fill with thousands of words. Last searches the text of the last
// message, which after a tool call is the message carrying its result.
//
// A rule answers with at most one of Reply, ReplyFile or Echo; with none of
// them the reply text is empty. With Tool the reply also calls that tool with
// Input (default {}): an Anthropic tool_use block (stop_reason "tool_use"), a
// Responses function_call item, or a chat-completions tool call. A Status
// other than 0 or 200 answers with that status and the protocol's error body
// instead.
//
// In JSON, a rule is an object whose fields are named as in the tags below;
// Delay is a string for time.ParseDuration ("1500ms"), Input is a JSON
// object, and unknown fields are an error, so that a misspelt field fails
// loudly. A two-turn script for Claude Code as a proposer, which edits with a
// tool and then answers once the tool's result comes back:
//
//	[
//	  {"api": "anthropic", "last": "has been updated successfully", "reply": "Subject\n\nBody"},
//	  {"api": "anthropic", "match": "Failed tasks", "tool": "Edit",
//	   "input": {"file_path": "SKILL.md", "old_string": "old", "new_string": "new"}}
//	]
type Rule struct {
	Match      string          `json:"match"`                 // "" matches every request
	Last       string          `json:"last,omitempty"`        // "" matches every request
	Model      string          `json:"model,omitempty"`       // "" matches every model
	API        string          `json:"api,omitempty"`         // "chat", "anthropic" or "responses"; "" matches every protocol
	Reply      string          `json:"reply,omitempty"`       // the assistant's text
	ReplyFile  string          `json:"reply_file,omitempty"`  // read the text from this file at request time
	Echo       bool            `json:"echo,omitempty"`        // reply with the last user message's content
	Tool       string          `json:"tool,omitempty"`        // call this tool, e.g. "Write" (Claude) or "exec_command" (Codex)
	Input      json.RawMessage `json:"input,omitempty"`       // the tool call's arguments, a JSON object
	Status     int             `json:"status,omitempty"`      // 400–599: answer with this status and an error body
	Message    string          `json:"message,omitempty"`     // the error message for Status; default the status text ("Overloaded" for 529)
	RetryAfter string          `json:"retry_after,omitempty"` // value of a Retry-After header, e.g. "1"
	Delay      time.Duration   `json:"delay,omitempty"`       // wait before answering, unless the client goes away
	Times      int             `json:"times,omitempty"`       // use the rule this many times, then skip it; 0 means always
}

// ruleJSON is Rule as it is written in JSON.
type ruleJSON struct {
	Match      string          `json:"match"`
	Last       string          `json:"last,omitempty"`
	Model      string          `json:"model,omitempty"`
	API        string          `json:"api,omitempty"`
	Reply      string          `json:"reply,omitempty"`
	ReplyFile  string          `json:"reply_file,omitempty"`
	Echo       bool            `json:"echo,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Status     int             `json:"status,omitempty"`
	Message    string          `json:"message,omitempty"`
	RetryAfter string          `json:"retry_after,omitempty"`
	Delay      string          `json:"delay,omitempty"`
	Times      int             `json:"times,omitempty"`
}

// UnmarshalJSON reads a rule, rejecting unknown fields and parsing Delay as a
// duration string.
func (r *Rule) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j ruleJSON
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var delay time.Duration
	if j.Delay != "" {
		d, err := time.ParseDuration(j.Delay)
		if err != nil {
			return fmt.Errorf("delay: %w", err)
		}
		delay = d
	}
	*r = Rule{
		Match: j.Match, Last: j.Last, Model: j.Model, API: j.API,
		Reply: j.Reply, ReplyFile: j.ReplyFile, Echo: j.Echo, Tool: j.Tool, Input: j.Input,
		Status: j.Status, Message: j.Message, RetryAfter: j.RetryAfter,
		Delay: delay, Times: j.Times,
	}
	return nil
}

// MarshalJSON writes a rule in the form UnmarshalJSON reads.
func (r Rule) MarshalJSON() ([]byte, error) {
	j := ruleJSON{
		Match: r.Match, Last: r.Last, Model: r.Model, API: r.API,
		Reply: r.Reply, ReplyFile: r.ReplyFile, Echo: r.Echo, Tool: r.Tool, Input: r.Input,
		Status: r.Status, Message: r.Message, RetryAfter: r.RetryAfter,
		Times: r.Times,
	}
	if r.Delay != 0 {
		j.Delay = r.Delay.String()
	}
	return json.Marshal(j)
}

// LoadRules reads a JSON array of rules from path. A relative ReplyFile is
// made relative to the directory holding path. Errors name the file and, when
// one rule is at fault, its index.
func LoadRules(path string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("load rules %q: want a JSON array of rules: %w", path, err)
	}
	rules := make([]Rule, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &rules[i]); err != nil {
			return nil, fmt.Errorf("load rules %q: rule %d: %w", path, i, err)
		}
		if f := rules[i].ReplyFile; f != "" && !filepath.IsAbs(f) {
			rules[i].ReplyFile = filepath.Join(filepath.Dir(path), f)
		}
		if err := rules[i].validate(); err != nil {
			return nil, fmt.Errorf("load rules %q: rule %d: %w", path, i, err)
		}
	}
	return rules, nil
}

// validate reports a rule that cannot be served as written.
func (r Rule) validate() error {
	replies := 0
	for _, set := range []bool{r.Reply != "", r.ReplyFile != "", r.Echo} {
		if set {
			replies++
		}
	}
	switch {
	case replies > 1:
		return errors.New("set at most one of reply, reply_file and echo")
	case r.Status != 0 && r.Status != 200 && (r.Status < 400 || r.Status > 599):
		return fmt.Errorf("status %d: want 200 or 400–599", r.Status)
	case r.Message != "" && !r.failing():
		return errors.New("message needs a status of 400–599")
	case r.Times < 0:
		return fmt.Errorf("times %d: want 0 (always) or more", r.Times)
	case r.Delay < 0:
		return fmt.Errorf("delay %s: want 0 or more", r.Delay)
	case r.API != "" && !knownAPI(r.API):
		return fmt.Errorf("api %q: want chat, anthropic or responses", r.API)
	case len(r.Input) > 0 && r.Tool == "":
		return errors.New("input needs a tool")
	case r.Tool != "" && r.failing():
		return errors.New("set a tool or an error status, not both")
	}
	if len(r.Input) > 0 {
		var object map[string]json.RawMessage
		if err := json.Unmarshal(r.Input, &object); err != nil || object == nil {
			return fmt.Errorf("input %s: want a JSON object", r.Input)
		}
	}
	if r.ReplyFile != "" {
		if _, err := os.Stat(r.ReplyFile); err != nil {
			return fmt.Errorf("reply_file: %w", err)
		}
	}
	return nil
}

// failing reports whether the rule answers with an error status.
func (r Rule) failing() bool {
	return r.Status != 0 && r.Status != 200
}
