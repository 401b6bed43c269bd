package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/git-descent/git-descent/agent"
)

// graded is partial credit with a noisy agent: 12 topics, each with three
// true facts (and two false ones the proposer may believe), each asked in
// 3 of 36 tasks. The skill lists "- topic: fact" lines (one true fact per
// topic to start with). The agent says each fact listed for the topic
// with probability 0.9, so repeats differ; the reward is (true facts said −
// false facts said)/3, at least 0. The proposer adds one fact per call,
// true three times in four, for a topic it was shown failing three times
// in four.
type graded struct{}

const (
	gradedTopics = 12
	factsPer     = 3
	sayFact      = 0.9 // the agent's chance of saying a listed fact
)

var (
	topicRE = regexp.MustCompile(`about topic-(\d+)`)
	factRE  = regexp.MustCompile(`\bf\d+-[tx]\d+\b`)
)

func (graded) Name() string    { return "graded" }
func (graded) Target() float64 { return 0.8 } // the best skill scores 0.9 on average

func topicName(t int) string { return fmt.Sprintf("topic-%02d", t) }

// trueFact and falseFact name topic t's facts.
func trueFact(t, k int) string  { return fmt.Sprintf("f%02d-t%d", t, k) }
func falseFact(t, k int) string { return fmt.Sprintf("f%02d-x%d", t, k) }

func (g graded) Files() map[string]string {
	var tasks [][3]string
	asks := []string{"List what you know about %s.", "Tell me the facts about %s.", "What is known about %s?"}
	skill := frontmatter("graded", "List the facts about a topic.") + "# Facts\n\nList every fact the skill gives for the topic, separated by commas.\n\n## Facts\n\n"
	for t := 0; t < gradedTopics; t++ {
		var facts []string
		for k := 0; k < factsPer; k++ {
			facts = append(facts, trueFact(t, k))
		}
		for i, a := range asks {
			tasks = append(tasks, [3]string{fmt.Sprintf("%s-%d", topicName(t), i+1), fmt.Sprintf(a, topicName(t)), strings.Join(facts, ", ")})
		}
		skill += fmt.Sprintf("- %s: %s\n", topicName(t), trueFact(t, 0))
	}
	return map[string]string{
		path(g) + "/" + skillFile:     skill,
		path(g) + "/evals/evals.json": evalsJSON("graded", tasks),
		"README.md":                   "# graded bench\n",
	}
}

func (graded) Config(seed int) map[string]string {
	return map[string]string{
		"run":           "git-descent bench-agent graded",
		"proposer":      fmt.Sprintf("git-descent bench-propose graded --seed %d", seed),
		"scorer":        "command",
		"score-command": "git-descent bench-score graded",
	}
}

// listed returns the facts the skill lists for topic t.
func listed(skill map[string]string, t int) []string {
	var out []string
	prefix := "- " + topicName(t) + ": "
	for _, l := range strings.Split(skill[skillFile], "\n") {
		if f, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

func topicOf(prompt string) int {
	m := topicRE.FindStringSubmatch(prompt)
	if m == nil {
		return -1
	}
	var t int
	fmt.Sscan(m[1], &t)
	return t
}

func (graded) Answer(skill map[string]string, prompt string) string {
	t := topicOf(prompt)
	if t < 0 {
		return "unknown topic"
	}
	var said []string
	for _, f := range listed(skill, t) {
		if rand.Float64() < sayFact {
			said = append(said, f)
		}
	}
	return strings.Join(said, ", ")
}

func (graded) Propose(rng *rand.Rand, skill map[string]string, fb agent.Feedback) string {
	t := -1
	if rng.Float64() < 0.75 {
		t = topicOf(failedPrompt(rng, fb))
	}
	if t < 0 {
		t = rng.IntN(gradedTopics)
	}
	have := map[string]bool{}
	for _, f := range listed(skill, t) {
		have[f] = true
	}
	var pick []string
	if rng.Float64() < 0.75 {
		for k := 0; k < factsPer; k++ {
			if f := trueFact(t, k); !have[f] {
				pick = append(pick, f)
			}
		}
	}
	if len(pick) == 0 {
		for k := 0; k < 2; k++ {
			if f := falseFact(t, k); !have[f] {
				pick = append(pick, f)
			}
		}
	}
	if len(pick) == 0 {
		return ""
	}
	f := pick[rng.IntN(len(pick))]
	line := fmt.Sprintf("- %s: %s", topicName(t), f)
	skill[skillFile] = setLine(skill[skillFile], line, line, "- ")
	return fmt.Sprintf("Add a fact about %s", topicName(t))
}

func (graded) Score(expected, output string) float64 {
	want := map[string]bool{}
	for _, f := range strings.Split(expected, ", ") {
		want[f] = true
	}
	hits, misses := 0, 0
	seen := map[string]bool{}
	for _, f := range factRE.FindAllString(output, -1) {
		if seen[f] {
			continue
		}
		seen[f] = true
		if want[f] {
			hits++
		} else {
			misses++
		}
	}
	return math.Max(0, float64(hits-misses)) / factsPer
}

func (graded) Truth(skill map[string]string) (float64, int) {
	var sum float64
	wrong := 0
	for t := 0; t < gradedTopics; t++ {
		right, bad := 0, 0
		seen := map[string]bool{}
		for _, f := range listed(skill, t) {
			if seen[f] {
				continue
			}
			seen[f] = true
			if strings.Contains(f, "-t") {
				right++
			} else {
				bad++
			}
		}
		wrong += bad
		sum += expectedCredit(right, bad)
	}
	return sum / gradedTopics, wrong
}

// expectedCredit is E[max(0, X − Y)]/3 for X ~ Bin(right, 0.9), Y ~ Bin(bad, 0.9).
func expectedCredit(right, bad int) float64 {
	var e float64
	for x := 0; x <= right; x++ {
		for y := 0; y <= bad; y++ {
			if x > y {
				e += binom(right, x) * binom(bad, y) * float64(x-y)
			}
		}
	}
	return e / factsPer
}

func binom(n, k int) float64 {
	c := 1.0
	for i := 0; i < k; i++ {
		c = c * float64(n-i) / float64(i+1)
	}
	return c * math.Pow(sayFact, float64(k)) * math.Pow(1-sayFact, float64(n-k))
}
