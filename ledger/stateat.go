package ledger

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/git-descent/git-descent/internal/git"
)

// StateAt reads the state a journal commit records (its state.json), as
// Journal.Head reads the journal's current one: for a journal commit that
// no ref holds yet, such as one a push is about to set. It only reads.
func StateAt(ctx context.Context, repo *git.Repo, journal git.Hash) (State, error) {
	var s State
	data, err := repo.ReadFile(ctx, journal, "state.json")
	if err != nil {
		return s, fmt.Errorf("read journal commit %s: %w", journal.Short(), err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("read journal commit %s: state.json: %w", journal.Short(), err)
	}
	return s, nil
}
