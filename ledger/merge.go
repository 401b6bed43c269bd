package ledger

import (
	"fmt"
	"strings"
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
