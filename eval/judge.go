package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/git-descent/git-descent/llm"
)

// judge grades an output with a chat model: each of the task's
// expectations passes or fails with evidence, and the reward is the pass
// rate. A task without expectations is judged on one: that the output
// gives its expected output. A reply that is not the required JSON is sent
// back once with the error; a second bad reply is an error.
type judge struct{ client *llm.Client }

const judgeSystem = `You grade the output of an AI agent. For each expectation, decide whether the output meets it, and quote the part of the output that shows it (or say what is missing).
Be strict: an expectation passes only when the output clearly meets it.
Reply with JSON only, in exactly this shape, one entry per expectation in the given order:
{"expectations": [{"text": "<the expectation>", "passed": true, "evidence": "<quote or reason>"}]}`

func (j judge) Score(ctx context.Context, t Task, output string) (float64, error) {
	g, err := j.Grade(ctx, t, output)
	return g.Reward, err
}

func (j judge) Grade(ctx context.Context, t Task, output string) (Grade, error) {
	exps := t.Expectations
	if len(exps) == 0 {
		if strings.TrimSpace(t.Expected) == "" {
			return Grade{}, fmt.Errorf("task %s: the judge needs expectations or an expected output", taskRef(t))
		}
		exps = []string{"The output gives the expected answer: " + t.Expected}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Task given to the agent\n%s\n\n", t.Prompt)
	if t.Expected != "" {
		fmt.Fprintf(&b, "## Expected output (reference)\n%s\n\n", t.Expected)
	}
	b.WriteString("## Expectations\n")
	for i, e := range exps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, e)
	}
	fmt.Fprintf(&b, "\n## The agent's output\n%s\n", output)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: judgeSystem}, {Role: llm.RoleUser, Content: b.String()}}
	var g Grade
	for attempt := 1; ; attempt++ {
		resp, err := j.client.Complete(ctx, llm.Request{Messages: msgs})
		g.Tokens += resp.Usage.Tokens()
		g.Cost += resp.Usage.Cost
		if err != nil {
			return g, fmt.Errorf("judge task %s: %w", taskRef(t), err)
		}
		vs, perr := parseVerdicts(resp.Text, len(exps))
		if perr == nil {
			passed := 0
			for i := range vs {
				vs[i].Text = exps[i]
				if vs[i].Passed {
					passed++
				}
			}
			g.Expectations, g.Reward = vs, float64(passed)/float64(len(vs))
			return g, nil
		}
		if attempt == 2 {
			return g, fmt.Errorf("judge task %s: its reply was not the required JSON twice; last: %w", taskRef(t), perr)
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
			llm.Message{Role: llm.RoleUser, Content: "That reply could not be read: " + perr.Error() + ". Reply again with the JSON only."})
	}
}

// parseVerdicts reads the judge's JSON, tolerating text or a code fence
// around the object, and requires one verdict per expectation.
func parseVerdicts(reply string, n int) ([]Verdict, error) {
	start, end := strings.Index(reply, "{"), strings.LastIndex(reply, "}")
	if start < 0 || end < start {
		return nil, errors.New("no JSON object in the reply")
	}
	var out struct {
		Expectations []struct {
			Text     string `json:"text"`
			Passed   *bool  `json:"passed"`
			Evidence string `json:"evidence"`
		} `json:"expectations"`
	}
	if err := json.Unmarshal([]byte(reply[start:end+1]), &out); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if len(out.Expectations) != n {
		return nil, fmt.Errorf("%d verdicts for %d expectations", len(out.Expectations), n)
	}
	vs := make([]Verdict, n)
	for i, e := range out.Expectations {
		if e.Passed == nil {
			return nil, fmt.Errorf("verdict %d has no \"passed\" boolean", i+1)
		}
		vs[i] = Verdict{Text: e.Text, Passed: *e.Passed, Evidence: e.Evidence}
	}
	return vs, nil
}
