package hooks

import (
	"context"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"

	"github.com/git-descent/git-descent/ledger"
)

// The rules on dev, stable and the journal: git-descent moves dev and
// stable only with a journal record, in one atomic push (DESIGN.md,
// decision 60), and stable only ever fast-forwards to dev.

// recordedRule refuses dev or stable moved to where the journal, as the
// push leaves it, does not say it left them.
func recordedRule(ctx context.Context, p *push, t target, u Update) (string, error) {
	journal, err := p.after(ctx, t.refs().Journal())
	if err != nil {
		return "", err
	}
	if journal.IsZero() {
		return fmt.Sprintf("no journal records it (%s does not exist): git-descent moves %s only with a decision recorded in the journal, pushed with it (git push --atomic)",
			t.refs().Journal(), t.what()), nil
	}
	s, err := ledger.StateAt(ctx, p.repo, journal)
	if err != nil {
		return "", err
	}
	want := s.Heads.Dev
	if t.kind == stableRef {
		want = s.Heads.Stable
	}
	switch {
	case want.IsZero():
		return fmt.Sprintf("the journal %s does not say where it left %s (an older git-descent wrote it): run git descent evolve or git descent keep %s where it was made, and push again",
			journal.Short(), t.what(), t.name), nil
	case want != u.New:
		return fmt.Sprintf("no recorded decision moves %s there: the journal %s left it at %s; git-descent moves %s only with a decision recorded in the journal, pushed with it (git push --atomic)",
			t.what(), journal.Short(), want.Short(), t.what()), nil
	}
	return "", nil
}

// fastForwardRule refuses a stable that does not fast-forward, unless it
// goes back along promotions the journal records as undone
// (git descent promote --undo).
func fastForwardRule(ctx context.Context, p *push, t target, u Update) (string, error) {
	if u.Old.IsZero() {
		return "", nil
	}
	ok, err := p.repo.IsAncestor(ctx, u.Old, u.New)
	if err != nil || ok {
		return "", err
	}
	if ok, err := undone(ctx, p, t, u); err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("not a fast-forward of %s: stable only ever fast-forwards to dev (or goes back with git descent promote --undo)", u.Old.Short()), nil
}

// undone reports whether the journal, as the push leaves it, records
// stable's move from u.Old back to u.New as promotions undone, latest
// first.
func undone(ctx context.Context, p *push, t target, u Update) (bool, error) {
	journal, err := p.after(ctx, t.refs().Journal())
	if err != nil || journal.IsZero() {
		return false, err
	}
	s, err := ledger.StateAt(ctx, p.repo, journal)
	if err != nil {
		return false, err
	}
	at := u.Old
	for i := len(s.Promotions) - 1; i >= 0 && at != u.New; i-- {
		if pr := s.Promotions[i]; pr.UndoneIn > 0 && pr.To == at {
			at = pr.From
		}
	}
	return at == u.New, nil
}

// onDevRule refuses a stable that is not dev or an ancestor of it, dev as
// the push leaves it.
func onDevRule(ctx context.Context, p *push, t target, u Update) (string, error) {
	dev, err := p.after(ctx, t.refs().Dev())
	if err != nil {
		return "", err
	}
	if dev.IsZero() {
		return fmt.Sprintf("not on dev: %s does not exist", ledger.Short(t.refs().Dev())), nil
	}
	ok, err := p.repo.IsAncestor(ctx, u.New, dev)
	if err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("not on dev: it is not %s (%s) or an ancestor of it; stable only ever fast-forwards to a commit on dev",
		ledger.Short(t.refs().Dev()), dev.Short()), nil
}

// checkDelete refuses deleting dev or stable while the journal stays, and
// the journal while dev or stable stays: the journal records where it left
// them, so the three go together (as ledger.Unstart deletes them).
func (g *Guard) checkDelete(ctx context.Context, p *push, t target) ([]string, error) {
	refs := t.refs()
	var stay []string
	check := func(ref string) error {
		h, err := p.after(ctx, ref)
		if err == nil && !h.IsZero() {
			stay = append(stay, ledger.Short(ref))
		}
		return err
	}
	switch t.kind {
	case devRef, stableRef:
		if err := check(refs.Journal()); err != nil {
			return nil, err
		}
	case journalRef:
		for _, ref := range []string{refs.Dev(), refs.Stable()} {
			if err := check(ref); err != nil {
				return nil, err
			}
		}
	}
	if len(stay) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("%s would stay: the journal records where it left dev and stable, so delete %s, %s and %s in one push (git push --atomic) or none of them",
		joinAnd(stay), ledger.Short(refs.Dev()), ledger.Short(refs.Stable()), refs.Journal())}, nil
}

// joinAnd lists words, the last after "and".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	out := words[0]
	for _, w := range words[1 : len(words)-1] {
		out += ", " + w
	}
	return out + " and " + words[len(words)-1]
}

// queueNameRule refuses a queued proposal whose ref is not named by the
// commit it holds: the aggregator takes a queue ref's name for its commit.
func queueNameRule(_ context.Context, _ *push, t target, u Update) (string, error) {
	if u.Ref != t.refs().Queue(u.New) || !git.IsFullHash(u.New) {
		return fmt.Sprintf("a queued proposal's ref is named by its commit: push %s to %s", u.New.Short(), t.refs().Queue(u.New)), nil
	}
	return "", nil
}

// queueDeleteRule refuses taking proposal u.Old off the queue unless the
// journal, as the push leaves it, keeps it reachable (every proposal a
// journal record decides, re-files or pools is among its parents): the
// queue ref may be the only ref that keeps it.
func queueDeleteRule(ctx context.Context, p *push, t target, u Update) ([]string, error) {
	journal, err := p.after(ctx, t.refs().Journal())
	if err != nil {
		return nil, err
	}
	kept := false
	if !journal.IsZero() && !u.Old.IsZero() {
		if kept, err = p.repo.IsAncestor(ctx, u.Old, journal); err != nil {
			return nil, err
		}
	}
	if !kept {
		return []string{fmt.Sprintf("%s is not in the journal: only the aggregator takes a proposal off the queue, in the push of the journal that holds it", ledger.Short(u.Ref))}, nil
	}
	return nil, nil
}

// journalForwardRule refuses a journal that does not fast-forward: each
// record is a commit on top of the last, and an aggregator that lost a
// race publishes on top of the winner's.
func journalForwardRule(ctx context.Context, p *push, _ target, u Update) (string, error) {
	if u.Old.IsZero() {
		return "", nil
	}
	ok, err := p.repo.IsAncestor(ctx, u.Old, u.New)
	if err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("not a fast-forward of %s: the journal only grows (an aggregator fetches and decides on top of it)", u.Old.Short()), nil
}
