package hooks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

// Update is one ref a push changes: Old zero means the push creates it,
// New zero that it deletes it.
type Update struct {
	Ref      string
	Old, New git.Hash
}

func (u Update) deletes() bool { return u.New.IsZero() }

// Refusal is an update a guard refuses, and why.
type Refusal struct {
	Update Update
	Reason string
}

func (r Refusal) String() string {
	if r.Update.deletes() {
		return fmt.Sprintf("%s (deleted): %s", r.Update.Ref, r.Reason)
	}
	return fmt.Sprintf("%s %s: %s", r.Update.Ref, r.Update.New.Short(), r.Reason)
}

// RefusedError is a push a guard refused: every update it refused, and
// why.
type RefusedError struct{ Refusals []Refusal }

func (e *RefusedError) Error() string {
	lines := []string{"push refused:"}
	for _, r := range e.Refusals {
		lines = append(lines, "  "+r.String())
	}
	return strings.Join(lines, "\n")
}

// isDescent reports whether a guard has anything to say about ref: a
// branch under refs/heads/descent/ or a ref under refs/descent/.
func isDescent(ref string) bool {
	return strings.HasPrefix(ref, branchPrefix) || strings.HasPrefix(ref, privatePrefix)
}

const (
	branchPrefix  = "refs/heads/descent/"
	privatePrefix = "refs/descent/"
)

// Guard checks the descent refs a push updates against the rules that keep
// them what git-descent makes of them (see Check). Its configuration and
// its trusted history must come from the repository, never from the push:
// a server's HEAD, a client's working tree and HEAD.
type Guard struct {
	Repo *git.Repo
	// Libraries are the libraries configured where the guard trusts
	// (library.LoadAt of HEAD on a server, library.LoadAll on a client).
	Libraries []*library.Library
	// Trusted is the tip of the history frozen files come from (HEAD);
	// zero when there is none.
	Trusted git.Hash
	// Where says where Libraries and Trusted come from, for messages:
	// "HEAD", "HEAD abc1234".
	Where string
}

// Check returns the updates of ups that break a rule, each with its
// reasons, in the order given. Refs outside descent/ (isDescent) pass
// untouched, as do a library's refs git-descent does not write and its
// rollout caches. The rules, for a library L:
//
//   - descent/L/dev, descent/L/stable, worker branches descent/L/w/<id> and
//     queued proposals refs/descent/L/queue/<commit> may not change L's
//     frozen (L0) files: a proposal against its first parent; dev and
//     stable against their old value (a new one against where it meets the
//     trusted history), where a frozen file may take only the version the
//     trusted history has where the new commit meets it, merged in (the
//     user's edit, brought in by git descent sync);
//   - stable only fast-forwards (or returns along promotions the journal
//     records as undone), to a commit on dev as it is after the push;
//   - dev and stable move only to where the journal, as it is after the
//     push, says it left them: with a recorded decision;
//   - dev, stable and the journal are deleted together or not at all;
//   - the refs of a library the trusted configuration does not have are
//     refused, deleting aside, since its frozen files are unknown.
//
// "After the push" is a ref's new value when ups updates it, else its
// current value in the repository. An error means the guard could not
// decide; the push must then be refused.
func (g *Guard) Check(ctx context.Context, ups []Update) ([]Refusal, error) {
	p := &push{repo: g.Repo, ups: map[string]Update{}}
	for _, u := range ups {
		p.ups[u.Ref] = u
	}
	var out []Refusal
	for _, u := range ups {
		t, ok := g.classify(u.Ref)
		if !ok {
			continue
		}
		reasons, err := g.check(ctx, p, t, u)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", u.Ref, err)
		}
		for _, r := range reasons {
			out = append(out, Refusal{Update: u, Reason: r})
		}
	}
	return out, nil
}

// check returns the reasons to refuse one update.
func (g *Guard) check(ctx context.Context, p *push, t target, u Update) ([]string, error) {
	if t.kind == otherRef || t.kind == cacheRef {
		return nil, nil
	}
	if u.deletes() && t.kind == queueRef {
		return queueDeleteRule(ctx, p, t, u)
	}
	if u.deletes() {
		return g.checkDelete(ctx, p, t)
	}
	if t.lib == nil {
		return []string{fmt.Sprintf("library %q is not configured in .descent at %s, so its frozen files are unknown: commit its section there and push that first", t.name, g.Where)}, nil
	}
	var rules []func(context.Context, *push, target, Update) (string, error)
	switch t.kind {
	case devRef:
		rules = append(rules, g.frozenRule, recordedRule)
	case stableRef:
		rules = append(rules, g.frozenRule, fastForwardRule, onDevRule, recordedRule)
	case workerRef:
		rules = append(rules, g.frozenRule)
	case queueRef:
		rules = append(rules, queueNameRule, g.frozenRule)
	case journalRef:
		rules = append(rules, journalForwardRule)
	}
	var reasons []string
	for _, rule := range rules {
		r, err := rule(ctx, p, t, u)
		if err != nil {
			return nil, err
		}
		if r != "" {
			reasons = append(reasons, r)
		}
	}
	return reasons, nil
}

// kind is what a descent ref holds.
type kind int

const (
	otherRef   kind = iota // under a library's namespace, not a ref git-descent writes
	devRef                 // refs/heads/descent/<lib>/dev
	stableRef              // refs/heads/descent/<lib>/stable
	workerRef              // refs/heads/descent/<lib>/w/<id>
	journalRef             // refs/descent/<lib>/journal
	queueRef               // refs/descent/<lib>/queue/<commit>
	cacheRef               // refs/descent/<lib>/cache/<writer>: a rollout log, no skill tree
)

// target is a descent ref's library and kind.
type target struct {
	lib  *library.Library // nil: not configured
	name string           // the library's name as the ref has it
	kind kind
}

// classify reads a descent ref: the configured library whose name it
// holds (the longest, as a name may contain a slash), else its first
// segment, and what kind of ref it is.
func (g *Guard) classify(ref string) (target, bool) {
	rest, branch := strings.CutPrefix(ref, branchPrefix)
	if !branch {
		var ok bool
		if rest, ok = strings.CutPrefix(ref, privatePrefix); !ok {
			return target{}, false
		}
	}
	libs := append([]*library.Library(nil), g.Libraries...)
	sort.Slice(libs, func(i, j int) bool { return len(libs[i].Name) > len(libs[j].Name) })
	var t target
	t.name, _, _ = strings.Cut(rest, "/")
	for _, l := range libs {
		if strings.HasPrefix(rest, l.Name+"/") {
			t.lib, t.name = l, l.Name
			break
		}
	}
	tail := strings.TrimPrefix(rest, t.name+"/")
	switch {
	case branch && tail == "dev":
		t.kind = devRef
	case branch && tail == "stable":
		t.kind = stableRef
	case branch && strings.HasPrefix(tail, "w/") && len(tail) > 2:
		t.kind = workerRef
	case !branch && tail == "journal":
		t.kind = journalRef
	case !branch && strings.HasPrefix(tail, "queue/") && len(tail) > 6:
		t.kind = queueRef
	case !branch && strings.HasPrefix(tail, "cache/"):
		t.kind = cacheRef
	}
	return t, true
}

// push is the repository's refs as a push leaves them.
type push struct {
	repo *git.Repo
	ups  map[string]Update
}

// after is ref's value once the push is done: its new value when the push
// updates it, else its current value (zero when it has none).
func (p *push) after(ctx context.Context, ref string) (git.Hash, error) {
	if u, ok := p.ups[ref]; ok {
		if u.deletes() {
			return "", nil
		}
		return u.New, nil
	}
	h, err := p.repo.ResolveRef(ctx, ref)
	if errors.Is(err, git.ErrRefNotFound) {
		return "", nil
	}
	return h, err
}

// refs names a target library's refs.
func (t target) refs() ledger.Refs { return ledger.Refs{Library: t.name} }

// what names a target's ref for people: "dev", "stable".
func (t target) what() string {
	if t.kind == stableRef {
		return "stable"
	}
	return "dev"
}
