// Package bench measures git-descent's optimizer on generated domains whose
// truth is known: keyword routing (a reproducible agent and a proposer that
// is right three times in four), a coin-flip agent (nothing to learn), and
// a graded-reward domain (a noisy agent, partial credit). Each domain comes
// with its own agent, proposer and scorer, run through the same command
// runner as any (the hidden commands bench-agent, bench-propose and
// bench-score), and with the noise-free score of any version of its skill,
// so the bench can count wrong rules kept and commits that did not truly
// help. `git descent bench` runs every domain under the calibrated gate and
// the strict mean-difference baseline, side by side.
package bench

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/agent"
)

// Domain is one generated benchmark.
type Domain interface {
	Name() string
	// Files are the repository's files: the skill and its evals.
	Files() map[string]string
	// Config is the library's .descent keys beyond path (run, proposer,
	// scorer ...); seed varies the proposer between runs.
	Config(seed int) map[string]string
	// Answer is the agent: its output for a task, given the skill's files.
	Answer(skill map[string]string, prompt string) string
	// Propose is the proposer: it edits the skill's files after feedback
	// and returns the commit subject ("" when it changes nothing).
	Propose(rng *rand.Rand, skill map[string]string, fb agent.Feedback) string
	// Score grades an output (the scorer of domains whose scorer is
	// bench-score).
	Score(expected, output string) float64
	// Truth is the noise-free mean reward of a skill over every task, and
	// the wrong rules it holds.
	Truth(skill map[string]string) (score float64, wrong int)
	// Target is the validation score the bench times.
	Target() float64
}

// Domains are the built-in domains, by name.
var Domains = map[string]Domain{
	"routing":  routing{},
	"coinflip": coinflip{},
	"graded":   graded{},
}

// Names lists the domains in the order the bench runs them.
var Names = []string{"routing", "coinflip", "graded"}

// skillFile is where every domain keeps its rules.
const skillFile = "SKILL.md"

// path is the library's directory in a bench repository.
func path(d Domain) string { return "skills/" + d.Name() }

// evalsJSON renders tasks in the skill-creator schema.
func evalsJSON(name string, tasks [][3]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\"skill_name\": %q, \"evals\": [\n", name)
	for i, t := range tasks {
		sep := ","
		if i == len(tasks)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  {\"id\": %q, \"prompt\": %q, \"expected_output\": %q}%s\n", t[0], t[1], t[2], sep)
	}
	b.WriteString("]}\n")
	return b.String()
}

// frontmatter is a skill's header.
func frontmatter(name, description string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n", name, description)
}

// NewRand returns the proposer's random source for one call: the run's seed
// mixed with everything that makes the call unique (the worker, its
// scratch directory, the skill and the feedback).
func NewRand(seed int, parts ...string) *rand.Rand {
	h := sha256.New()
	fmt.Fprintf(h, "%d", seed)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%s", p)
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

// setLine replaces the first line starting with prefix by line, or appends
// line after the last line starting with group; it returns the new text.
func setLine(text, prefix, line, group string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
			return strings.Join(lines, "\n") + "\n"
		}
		if strings.HasPrefix(l, group) {
			last = i
		}
	}
	if last < 0 {
		lines = append(lines, line)
	} else {
		lines = append(lines[:last+1], append([]string{line}, lines[last+1:]...)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// failedPrompt picks one failure's prompt, or "" when there is none.
func failedPrompt(rng *rand.Rand, fb agent.Feedback) string {
	if len(fb.Failures) == 0 {
		return ""
	}
	return fb.Failures[rng.IntN(len(fb.Failures))].Prompt
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
