package evolve

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-descent/git-descent/agent"
	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
	"github.com/git-descent/git-descent/materialize"
	"github.com/git-descent/git-descent/rollout"
	"github.com/git-descent/git-descent/sandbox"
)

// seat is where a proposer runs: a directory of its own outside the
// repository (materialize.Seat) and the name it runs under. Each worker
// owns one, and so does the repairer; a seat is used by one goroutine at a
// time.
type seat struct {
	id       string // the worker's id, or "repair"
	dir      *materialize.Seat
	proposer agent.Proposer
}

// made is what one proposer run made of a dev snapshot: the edit it
// captured and its rationale, or, when there is none, the outcome and why.
type made struct {
	edit    materialize.Edit
	rat     agent.Rationale
	outcome ledger.Outcome // "" when edit holds an edit
	reason  string
}

// proposeEdit runs the proposer in s's directory, which the caller has
// reset to dev and pointed fb at, counts what it spent, and captures its edit
// against dev. A proposer that failed, changed nothing or made an invalid
// edit comes back as made.outcome; the context ending or a fatal
// infrastructure failure (a refused key, no login) is an error that stops
// the run. Workers and repairs both propose this way.
func (r *runner) proposeEdit(ctx context.Context, s *seat, dev git.Hash, fb agent.Feedback) (made, error) {
	rat, err := r.propose(ctx, s, fb)
	r.meter.Add(rat.Tokens, rat.Cost, rat.Unpriced)
	if ctx.Err() != nil {
		return made{}, ctx.Err()
	}
	var infra *agent.InfraError
	if errors.As(err, &infra) {
		return made{}, fmt.Errorf("proposer of worker %s: %w", s.id, err)
	}
	if err != nil {
		return made{outcome: ledger.ProposerFailed, reason: err.Error()}, nil
	}
	edit, err := s.dir.Capture(ctx)
	var invalid *materialize.InvalidEditError
	switch {
	case errors.Is(err, materialize.ErrNoChange):
		return made{outcome: ledger.NoChange, reason: "the proposer changed nothing in the library"}, nil
	case errors.As(err, &invalid):
		return made{outcome: ledger.Invalid, reason: invalid.Error()}, nil
	case err != nil:
		return made{}, err
	}
	return made{edit: edit, rat: rat}, nil
}

// propose runs the proposer. One that fails for infrastructure reasons
// that may pass (an overloaded or unreachable endpoint) is retried with a
// doubling backoff, rollout.Attempts times in all; then the last failure
// comes back as a plain error (the proposal failed, the run goes on). A
// fatal one (a refused key, no login) comes back as the InfraError that
// stops the run.
func (r *runner) propose(ctx context.Context, s *seat, fb agent.Feedback) (agent.Rationale, error) {
	var rat, spent agent.Rationale
	err := rollout.Retry(ctx, r.opts.Backoff, func(attempt int) error {
		var err error
		rat, err = r.proposeOnce(ctx, s, fb)
		spent.Tokens, spent.Cost, spent.Unpriced = spent.Tokens+rat.Tokens, spent.Cost+rat.Cost, spent.Unpriced+rat.Unpriced
		if agent.Transient(err) {
			r.opts.Log.Debug("proposer could not run", "worker", s.id, "attempt", attempt, "err", err)
		}
		return err
	})
	rat.Tokens, rat.Cost, rat.Unpriced = spent.Tokens, spent.Cost, spent.Unpriced
	var infra *agent.InfraError
	if errors.As(err, &infra) && !infra.Fatal {
		return rat, fmt.Errorf("the proposer could not run (tried %d times): %w", rollout.Attempts, infra.Err)
	}
	return rat, err
}

// proposeOnce runs the proposer once with a private control directory.
func (r *runner) proposeOnce(ctx context.Context, s *seat, fb agent.Feedback) (agent.Rationale, error) {
	control, err := sandbox.NewWorkspace(r.controlRoot(), "descent-propose-")
	if err != nil {
		return agent.Rationale{}, err
	}
	defer control.Remove()
	return s.proposer.Propose(ctx, agent.ProposeRequest{
		Library: r.lib.Name, Worker: s.id, Worktree: s.dir.Dir, SkillDir: fb.SkillDir, Feedback: fb, Control: control.Dir,
	})
}

// trainTasks finds train tasks by id, skipping unknown ones.
func (r *runner) trainTasks(ids []string) []eval.Task {
	byID := map[string]eval.Task{}
	for _, t := range r.train() {
		byID[t.ID] = t
	}
	var out []eval.Task
	for _, id := range ids {
		if t, ok := byID[id]; ok {
			out = append(out, t)
		}
	}
	return out
}
