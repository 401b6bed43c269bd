package accept

import (
	"fmt"

	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
)

// RejectReason says, for people, why a gate did not accept.
func RejectReason(g *ledger.Gate) string {
	switch {
	case g.Errored > 0:
		return fmt.Sprintf("the agent could not run with it on %s that dev ran (see the run's errored rollouts): not judged", words.Count(g.Errored, "validation task"))
	case g.Tasks == 0 && g.Skipped > 0:
		return fmt.Sprintf("dev passes every one of the %d validation tasks it could be judged on: nothing left to gain there", g.Total)
	case g.Tasks == 0:
		return "no validation task could be compared (their rollouts errored)"
	case g.Regressions > g.MaxRegressions:
		return fmt.Sprintf("probably fails %s dev passes every time (at most %d allowed)", words.Count(g.Regressions, "validation task"), g.MaxRegressions)
	case g.Wins == 0 && g.Losses == 0 && g.Tasks < g.Total:
		return fmt.Sprintf("fixes no validation task dev fails (decided after %d of %d tasks)", g.Tasks, g.Total)
	case g.Wins == 0 && g.Losses == 0:
		return "no validation task changed outcome"
	case g.Method == "mean":
		return fmt.Sprintf("validation did not rise (%.2f → %.2f)", g.Before, g.After)
	case g.Wins == 0:
		return fmt.Sprintf("does better on no validation task (%.2f → %.2f)", g.Before, g.After)
	case g.Expected < 0:
		return fmt.Sprintf("validation is expected to fall (%.2f → %.2f, expected change %+.2f tasks)", g.Before, g.After, g.Expected)
	}
	return fmt.Sprintf("P(better) = %.2f is not above %.2f", g.P, 1-g.Delta)
}
