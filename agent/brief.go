package agent

import (
	"fmt"
	"strings"
)

// Brief is the text a proposer is given: what the library is for, the
// rules of what it may change, and the failed and passed rollouts of a
// minibatch. Outputs and prompts are clipped to keep it readable.
func Brief(fb Feedback, guarded []string) string {
	if fb.Repair != nil {
		return repairBrief(fb, guarded)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You maintain the agent skill %q, whose files are in %s.\n", fb.Library, fb.SkillDir)
	b.WriteString("An agent used the skill on the tasks below. Improve the skill's files so that this kind of failure stops:\n")
	b.WriteString("generalise from the failures; do not hard-code answers to these particular tasks.\n\n")
	writeRules(&b, fb.Frozen, guarded, "only when instructions cannot fix the problem",
		"- Keep the tasks that passed passing.\n- Finish with one line saying what you changed and why (it becomes the commit subject), optionally followed by a short paragraph.\n")
	fmt.Fprintf(&b, "\n## Failed tasks (%d)\n", len(fb.Failures))
	for _, a := range fb.Failures {
		writeAttempt(&b, a)
	}
	if len(fb.Passed) > 0 {
		fmt.Fprintf(&b, "\n## Passed tasks (%d)\n", len(fb.Passed))
		for _, a := range fb.Passed {
			fmt.Fprintf(&b, "- %s: %s\n", a.TaskID, clipText(oneLine(a.Prompt), 200))
		}
	}
	return b.String()
}

func writeAttempt(b *strings.Builder, a Attempt) {
	fmt.Fprintf(b, "\n### Task %s (score %.2f)\n", a.TaskID, a.Score)
	fmt.Fprintf(b, "Prompt:\n%s\n", clipText(a.Prompt, 4000))
	fmt.Fprintf(b, "Agent's output:\n%s\n", clipText(strings.TrimSpace(a.Output), 4000))
	if a.Error != "" {
		fmt.Fprintf(b, "The agent failed: %s\n", clipText(a.Error, 1000))
	}
	if a.Expected != "" {
		fmt.Fprintf(b, "Expected output:\n%s\n", clipText(a.Expected, 4000))
	}
	if len(a.Expectations) > 0 {
		b.WriteString("Expectations a grader checks:\n")
		for _, e := range a.Expectations {
			fmt.Fprintf(b, "- %s\n", e)
		}
	}
}

// clipText shortens s to at most n bytes, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes cut]", len(s)-cut)
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// repairBrief asks a proposer to re-make an older proposal on the current
// files: its change, and what reached the library since it was made.
func repairBrief(fb Feedback, guarded []string) string {
	r := fb.Repair
	var b strings.Builder
	fmt.Fprintf(&b, "You maintain the agent skill %q, whose files are in %s.\n", fb.Library, fb.SkillDir)
	b.WriteString("An edit was proposed for an older version of these files, and other edits have landed since.\n")
	b.WriteString("Re-apply the intent of the old edit to the files as they are now, keeping what the newer edits did.\n")
	b.WriteString("If nothing of it is still needed (the newer edits already do it, or contradict it for good reason), change nothing.\n\n")
	writeRules(&b, fb.Frozen, guarded, "only when the old edit did",
		"- Finish with one line saying what you re-applied (it becomes the commit subject).\n")
	fmt.Fprintf(&b, "\n## The old edit (%s): %s\n", r.Proposal, r.Subject)
	if r.Body != "" {
		fmt.Fprintf(&b, "%s\n", r.Body)
	}
	fmt.Fprintf(&b, "\n```diff\n%s```\n", clipText(r.Diff, 12000))
	fmt.Fprintf(&b, "\n## What landed since\n%s\n\n```diff\n%s```\n", r.DevLog, clipText(r.DevDiff, 12000))
	return b.String()
}

// writeRules states what a proposer may change: only the skill's files,
// never the frozen ones, guarded ones only when codeWhen; then the closing
// rules in tail.
func writeRules(b *strings.Builder, frozen, guarded []string, codeWhen, tail string) {
	b.WriteString("Rules:\n- Edit only files inside the skill's directory.\n")
	if len(frozen) > 0 {
		fmt.Fprintf(b, "- Never change files matching %s (they are frozen: evals and configuration).\n", strings.Join(frozen, ", "))
	}
	if len(guarded) > 0 {
		fmt.Fprintf(b, "- Files matching %s are code: change them %s.\n", strings.Join(guarded, ", "), codeWhen)
	}
	b.WriteString(tail)
}
