package evolve

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/sandbox"
)

// isolate resolves the library's isolation level once per run (auto
// becomes bwrap or none, an unavailable bwrap stops the run with its fix)
// and keeps the line that reports it.
func (r *runner) isolate() error {
	level, why, err := sandbox.Resolve(r.lib.Isolation)
	if err != nil {
		return fmt.Errorf("library %q: %w", r.lib.Name, err)
	}
	r.level = level
	r.summary.Isolation = level
	var limits []string
	if level == sandbox.LevelBwrap {
		limits = append(limits, r.networkLine())
	}
	if m := r.lib.MemoryLimit; m > 0 {
		limits = append(limits, fmt.Sprintf("%d MiB of data", m>>20))
	}
	cpu := "CPU time up to each timeout"
	if r.lib.CPULimit > 0 {
		cpu = "CPU time " + r.lib.CPULimit.String()
	}
	r.isolation = why + ": " + strings.Join(append(limits, cpu), ", ") + " per process"
	return nil
}

// networkLine says who has the network under bwrap.
func (r *runner) networkLine() string {
	var clis []string
	for _, role := range []string{r.lib.Run, r.lib.Proposer} {
		if (role == library.RunnerClaude || role == library.RunnerCodex) && !slices.Contains(clis, role) {
			clis = append(clis, role)
		}
	}
	switch {
	case r.lib.Network == "true":
		return "network on"
	case r.lib.Network == "false":
		return "network off"
	case len(clis) > 0:
		return "network on for " + strings.Join(clis, " and ") + " (its API), off for commands"
	}
	return "network off (network = true allows it)"
}

// network reports whether processes under bwrap keep the network: as the
// library says, else only the CLI agents, which need their model's API.
func (r *runner) network(cli bool) bool {
	if r.lib.Network != "" {
		return r.lib.Network == "true"
	}
	return cli
}

// jail is how an agent, proposer or oracle process of the library runs:
// at the run's level, the repository and its git directory hidden, the
// library's sandbox-read paths visible, the limits of the library (CPU
// time no more than timeout, by default).
func (r *runner) jail(cli bool, timeout time.Duration) sandbox.Jail {
	top := r.repo.Top()
	j := sandbox.Jail{Level: r.level, Network: r.network(cli), Memory: r.lib.MemoryLimit, CPU: r.lib.CPULimit, Hide: []string{r.repo.GitDir()}}
	if top != "" {
		j.Hide = append(j.Hide, top)
	}
	if j.CPU == 0 {
		j.CPU = timeout
	}
	for _, p := range r.lib.SandboxRead {
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, filepath.FromSlash(p))
		}
		j.Read = append(j.Read, filepath.Clean(p))
	}
	return j
}
