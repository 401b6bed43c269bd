package fakellm

import (
	"encoding/json"
	"fmt"
	"os"
)

// answer is what a rule replies with, before a protocol encodes it.
type answer struct {
	Text  string
	Call  *ToolCall // nil for a text-only reply; its Input is compact JSON
	Usage usage
}

// answerFor builds the answer of rule to req, the seq-th request. A tool
// call's ID is derived from seq, so IDs are unique within a server.
func answerFor(rule Rule, req request, seq int) (answer, error) {
	text, err := replyText(rule, req.Messages)
	if err != nil {
		return answer{}, err
	}
	a := answer{Text: text}
	if rule.Tool != "" {
		args := rule.Input
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		a.Call = &ToolCall{ID: fmt.Sprintf("call_fake_%d", seq), Name: rule.Tool, Input: input(args)}
	}
	a.Usage = usageFor(req.Messages, a)
	return a, nil
}

// showsText reports whether a reply shows its text: always, unless the text
// is empty beside a tool call.
func (a answer) showsText() bool { return a.Text != "" || a.Call == nil }

func replyText(rule Rule, msgs []Message) (string, error) {
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
