// Package hooks is everything git-descent installs into a user's git: the
// merge driver's config and the attributes that route a library's files
// through it (mergedriver.go); the git hooks that guard descent refs, their
// install, chaining and removal (install.go), what they run (run.go) and
// the guards' rules (guard.go, frozen.go, heads.go); and the lifecycle
// hooks a library configures (lifecycle.go). It never overwrites what it
// did not write: a foreign value or hook is reported with the fix.
package hooks
