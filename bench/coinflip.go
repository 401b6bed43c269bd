package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/git-descent/git-descent/agent"
)

// coinflip is an agent that answers yes or no at random whatever the skill
// says: nothing can be learned, so every commit is a false one. The
// proposer adds one tip per call.
type coinflip struct{}

const coinTasks = 40

func (coinflip) Name() string    { return "coinflip" }
func (coinflip) Target() float64 { return 1 } // never reached: the bench counts commits

func (c coinflip) Files() map[string]string {
	var tasks [][3]string
	for i := 1; i <= coinTasks; i++ {
		want := "yes"
		if i%2 == 0 {
			want = "no"
		}
		tasks = append(tasks, [3]string{fmt.Sprintf("q%02d", i), fmt.Sprintf("Question %d: is the answer yes? Answer yes or no.", i), want})
	}
	skill := frontmatter("coinflip", "Answer yes-or-no questions.") + "# Yes or no\n\nAnswer yes or no.\n\n## Tips\n\n"
	return map[string]string{
		path(c) + "/" + skillFile:     skill,
		path(c) + "/evals/evals.json": evalsJSON("coinflip", tasks),
		"README.md":                   "# coinflip bench\n",
	}
}

func (coinflip) Config(seed int) map[string]string {
	return map[string]string{
		"run":      "git-descent bench-agent coinflip",
		"proposer": fmt.Sprintf("git-descent bench-propose coinflip --seed %d", seed),
		"scorer":   "exact",
	}
}

func (coinflip) Answer(map[string]string, string) string {
	if rand.IntN(2) == 0 {
		return "yes"
	}
	return "no"
}

func (coinflip) Propose(rng *rand.Rand, skill map[string]string, _ agent.Feedback) string {
	n := rng.IntN(1 << 30)
	skill[skillFile] = strings.TrimRight(skill[skillFile], "\n") + fmt.Sprintf("\n- Tip %d: read the question twice.\n", n)
	return fmt.Sprintf("Add tip %d", n)
}

func (coinflip) Score(expected, output string) float64 {
	if strings.TrimSpace(output) == expected {
		return 1
	}
	return 0
}

func (coinflip) Truth(skill map[string]string) (float64, int) {
	return 0.5, strings.Count(skill[skillFile], "\n- Tip ")
}
