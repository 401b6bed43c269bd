package cli

import (
	"context"
	"io"
	"os"
	"os/exec"

	"github.com/git-descent/git-descent/internal/git"
)

// page returns where a long listing goes: through git's pager when stdout
// is a terminal, as git log does (the pager git var GIT_PAGER names, with
// git's LESS=FRX and LV=-c unless set), else stdout itself. done closes the
// pager's input and waits for it. A pager quit early makes further writes
// vanish rather than fail.
func (e *env) page(ctx context.Context, repo *git.Repo) (w io.Writer, done func()) {
	none := func() {}
	if e.noPager || e.terminal == nil || !e.terminal(e.stdout) || os.Getenv("GIT_PAGER_IN_USE") != "" {
		return e.stdout, none
	}
	pager, err := repo.Pager(ctx)
	if err != nil || pager == "" || pager == "cat" {
		return e.stdout, none
	}
	c := exec.Command("sh", "-c", pager)
	c.Stdout, c.Stderr = e.stdout, e.stderr
	c.Env = append(os.Environ(), "GIT_PAGER_IN_USE=true")
	for k, v := range map[string]string{"LESS": "FRX", "LV": "-c"} {
		if _, ok := os.LookupEnv(k); !ok {
			c.Env = append(c.Env, k+"="+v)
		}
	}
	in, err := c.StdinPipe()
	if err != nil {
		return e.stdout, none
	}
	if err := c.Start(); err != nil {
		return e.stdout, none
	}
	return &quietWriter{w: in}, func() {
		in.Close()
		c.Wait()
	}
}

// quietWriter passes writes on until one fails (the reader has gone), then
// drops the rest.
type quietWriter struct {
	w      io.Writer
	broken bool
}

func (q *quietWriter) Write(p []byte) (int, error) {
	if !q.broken {
		if _, err := q.w.Write(p); err != nil {
			q.broken = true
		}
	}
	return len(p), nil
}
