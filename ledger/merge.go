package ledger

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// MergeCard is the evidence on a dev merge commit: the proposals it merges
// and the gate's numbers, as trailers whose names are part of
// git-descent's public interface (as Evidence's are on a proposal).
type MergeCard struct {
	Library   string
	Round     int
	Proposals []*Proposal
	Gate      *Gate
}

// Message renders the merge commit's message.
func (m MergeCard) Message() string {
	noun := "proposal"
	if len(m.Proposals) > 1 {
		noun = "proposals"
	}
	subject := fmt.Sprintf("descent(%s): merge %d %s from round %d", m.Library, len(m.Proposals), noun, m.Round)
	var body []string
	for _, p := range m.Proposals {
		body = append(body, fmt.Sprintf("- %s w%s: %s", p.Commit.Short(), p.Worker, oneLine(p.Subject)))
	}
	g := m.Gate
	return formatMessage(subject, strings.Join(body, "\n"), []Trailer{
		{"Descent-Library", m.Library},
		{"Descent-Round", fmt.Sprint(m.Round)},
		{"Descent-Validation-Before", fmtFloat(g.Before)},
		{"Descent-Validation-After", fmtFloat(g.After)},
		{"Descent-Validation-Tasks", fmt.Sprint(g.Tasks)},
		{"Descent-P", fmtFloat(g.P)},
		{"Descent-Delta", fmtFloat(g.Delta)},
	})
}

// Merge is a dev merge commit read back: its card's library, round and gate
// numbers (the proposals it merged are the journal's decisions naming it).
type Merge struct {
	Commit  git.Hash `json:"commit"`
	Subject string   `json:"subject"`
	Library string   `json:"library"`
	Round   int      `json:"round"`
	Before  float64  `json:"validation_before"`
	After   float64  `json:"validation_after"`
	Tasks   int      `json:"validation_tasks"`
	P       float64  `json:"p"`
	Delta   float64  `json:"delta"`
}

// IsMerge reports whether a commit message is a dev merge's: a card with a
// library and a round, and no worker.
func IsMerge(msg string) bool {
	_, _, ts := parseMessage(msg)
	return trailerValue(ts, "Descent-Library") != "" && trailerValue(ts, "Descent-Round") != "" && trailerValue(ts, "Descent-Worker") == ""
}

// ParseMerge reads a dev merge commit's card back from its message.
func ParseMerge(commit git.Hash, msg string) (*Merge, error) {
	if !IsMerge(msg) {
		return nil, fmt.Errorf("commit %s is not a dev merge of git-descent", commit.Short())
	}
	subject, _, ts := parseMessage(msg)
	m := &Merge{Commit: commit, Subject: subject, Library: trailerValue(ts, "Descent-Library")}
	var err error
	if m.Round, err = strconv.Atoi(trailerValue(ts, "Descent-Round")); err != nil {
		return nil, fmt.Errorf("commit %s: Descent-Round: %w", commit.Short(), err)
	}
	m.Before, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Validation-Before"), 64)
	m.After, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Validation-After"), 64)
	m.Tasks, _ = strconv.Atoi(trailerValue(ts, "Descent-Validation-Tasks"))
	m.P, _ = strconv.ParseFloat(trailerValue(ts, "Descent-P"), 64)
	m.Delta, _ = strconv.ParseFloat(trailerValue(ts, "Descent-Delta"), 64)
	return m, nil
}
