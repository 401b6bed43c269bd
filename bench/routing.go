package bench

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/git-descent/git-descent/agent"
)

// routing is a support-ticket router: 20 keywords, each owned by one of six
// teams, each in 3 of the 60 tickets. The skill lists "- keyword → team"
// rules (4 to start with: validation 0.20). The agent routes a ticket by
// the first rule whose keyword it contains, else to "triage". The proposer
// adds or rewrites one rule per call: three times in four for a keyword of
// a failed ticket it was shown (else any keyword, so it sometimes rewrites
// a rule that was right), with the right team three times in four.
type routing struct{}

var routes = []struct{ keyword, team string }{
	{"invoice", "billing"}, {"charge", "billing"}, {"subscription", "billing"},
	{"refund", "returns"}, {"exchange", "returns"}, {"warranty", "returns"},
	{"password", "accounts"}, {"login", "accounts"}, {"username", "accounts"},
	{"tracking", "shipping"}, {"delivery", "shipping"}, {"parcel", "shipping"}, {"address", "shipping"},
	{"crash", "technical"}, {"error", "technical"}, {"install", "technical"}, {"update", "technical"},
	{"phishing", "security"}, {"fraud", "security"}, {"breach", "security"},
}

var teams = []string{"billing", "returns", "accounts", "shipping", "technical", "security"}

var ticketTemplates = []string{
	"Hi, I have a problem with my %s. Can you help?",
	"Question about the %s on my account.",
	"Urgent: %s issue since yesterday, please advise.",
}

var ruleRE = regexp.MustCompile(`(?m)^- (\S+) → (\S+)\s*$`)

func (routing) Name() string    { return "routing" }
func (routing) Target() float64 { return 0.95 }

func (r routing) Files() map[string]string {
	var tasks [][3]string
	for _, rt := range routes {
		for i, tmpl := range ticketTemplates {
			tasks = append(tasks, [3]string{fmt.Sprintf("%s-%d", rt.keyword, i+1), fmt.Sprintf(tmpl, rt.keyword), rt.team})
		}
	}
	skill := frontmatter("routing", "Route a customer support ticket to the team that owns it.") +
		"# Ticket routing\n\nAnswer with the team's name only. Route by the first rule whose keyword the ticket contains;\nwith none, answer triage.\n\n## Rules\n\n"
	for _, kw := range []string{"invoice", "password", "tracking", "crash"} {
		skill += fmt.Sprintf("- %s → %s\n", kw, teamOf(kw))
	}
	return map[string]string{
		path(r) + "/" + skillFile:     skill,
		path(r) + "/evals/evals.json": evalsJSON("routing", tasks),
		"README.md":                   "# routing bench\n",
	}
}

func (routing) Config(seed int) map[string]string {
	return map[string]string{
		"run":      "git-descent bench-agent routing",
		"proposer": fmt.Sprintf("git-descent bench-propose routing --seed %d", seed),
		"scorer":   "exact",
	}
}

func teamOf(kw string) string {
	for _, rt := range routes {
		if rt.keyword == kw {
			return rt.team
		}
	}
	return ""
}

func (routing) Answer(skill map[string]string, prompt string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		words[w] = true
	}
	for _, m := range ruleRE.FindAllStringSubmatch(skill[skillFile], -1) {
		if words[m[1]] {
			return m[2]
		}
	}
	return "triage"
}

func (routing) Propose(rng *rand.Rand, skill map[string]string, fb agent.Feedback) string {
	kw := ""
	if rng.Float64() < 0.75 {
		p := failedPrompt(rng, fb)
		for _, rt := range routes {
			if strings.Contains(p, rt.keyword) {
				kw = rt.keyword
			}
		}
	}
	if kw == "" {
		kw = routes[rng.IntN(len(routes))].keyword
	}
	team := teamOf(kw)
	if rng.Float64() >= 0.75 {
		others := []string{}
		for _, t := range teams {
			if t != team {
				others = append(others, t)
			}
		}
		team = others[rng.IntN(len(others))]
	}
	rule := fmt.Sprintf("- %s → %s", kw, team)
	before := skill[skillFile]
	skill[skillFile] = setLine(before, "- "+kw+" → ", rule, "- ")
	if skill[skillFile] == before {
		return ""
	}
	return fmt.Sprintf("Route %s tickets to %s", kw, team)
}

func (routing) Score(expected, output string) float64 {
	if strings.TrimSpace(output) == expected {
		return 1
	}
	return 0
}

func (r routing) Truth(skill map[string]string) (float64, int) {
	ok := 0
	for _, rt := range routes {
		for _, tmpl := range ticketTemplates {
			if r.Answer(skill, fmt.Sprintf(tmpl, rt.keyword)) == rt.team {
				ok++
			}
		}
	}
	wrong := 0
	for _, m := range ruleRE.FindAllStringSubmatch(skill[skillFile], -1) {
		if teamOf(m[1]) != m[2] {
			wrong++
		}
	}
	return float64(ok) / float64(len(routes)*len(ticketTemplates)), wrong
}
