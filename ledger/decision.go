package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
)

// Outcome is the aggregator's verdict on a proposal.
type Outcome string

// Outcomes. Every proposal ends in exactly one per round it is considered.
const (
	Committed      Outcome = "committed"       // merged into dev
	Rejected       Outcome = "rejected"        // the gate found no reliable gain on validation
	ConflictLost   Outcome = "conflict-lost"   // conflicted with a proposal that scored better
	ConflictDev    Outcome = "conflict-dev"    // does not merge onto the current dev
	Duplicate      Outcome = "duplicate"       // dev already has this change
	Invalid        Outcome = "invalid"         // edits outside the library, to frozen files or through symlinks
	NoChange       Outcome = "no-change"       // the proposer changed nothing
	ProposerFailed Outcome = "proposer-failed" // the proposer command failed
	Oversized      Outcome = "oversized"       // changes more lines or files than the trust region allows
	Stale          Outcome = "stale"           // dev moved too far since its base: set aside and re-filed
	Expired        Outcome = "expired"         // re-filed as often as allowed without being decided otherwise
	Repaired       Outcome = "repaired"        // stale or conflicting: the proposer re-made it on current dev (see RepairedAs)
	RepairDeclined Outcome = "repair-declined" // stale or conflicting: the proposer found nothing left to re-apply
	Semantic       Outcome = "conflict-semantic"
	OracleVeto     Outcome = "oracle-veto" // a change to guarded (L1) files failed the oracle
	// Promising: its own validation evidence is positive but not yet enough;
	// it waits (State.Promising) to be pooled with later promising proposals.
	Promising Outcome = "promising"
)

// Outcomes lists every outcome, for the commands that filter by one.
func Outcomes() []Outcome {
	return []Outcome{Committed, Rejected, Promising, ConflictLost, ConflictDev, Semantic, Duplicate, Invalid, NoChange,
		ProposerFailed, Oversized, Stale, Expired, Repaired, RepairDeclined, OracleVeto}
}

// Refiled reports whether an outcome puts the proposal back in the queue
// for a later round.
func (o Outcome) Refiled() bool {
	return o == Stale || o == ConflictLost || o == ConflictDev || o == Semantic
}

// Gate holds the numbers of one acceptance test: candidate against dev on
// the validation tasks, task by task.
type Gate struct {
	Tasks  int     `json:"tasks"`  // validation tasks compared (those both versions have results for)
	Total  int     `json:"total"`  // validation tasks the gate was over (more than Tasks when it decided early)
	Before float64 `json:"before"` // dev's mean reward over them
	After  float64 `json:"after"`  // the candidate's mean reward over them
	Wins   float64 `json:"wins"`   // tasks where the candidate did better (graded: summed differences)
	Losses float64 `json:"losses"` // tasks where it did worse
	// P is the posterior probability that the candidate is better: that its
	// true (noise-free) results on these tasks add up to more than dev's.
	P float64 `json:"p"`
	// Expected is the posterior mean of the candidate's true gain, in
	// tasks (graded: summed reward).
	Expected float64 `json:"expected"`
	Delta    float64 `json:"delta"` // δ in force: accept needs P > 1-δ
	Accept   bool    `json:"accept"`
	// Method is how P was computed: "flip" (pass/fail rewards, each
	// rollout's outcome flipping with the estimated rate), "jump" (graded
	// rewards, each rollout's reward a random one with the estimated
	// rate), or "mean" (the strict mean-difference baseline: P is 1 when
	// the mean rose, else 0).
	Method string `json:"method"`
	// Noise is the posterior mean of the agent's noise the gate assumed:
	// the flip rate (flip) or the chance of a random reward (jump).
	Noise   float64 `json:"noise"`
	Repeats int     `json:"repeats"` // most rollouts of one version on one task
	Start   int     `json:"start"`   // rollouts of each version per task it started with (library repeats)
	// Regressions counts tasks dev passed in every repeat that the
	// candidate probably fails now; more than MaxRegressions rejects it.
	Regressions    int `json:"regressions"`
	MaxRegressions int `json:"max_regressions"`
	// Rerolls counts the extra rollouts (both versions) the gate asked for
	// on tasks whose outcome rested on too few samples.
	Rerolls int `json:"rerolls,omitempty"`
	// Skipped counts the candidate's rollouts never run because no
	// remaining outcome could change the decision.
	Skipped int      `json:"skipped,omitempty"`
	Won     []string `json:"won,omitempty"`  // the tasks the candidate did better on
	Lost    []string `json:"lost,omitempty"` // the tasks it did worse on
	// Errored counts tasks left out because the candidate's rollout could
	// not run where dev's did; any rejects it.
	Errored  int     `json:"errored,omitempty"`
	Tokens   int64   `json:"tokens"`                    // spent on the gate's rollouts (cached ones cost nothing)
	Cost     float64 `json:"cost"`                      // USD
	Unpriced int64   `json:"unpriced_tokens,omitempty"` // tokens of Tokens with no price
}

// String renders a gate for humans: "0.42 → 0.58 on 18 tasks (+3/−1,
// P=0.94 > 0.80, 2 re-rolls, 12 skipped)".
func (g *Gate) String() string {
	cmp := "≤"
	if g.P > 1-g.Delta {
		cmp = ">"
	}
	on := fmt.Sprintf("%d tasks", g.Tasks)
	if g.Total > g.Tasks {
		on = fmt.Sprintf("%d of %d tasks", g.Tasks, g.Total)
	}
	s := fmt.Sprintf("%.2f → %.2f on %s (+%s/−%s, P=%.2f %s %.2f", g.Before, g.After, on, fmtCount(g.Wins), fmtCount(g.Losses), g.P, cmp, 1-g.Delta)
	if g.Method == "mean" {
		s = fmt.Sprintf("%.2f → %.2f on %s (+%s/−%s, mean-difference gate", g.Before, g.After, on, fmtCount(g.Wins), fmtCount(g.Losses))
	}
	if g.Start > 1 {
		s += fmt.Sprintf(", %d rollouts each", g.Start)
	}
	if g.Rerolls > 0 {
		s += fmt.Sprintf(", %d re-rolls", g.Rerolls)
	}
	if g.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", g.Skipped)
	}
	if g.Regressions > 0 {
		s += fmt.Sprintf(", %d regressions", g.Regressions)
	}
	return s + ")"
}

func fmtCount(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

// Decision is the record of what happened to one proposal in one round.
type Decision struct {
	ID        string     `json:"id"`                 // the proposal commit, or "r<round>-w<worker>" when none was made
	Proposal  git.Hash   `json:"proposal,omitempty"` // the proposal commit
	Library   string     `json:"library"`
	Worker    string     `json:"worker"`
	Round     int        `json:"round"`
	Subject   string     `json:"subject,omitempty"`
	Outcome   Outcome    `json:"outcome"`
	Reason    string     `json:"reason"`
	Base      git.Hash   `json:"base,omitempty"`
	Staleness int        `json:"staleness"`       // dev commits touching its files since Base
	Paths     []string   `json:"paths,omitempty"` // files it changes
	Train     [2]float64 `json:"train"`           // reward on its train tasks before and after
	Gate      *Gate      `json:"gate,omitempty"`
	Merge     git.Hash   `json:"merge,omitempty"`      // the dev commit that merged it
	FusedWith []git.Hash `json:"fused_with,omitempty"` // other proposals in the same merge

	Alpha      int      `json:"alpha"`                 // staleness tolerated for it (guarded policy)
	Rebased    bool     `json:"rebased,omitempty"`     // stale within α: merged onto current dev and re-verified
	Attempts   int      `json:"attempts,omitempty"`    // rounds it has been re-filed so far
	RepairedAs git.Hash `json:"repaired_as,omitempty"` // the proposal its repair became
	Oracle     string   `json:"oracle,omitempty"`      // the oracle's verdict for L1 changes
	Seconds    float64  `json:"seconds,omitempty"`     // the worker's wall time making it (kept here, not in the commit)
	// When the worker's step began, and how long it rolled out its
	// minibatch and its proposer ran (the rest of Seconds measured the
	// edit), for the report's timeline. Zero when not known.
	Started        time.Time `json:"started,omitzero"`
	RolloutSeconds float64   `json:"rollout_seconds,omitempty"`
	ProposeSeconds float64   `json:"propose_seconds,omitempty"`
}

// Note renders the decision as the text of a git note on the proposal.
func (d *Decision) Note() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Descent-Decision: %s\n", d.Outcome)
	fmt.Fprintf(&b, "Descent-Round: %d\n", d.Round)
	fmt.Fprintf(&b, "Descent-Reason: %s\n", oneLine(d.Reason))
	if d.Gate != nil {
		fmt.Fprintf(&b, "Descent-Validation: %s\n", d.Gate)
	}
	if !d.Merge.IsZero() {
		fmt.Fprintf(&b, "Descent-Merge: %s\n", d.Merge)
	}
	return b.String()
}
