// Package killtest holds the crash test of `git descent evolve`: runs killed
// with SIGKILL at random instants, and the ledger's invariants checked after
// each (see TestKillAnywhere). It has no code outside its tests.
package killtest
