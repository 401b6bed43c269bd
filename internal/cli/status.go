package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-descent/git-descent/budget"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/words"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/library"
)

type statusOptions struct {
	library string // "" for every library
	json    bool
}

func newStatusCmd(e *env) *cobra.Command {
	var o statusOptions
	c := &cobra.Command{
		Use:               "status [<library>]",
		ValidArgsFunction: completeLibrary(e),
		Short:             "Show each library's dev and stable, scores, decisions and pending proposals",
		Args:              argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.library = firstArg(args)
			return runStatus(c.Context(), e, o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return c
}

// libraryStatus is what status reports for one library.
type libraryStatus struct {
	Name      string                 `json:"name"`
	Path      string                 `json:"path"`
	Dev       git.Hash               `json:"dev,omitempty"`
	Stable    git.Hash               `json:"stable,omitempty"`
	State     ledger.State           `json:"state"`
	Outcomes  map[ledger.Outcome]int `json:"outcomes"`
	Workers   []workerStatus         `json:"workers"`
	Undecided int                    `json:"undecided"`

	PromisingRounds int `json:"-"`
}

type workerStatus struct {
	Branch   string   `json:"branch"`
	Commit   git.Hash `json:"commit"`
	Decision string   `json:"decision"` // the outcome of its latest decision, or "undecided"
}

func runStatus(ctx context.Context, e *env, o statusOptions) error {
	repo, libs, err := e.libraries(ctx, o.library)
	if err != nil {
		return err
	}
	if len(libs) == 0 {
		fmt.Fprintf(e.stdout, "no library configured in %s; start with: git descent init <path>\n", library.FileName)
		return nil
	}
	var all []libraryStatus
	for _, l := range libs {
		st, err := statusOf(ctx, repo, l)
		if err != nil {
			return err
		}
		all = append(all, st)
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	for i, st := range all {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		printStatus(e, st)
	}
	return nil
}

func statusOf(ctx context.Context, repo *git.Repo, l *library.Library) (libraryStatus, error) {
	refs := ledger.Refs{Library: l.Name}
	st := libraryStatus{Name: l.Name, Path: l.Path, Outcomes: map[ledger.Outcome]int{}, PromisingRounds: l.PromisingRounds}
	for _, x := range []struct {
		ref string
		dst *git.Hash
	}{{refs.Dev(), &st.Dev}, {refs.Stable(), &st.Stable}} {
		h, err := repo.ResolveRef(ctx, x.ref)
		if err != nil && !errors.Is(err, git.ErrRefNotFound) {
			return st, err
		}
		*x.dst = h
	}
	j := ledger.OpenJournal(repo, l.Name)
	head, err := j.Head(ctx)
	if err != nil {
		return st, err
	}
	st.State = head.State
	ds, err := j.Decisions(ctx)
	if err != nil {
		return st, err
	}
	for _, d := range ds {
		st.Outcomes[d.Outcome]++
	}
	heads, err := j.WorkerHeads(ctx)
	if err != nil {
		return st, err
	}
	for _, h := range heads {
		dec := "undecided"
		if h.Decision != nil {
			dec = string(h.Decision.Outcome)
		} else {
			st.Undecided++
		}
		st.Workers = append(st.Workers, workerStatus{Branch: ledger.Short(h.Ref.Name), Commit: h.Ref.Hash, Decision: dec})
	}
	return st, nil
}

func printStatus(e *env, st libraryStatus) {
	w := e.stdout
	fmt.Fprintf(w, "%s (%s)\n", st.Name, st.Path)
	refs := ledger.Refs{Library: st.Name}
	if st.Dev.IsZero() {
		fmt.Fprintf(w, "  not evolved yet: git descent evolve %s\n", st.Path)
		return
	}
	score := func(h git.Hash, at git.Hash, v float64) string {
		if h != at || at.IsZero() {
			return "validation not measured yet"
		}
		return fmt.Sprintf("validation %.2f", v)
	}
	fmt.Fprintf(w, "  dev     %s  %s  %s\n", st.Dev.Short(), ledger.Short(refs.Dev()), score(st.Dev, st.State.Dev, st.State.DevScore))
	fmt.Fprintf(w, "  stable  %s  %s  %s\n", st.Stable.Short(), ledger.Short(refs.Stable()), score(st.Stable, st.State.Stable, st.State.StableScore))
	fmt.Fprintf(w, "  %s, %s, %s; dev has held up for %s since it last moved\n",
		words.Count(st.State.Round, "round"), words.Count(st.State.Commits, "dev commit"), words.Count(len(st.State.Promotions), "promotion"), words.Count(st.State.CleanRounds, "round"))
	fmt.Fprintf(w, "  decisions: %s\n", outcomeList(st.Outcomes))
	if st.State.Noise != nil {
		fmt.Fprintf(w, "  agent: %s\n", st.State.Noise)
	}
	if n := len(st.State.Refile); n > 0 {
		fmt.Fprintf(w, "  %s re-filed for the next round\n", words.Count(n, "proposal"))
	}
	if n := len(st.State.Promising); n > 0 {
		fmt.Fprintf(w, "  %s to be pooled with later ones (promising-rounds = %d)\n", words.Count(n, "promising proposal waits", "promising proposals wait"), st.PromisingRounds)
	}
	if n := len(st.State.Rollbacks); n > 0 {
		last := st.State.Rollbacks[n-1]
		fmt.Fprintf(w, "  %s; last: dev %s → %s\n", words.Count(n, "rollback"), last.From.Short(), last.To.Short())
	}
	if st.State.Tokens > 0 || st.State.Cost > 0 {
		fmt.Fprintf(w, "  spent so far: %d tokens, %s\n", st.State.Tokens, budget.Cost(st.State.Cost, st.State.Unpriced))
	}
	for _, ws := range st.Workers {
		fmt.Fprintf(w, "  %-28s %s  %s\n", ws.Branch, ws.Commit.Short(), ws.Decision)
	}
	if st.Undecided > 0 {
		fmt.Fprintf(w, "  %s: the next evolve decides them first\n", words.Count(st.Undecided, "proposal awaits a decision", "proposals await a decision"))
	}
}
