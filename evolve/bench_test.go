package evolve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/library"
)

// BenchmarkProposalOverhead measures what git-descent itself costs per
// proposal: a zero-latency agent (`echo`) and a proposer that appends one
// line, so nearly all the time is worktrees, rollout workspaces, process
// starts, commits, merges, the gate and the ledger. Run it with
//
//	go test -run '^$' -bench ProposalOverhead -benchtime 5x ./evolve
//
// It reports ms/proposal and rollouts/proposal. The big case is the
// issue's: a 20-file library with 40 tasks in a repository of 10,000 files,
// in rounds and in the asynchronous pipeline.
func BenchmarkProposalOverhead(b *testing.B) {
	for _, c := range []struct {
		workers, files, libFiles, tasks int
		async                           bool
		isolation                       string
	}{
		{1, 0, 1, 24, false, "none"}, {4, 0, 1, 24, false, "none"}, {4, 10000, 20, 40, false, "none"}, {4, 10000, 20, 40, true, "none"},
		{4, 10000, 20, 40, false, "bwrap"}, // what the jail costs, where bubblewrap works
	} {
		workers := c.workers
		name := fmt.Sprintf("workers=%d/files=%d", workers, c.files)
		if c.async {
			name += "/async"
		}
		if c.isolation != "none" {
			name += "/" + c.isolation
		}
		b.Run(name, func(b *testing.B) {
			const rounds = 4
			var proposals int
			var elapsed time.Duration
			var rollouts int64
			for i := 0; i < b.N; i++ {
				repo, lib := benchRepo(b, c.files, c.libFiles, c.tasks, c.isolation)
				start := time.Now()
				sum, err := Evolve(context.Background(), repo, lib, Options{Workers: workers, Rounds: rounds, Jobs: 2 * workers, Async: c.async})
				if err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				proposals += sum.Proposals
				rollouts += sum.Rollouts
			}
			if proposals == 0 {
				b.Fatal("no proposals")
			}
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(proposals), "ms/proposal")
			b.ReportMetric(float64(rollouts)/float64(proposals), "rollouts/proposal")
		})
	}
}

// benchRepo builds a repository of files other files and a library of
// libFiles files and tasks tasks, whose agent answers instantly and whose
// proposer always makes a new edit, at an isolation level. git-descent is built once and put first
// on PATH, since git runs it as the merge driver.
func benchRepo(b *testing.B, files, libFiles, tasks int, isolation string) (*git.Repo, *library.Library) {
	b.Helper()
	bin := buildOnce(b)
	b.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	content := map[string]string{}
	for i := 1; i < libFiles; i++ {
		content[fmt.Sprintf("skills/s/references/r%02d.md", i)] = fmt.Sprintf("reference %d\n", i)
	}
	for i := 0; i < files; i++ {
		content[fmt.Sprintf("src/d%02d/f%04d.txt", i%100, i)] = fmt.Sprintf("file %d\n", i)
	}
	_, repo, lib := libraryRepo(b, tasks, "never", content, map[string]string{
		"isolation": isolation,
		"run":       "echo answer",
		"proposer":  `echo "edit $DESCENT_WORKER $(date +%s%N)" >> "$DESCENT_SKILL_DIR/SKILL.md"`,
	})
	return repo, lib
}

var builtDir string

func buildOnce(b *testing.B) string {
	if builtDir != "" {
		return builtDir
	}
	dir, err := os.MkdirTemp("", "descent-bench-bin-")
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "git-descent"), "../cmd/git-descent").CombinedOutput()
	if err != nil {
		b.Fatalf("build git-descent: %v\n%s", err, out)
	}
	builtDir = dir
	return dir
}
