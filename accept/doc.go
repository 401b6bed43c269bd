// Package accept holds the acceptance statistics: the posterior under a
// model of the agent's noise (pass/fail flips, graded rewards that are
// sometimes random), the sequential gate that decides whether a candidate
// beats dev task by task (Run, re-rolling what is uncertain and stopping as
// soon as the decision is known), the annealed δ, and the intervals of the
// honest report. Everything but Run is a pure function of its arguments;
// Run gets its rollouts from a Source.
package accept
