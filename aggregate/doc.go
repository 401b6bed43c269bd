// Package aggregate decides which proposals enter a library's dev: one
// round is a pipeline of stages, one file each, in this order:
//
//   - admit.go: the trust region and the staleness policy (stale proposals
//     rebased, set aside or repaired);
//   - split.go: proposals whose own evidence shows no gain on the current
//     dev, and L1 changes, go alone;
//   - fuse.go: the rest are merged together (through git and the merge
//     driver), textual conflicts settled by validation score;
//   - rank.go: a fusion is scored against its members (semantic conflicts),
//     while its gate runs;
//   - gate.go: each candidate against dev on held-out tasks (package accept);
//   - commit.go: an accepted candidate merged into dev, recorded in the
//     journal in the same transaction;
//   - pool.go: promising proposals pooled into one candidate;
//   - promote.go: stable fast-forwarded once dev has held up.
//
// round.go runs them, evaluating up to Gates candidates at once and deciding
// them in order; decide.go collects a round's decisions. An Aggregator is
// used from one goroutine, but for Hold and Arrived, which may run during a
// round; the rollouts of a stage run in parallel.
package aggregate
