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
// rule, in order, whose Match is a substring of the request's message
// contents (joined with "\n"), whose Model (if set) equals the requested
// model, and whose Times is not used up.
//
// A rule answers with at most one of Reply, ReplyFile or Echo; with none of
// them the reply is empty. A Status other than 0 or 200 answers with that
// status and an OpenAI-style error body instead.
//
// In JSON, Delay is a string for time.ParseDuration ("1500ms") and unknown
// fields are an error, so that a misspelt field fails loudly.
type Rule struct {
	Match      string        `json:"match"`                 // "" matches every request
	Model      string        `json:"model,omitempty"`       // "" matches every model
	Reply      string        `json:"reply,omitempty"`       // the assistant message content
	ReplyFile  string        `json:"reply_file,omitempty"`  // read the content from this file at request time
	Status     int           `json:"status,omitempty"`      // 400–599: answer with this status and an error body
	Message    string        `json:"message,omitempty"`     // the error message for Status; default the status text
	RetryAfter string        `json:"retry_after,omitempty"` // value of a Retry-After header, e.g. "1"
	Delay      time.Duration `json:"delay,omitempty"`       // wait before answering, unless the client goes away
	Times      int           `json:"times,omitempty"`       // use the rule this many times, then skip it; 0 means always
	Echo       bool          `json:"echo,omitempty"`        // reply with the last user message's content
}

// ruleJSON is Rule as it is written in JSON.
type ruleJSON struct {
	Match      string `json:"match"`
	Model      string `json:"model,omitempty"`
	Reply      string `json:"reply,omitempty"`
	ReplyFile  string `json:"reply_file,omitempty"`
	Status     int    `json:"status,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	Delay      string `json:"delay,omitempty"`
	Times      int    `json:"times,omitempty"`
	Echo       bool   `json:"echo,omitempty"`
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
		Match: j.Match, Model: j.Model, Reply: j.Reply, ReplyFile: j.ReplyFile,
		Status: j.Status, Message: j.Message, RetryAfter: j.RetryAfter,
		Delay: delay, Times: j.Times, Echo: j.Echo,
	}
	return nil
}

// MarshalJSON writes a rule in the form UnmarshalJSON reads.
func (r Rule) MarshalJSON() ([]byte, error) {
	j := ruleJSON{
		Match: r.Match, Model: r.Model, Reply: r.Reply, ReplyFile: r.ReplyFile,
		Status: r.Status, Message: r.Message, RetryAfter: r.RetryAfter,
		Times: r.Times, Echo: r.Echo,
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
