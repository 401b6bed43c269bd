package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
)

// State is the aggregator's bookkeeping between rounds, kept in the journal.
type State struct {
	Round       int         `json:"round"`        // aggregator rounds completed
	Commits     int         `json:"commits"`      // dev commits made by the aggregator, for δ annealing
	CleanRounds int         `json:"clean_rounds"` // rounds dev has held up (no regression) since it last moved, the round that moved it included
	Dev         git.Hash    `json:"dev"`          // dev after the last round
	DevScore    float64     `json:"dev_score"`    // its mean validation reward
	Stable      git.Hash    `json:"stable"`       // stable after the last round
	StableScore float64     `json:"stable_score"` // its mean validation reward
	Promotions  []Promotion `json:"promotions,omitempty"`
	Tokens      int64       `json:"tokens"`                    // spent by every run so far
	Cost        float64     `json:"cost"`                      // USD spent by every run so far
	Unpriced    int64       `json:"unpriced_tokens,omitempty"` // tokens of Tokens with no price

	Refile    []Refile    `json:"refile,omitempty"` // proposals waiting for a later round
	Fusion    FusionStats `json:"fusion"`
	Rollbacks []Rollback  `json:"rollbacks,omitempty"`
	Syncs     []Sync      `json:"syncs,omitempty"`
	// StartTest is the test-split score of the version dev started from,
	// measured once, for the honest report.
	StartTest *float64 `json:"start_test,omitempty"`
	// Promising holds proposals whose evidence was positive but not yet
	// enough, waiting to be pooled with later ones (or to expire).
	Promising []Pending `json:"promising,omitempty"`
	// Noise is the latest estimate of how reproducible the agent is.
	Noise *Noise `json:"noise,omitempty"`
	// Heads is where this record left dev and stable (Record sets it).
	Heads Heads `json:"heads"`
}

// Pending is a promising proposal waiting to be pooled.
type Pending struct {
	Proposal git.Hash `json:"proposal"`
	Since    int      `json:"since"` // the round it became promising
	P        float64  `json:"p"`     // its gate's P(better) alone
	Won      []string `json:"won"`   // the validation tasks it did better on alone
}

// Noise is what repeated rollouts of one version on one validation task
// showed about the agent: Groups (version, task) pairs rolled out more than
// once, over Tasks tasks, Reproducible of them with the same reward every
// time, Pairs pairs
// of their rollouts, Flips pairs that disagreed. Rate is the posterior mean
// of the flip rate (pass/fail rewards) or of the chance that a rollout's
// reward is a random one (graded), the noise the gate assumes.
type Noise struct {
	Graded       bool    `json:"graded,omitempty"`
	Tasks        int     `json:"tasks"` // distinct tasks among the groups
	Groups       int     `json:"groups"`
	Reproducible int     `json:"reproducible"`
	Pairs        int     `json:"pairs"`
	Flips        int     `json:"flips"`
	Rate         float64 `json:"rate"`
}

// String says it for people: "reproducible on 12/12 tasks" or "outcome
// flips on 48% of repeats (12 tasks)".
func (n *Noise) String() string {
	switch {
	case n == nil || n.Groups == 0:
		return "not measured yet"
	case n.Flips == 0:
		return fmt.Sprintf("reproducible on %d/%d tasks", n.Tasks, n.Tasks)
	case n.Graded:
		return fmt.Sprintf("rewards differ on %.0f%% of repeats (%d tasks)", 100*float64(n.Flips)/float64(n.Pairs), n.Tasks)
	}
	return fmt.Sprintf("outcome flips on %.0f%% of repeats (%d tasks)", 100*float64(n.Flips)/float64(n.Pairs), n.Tasks)
}

// Refile is a proposal set aside for a later round.
type Refile struct {
	Proposal git.Hash `json:"proposal"`
	Attempts int      `json:"attempts"` // rounds it has been re-filed
}

// FusionStats count what fusing proposals achieved, across rounds. With
// the tournament on, every fusion is scored against its best single member
// on validation.
type FusionStats struct {
	Fused         int     `json:"fused"`           // fusions sent to the gate
	NothingToFuse int     `json:"nothing_to_fuse"` // proposals that duplicated another
	Contested     int     `json:"contested"`       // fusions ranked against their singles
	FusedWins     int     `json:"fused_wins"`
	SingleWins    int     `json:"single_wins"`
	Ties          int     `json:"ties"`
	GainSum       float64 `json:"gain_sum"`   // sum of (fusion − best single) over contested
	LossCount     int     `json:"loss_count"` // the losing tail: contests the fusion lost
	LossSum       float64 `json:"loss_sum"`
	WorstLoss     float64 `json:"worst_loss"`
}

// Rollback records dev being reset to stable.
type Rollback struct {
	Round int      `json:"round"`
	From  git.Hash `json:"from"`
	To    git.Hash `json:"to"`
}

// Sync records git descent sync merging a revision of the user's (Rev)
// into dev, From → To.
type Sync struct {
	Round int      `json:"round"`
	From  git.Hash `json:"from"`
	To    git.Hash `json:"to"`
	Rev   git.Hash `json:"rev"`
}

// Promotion records stable being fast-forwarded to dev.
type Promotion struct {
	Round  int      `json:"round"`
	From   git.Hash `json:"from"`
	To     git.Hash `json:"to"`
	Stable float64  `json:"stable"` // stable's validation reward before
	Dev    float64  `json:"dev"`    // dev's validation reward
	Forced bool     `json:"forced,omitempty"`
	// UndoneIn is the round in which promote --undo moved stable back to
	// From (0: it stands). An undone promotion is not made again by a
	// round until dev moves on.
	UndoneIn int `json:"undone_in,omitempty"`
	// Test scores of the old stable and the promoted version on the sealed
	// test split: reported, never used to decide.
	StableTest *float64 `json:"stable_test,omitempty"`
	DevTest    *float64 `json:"dev_test,omitempty"`
}

// Journal is the library's record of decisions: the ref
// refs/descent/<lib>/journal points at a commit whose tree holds state.json
// and decisions/r<round>/<id>.json. Each journal commit has the proposals it
// decides as extra parents, so no proposal becomes unreachable once its
// worker branch moves on.
type Journal struct {
	repo *git.Repo
	refs Refs
	ref  string
}

// OpenJournal returns the journal of a library.
func OpenJournal(repo *git.Repo, library string) *Journal {
	return &Journal{repo: repo, refs: Refs{library}, ref: Refs{library}.Journal()}
}

// JournalHead is the journal as read at one moment: its commit (zero when
// the journal does not exist yet) and state.
type JournalHead struct {
	Commit git.Hash
	State  State
}

// Head reads the journal's current commit and state.
func (j *Journal) Head(ctx context.Context) (JournalHead, error) {
	c, err := resolveOrZero(ctx, j.repo, j.ref)
	if err != nil || c.IsZero() {
		return JournalHead{Commit: c}, err
	}
	data, err := j.repo.ReadFile(ctx, c, "state.json")
	if err != nil {
		return JournalHead{}, fmt.Errorf("read journal %s: %w", j.ref, err)
	}
	h := JournalHead{Commit: c}
	if err := json.Unmarshal(data, &h.State); err != nil {
		return JournalHead{}, fmt.Errorf("read journal %s: state.json: %w", j.ref, err)
	}
	return h, nil
}

// Move is a compare-and-swap of dev or stable that a journal record makes
// in the same transaction.
type Move struct {
	Ref      string
	From, To git.Hash // From zero: the ref must not exist yet
}

// Entry is one record in the journal: the state after it, the decisions it
// makes, the refs it moves, and commits to keep reachable.
type Entry struct {
	State     State
	Decisions []Decision
	Message   string // the journal commit's message
	Moves     []Move
	// Keep are commits that become parents of the journal commit, with
	// every decided proposal: they stay reachable for good.
	Keep []git.Hash
}

// Record writes e as a new journal commit on top of head.Commit, a note on
// each decided proposal, and e.Moves, as one transaction: the journal, the
// notes and the moved refs all change or none does, whatever instant the
// process dies. A journal or a moved ref that no longer has the value the
// caller read is a *git.RefChangedError naming it; the notes ref, shared by
// every library, is re-read and retried. It returns the journal's new head.
func (j *Journal) Record(ctx context.Context, head JournalHead, e Entry) (JournalHead, error) {
	heads, err := j.heads(ctx, head, e)
	if err != nil {
		return JournalHead{}, fmt.Errorf("record journal: %w", err)
	}
	e.State.Heads = heads
	c, err := j.commit(ctx, head, e)
	if err != nil {
		return JournalHead{}, fmt.Errorf("record journal: %w", err)
	}
	edits, err := noteEdits(ctx, j.repo, e.Decisions)
	if err != nil {
		return JournalHead{}, err
	}
	reason, _, _ := strings.Cut(e.Message, "\n")
	const attempts = 5
	for i := 1; ; i++ {
		ups := []git.RefUpdate{{Ref: j.ref, Hash: c, OldHash: head.Commit}}
		for _, m := range e.Moves {
			ups = append(ups, git.RefUpdate{Ref: m.Ref, Hash: m.To, OldHash: m.From})
		}
		notes, ok, err := notesCommit(ctx, j.repo, edits)
		if err != nil {
			return JournalHead{}, fmt.Errorf("write notes to %s: %w", NotesRef, err)
		}
		if ok {
			ups = append(ups, notes)
		}
		err = j.repo.UpdateRefs(ctx, git.UpdateRefsRequest{Updates: ups, Reason: "git-descent: " + reason})
		var lost *git.RefChangedError
		if err == nil {
			return JournalHead{Commit: c, State: e.State}, nil
		} else if !errors.As(err, &lost) {
			return JournalHead{}, err
		}
		moved, err := firstMoved(ctx, j.repo, ups)
		if err != nil {
			return JournalHead{}, err
		}
		if moved != nil && moved.Ref != NotesRef {
			return JournalHead{}, &git.RefChangedError{Ref: moved.Ref, Expected: moved.OldHash, Stderr: lost.Stderr}
		}
		if i == attempts {
			return JournalHead{}, fmt.Errorf("record journal: gave up after %d attempts: %w", attempts, err)
		}
	}
}

// firstMoved returns the first update whose ref no longer holds its
// expected old value, or nil when all still do (the transaction lost to a
// lock held for a moment).
func firstMoved(ctx context.Context, repo *git.Repo, ups []git.RefUpdate) (*git.RefUpdate, error) {
	for i := range ups {
		now, err := resolveOrZero(ctx, repo, ups[i].Ref)
		if err != nil {
			return nil, err
		}
		old := ups[i].OldHash
		if old == "" {
			old = git.ZeroHash
		}
		if now != old {
			return &ups[i], nil
		}
	}
	return nil, nil
}

// commit writes the journal commit of e on top of head.
func (j *Journal) commit(ctx context.Context, head JournalHead, e Entry) (git.Hash, error) {
	var edits []git.TreeEdit
	add := func(p string, v any) error {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		h, err := j.repo.HashObject(ctx, append(data, '\n'))
		if err != nil {
			return err
		}
		edits = append(edits, git.TreeEdit{Path: p, Hash: h})
		return nil
	}
	if err := add("state.json", e.State); err != nil {
		return "", err
	}
	parents := []git.Hash{}
	if !head.Commit.IsZero() {
		parents = append(parents, head.Commit)
	}
	seen := map[git.Hash]bool{}
	keep := func(c git.Hash) {
		if !c.IsZero() && !seen[c] {
			seen[c] = true
			parents = append(parents, c)
		}
	}
	for _, k := range e.Keep {
		keep(k)
	}
	for i := range e.Decisions {
		if err := add(decisionPath(&e.Decisions[i]), &e.Decisions[i]); err != nil {
			return "", err
		}
		keep(e.Decisions[i].Proposal)
		keep(e.Decisions[i].RepairedAs) // queued until decided
	}
	var base git.Hash
	if !head.Commit.IsZero() {
		var err error
		if base, err = j.repo.TreeOf(ctx, head.Commit, ""); err != nil {
			return "", err
		}
	}
	tree, err := j.repo.EditTree(ctx, base, edits)
	if err != nil {
		return "", err
	}
	return j.repo.CommitTree(ctx, git.CommitTreeRequest{Tree: tree, Parents: parents, Message: e.Message})
}

func decisionPath(d *Decision) string {
	return fmt.Sprintf("decisions/r%04d/%s.json", d.Round, d.ID)
}

// Decisions returns every decision in the journal, oldest round first, then
// by worker.
func (j *Journal) Decisions(ctx context.Context) ([]Decision, error) {
	c, err := resolveOrZero(ctx, j.repo, j.ref)
	if err != nil || c.IsZero() {
		return nil, err
	}
	return decisionsAt(ctx, j.repo, c)
}

// decisionsAt returns the decisions of the journal at commit c, sorted as
// Decisions sorts them.
func decisionsAt(ctx context.Context, repo *git.Repo, c git.Hash) ([]Decision, error) {
	tree, err := repo.TreeOf(ctx, c, "")
	if err != nil {
		return nil, err
	}
	entries, err := repo.ReadTree(ctx, tree)
	if err != nil {
		return nil, err
	}
	var ds []Decision
	for _, e := range entries {
		if !strings.HasPrefix(e.Path, "decisions/") || path.Ext(e.Path) != ".json" {
			continue
		}
		data, err := repo.ReadBlob(ctx, e.Hash)
		if err != nil {
			return nil, err
		}
		var d Decision
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("journal %s: %w", e.Path, err)
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(a, b int) bool {
		if ds[a].Round != ds[b].Round {
			return ds[a].Round < ds[b].Round
		}
		return WorkerLess(ds[a].Worker, ds[b].Worker)
	})
	return ds, nil
}

// Record is one journal record read back: its commit, when it was made,
// its message's subject, and the state it left.
type Record struct {
	Commit  git.Hash
	Time    time.Time
	Subject string
	State   State
}

// History returns the journal's records, oldest first: what the state was
// after each, for the report.
func (j *Journal) History(ctx context.Context) ([]Record, error) {
	head, err := resolveOrZero(ctx, j.repo, j.ref)
	if err != nil || head.IsZero() {
		return nil, err
	}
	chain, err := j.repo.FirstParents(ctx, head, "", 0)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		data, err := j.repo.ReadFile(ctx, c, "state.json")
		if err != nil {
			return nil, err
		}
		r := Record{Commit: c}
		if err := json.Unmarshal(data, &r.State); err != nil {
			return nil, fmt.Errorf("journal %s: state.json: %w", c.Short(), err)
		}
		if r.Time, err = j.repo.CommitTime(ctx, c); err != nil {
			return nil, err
		}
		msg, err := j.repo.CommitMessage(ctx, c)
		if err != nil {
			return nil, err
		}
		r.Subject, _, _ = strings.Cut(msg, "\n")
		out = append(out, r)
	}
	return out, nil
}

// ErrNoDecision means the journal has no decision for a proposal.
var ErrNoDecision = errors.New("no decision recorded")

// DecisionsFor returns the decisions about one proposal commit, oldest first.
func (j *Journal) DecisionsFor(ctx context.Context, commit git.Hash) ([]Decision, error) {
	all, err := j.Decisions(ctx)
	if err != nil {
		return nil, err
	}
	var ds []Decision
	for _, d := range all {
		if d.Proposal == commit {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("proposal %s: %w", commit.Short(), ErrNoDecision)
	}
	return ds, nil
}

func isNotFound(err error) bool { return errors.Is(err, git.ErrRefNotFound) }
