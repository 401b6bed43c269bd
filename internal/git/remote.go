package git

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Fetch runs `git fetch` from remote with refspecs, pruning the refs the
// refspecs' destinations hold that the remote no longer has. It writes only
// the refspecs' destinations: no tags, no FETCH_HEAD, and not the remote's
// configured remote-tracking branches (--refmap=). A ref another fetch
// holds locked for a moment (a killed process's git may still be running)
// is tried again.
func (r *Repo) Fetch(ctx context.Context, remote string, refspecs []string) error {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", "--no-auto-gc", "--refmap=", "--end-of-options", remote}, refspecs...)
	for attempt := 1; ; attempt++ {
		_, err := r.run(ctx, cmd{}, args...)
		var ce *CommandError
		if err == nil {
			return nil
		} else if attempt < 4 && errors.As(err, &ce) && strings.Contains(ce.Stderr, "cannot lock ref") && ctx.Err() == nil {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			continue
		}
		return fmt.Errorf("fetch from %s: %w", remote, err)
	}
}

// PushUpdate is one ref a push sets on the remote, compare-and-swap: Hash
// zero deletes it; Expect is the value the remote must still have (zero:
// the ref must not exist there).
type PushUpdate struct {
	Ref    string
	Hash   Hash
	Expect Hash
}

// PushRejectedError is a push the remote refused because a ref was not
// where the pusher expected it (another writer moved it first), or for
// another reason the remote gave. Nothing of an atomic push was written.
type PushRejectedError struct {
	Remote string
	Refs   []string // the refs the remote refused, with their reasons
	Stale  bool     // a ref had moved: fetch and try again
	Said   []string // what the remote said (its hooks' messages)
}

func (e *PushRejectedError) Error() string {
	msg := fmt.Sprintf("%s refused the push: %s", e.Remote, strings.Join(e.Refs, "; "))
	if len(e.Said) > 0 {
		msg += "\n  " + e.Remote + " said: " + strings.Join(e.Said, "\n  ")
	}
	return msg
}

// ErrNoAtomicPush is a remote that cannot take an atomic push.
var ErrNoAtomicPush = errors.New("the remote does not support atomic pushes (git push --atomic)")

// Push sets every update on remote in one atomic push (all or none) with
// leases: each ref is updated only where the remote still has its Expect
// value. A lost race or a refusal is a *PushRejectedError; a remote that
// cannot push atomically is ErrNoAtomicPush.
func (r *Repo) Push(ctx context.Context, remote string, updates []PushUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	args := []string{"push", "--atomic", "--porcelain"}
	var specs []string
	for _, u := range updates {
		if strings.ContainsAny(u.Ref, " \n\x00:") || !strings.HasPrefix(u.Ref, "refs/") {
			return fmt.Errorf("push %q: not a full ref name", u.Ref)
		}
		expect := ""
		if !u.Expect.IsZero() {
			expect = string(u.Expect)
		}
		args = append(args, "--force-with-lease="+u.Ref+":"+expect)
		src := ""
		if !u.Hash.IsZero() {
			src = string(u.Hash)
		}
		// No "+": a forced refspec would override the lease.
		specs = append(specs, src+":"+u.Ref)
	}
	args = append(append(args, "--end-of-options", remote), specs...)
	out, _, err := r.runCode(ctx, cmd{}, args...)
	var ce *CommandError
	if err == nil {
		return nil
	} else if !errors.As(err, &ce) {
		return fmt.Errorf("push to %s: %w", remote, err)
	}
	if strings.Contains(ce.Stderr, "does not support --atomic") {
		return ErrNoAtomicPush
	}
	rej := &PushRejectedError{Remote: remote}
	declined := false
	for _, line := range strings.Split(string(out), "\n") {
		// --porcelain: "<flag>\t<from>:<to>\t<summary> (<reason>)"
		f := strings.Split(line, "\t")
		if len(f) < 3 || f[0] != "!" {
			continue
		}
		_, to, _ := strings.Cut(f[1], ":")
		rej.Refs = append(rej.Refs, to+" "+f[2])
		declined = declined || strings.Contains(f[2], "hook declined")
		// A lease the remote's advertisement already broke (stale info),
		// or one its ref transaction found broken (the whole atomic
		// transaction then fails): another writer got there first.
		for _, s := range []string{"stale info", "fetch first", "non-fast-forward", "atomic transaction failed", "cannot lock ref", "failed to update ref"} {
			rej.Stale = rej.Stale || strings.Contains(f[2], s)
		}
	}
	rej.Stale = rej.Stale && !declined
	for _, line := range strings.Split(ce.Stderr, "\n") {
		if msg, ok := strings.CutPrefix(line, "remote: "); ok && strings.TrimSpace(msg) != "" {
			rej.Said = append(rej.Said, strings.TrimSpace(msg))
		}
	}
	if len(rej.Refs) == 0 {
		return fmt.Errorf("push to %s: %w", remote, err)
	}
	return rej
}

// RemoteDir returns the git directory of remote when it is a repository on
// this machine (a path, a file:// URL, or a configured remote whose URL is
// one), or "" when it is not: a local remote can be watched for changes.
func (r *Repo) RemoteDir(ctx context.Context, remote string) string {
	url := remote
	if v, ok, err := r.ConfigGet(ctx, "remote."+remote+".url"); err == nil && ok {
		url = v
	}
	url = strings.TrimPrefix(url, "file://")
	if strings.Contains(url, "://") || (strings.Contains(url, ":") && !filepath.IsAbs(url)) {
		return ""
	}
	if !filepath.IsAbs(url) {
		url = filepath.Join(r.top, url)
	}
	for _, dir := range []string{url, filepath.Join(url, ".git")} {
		if st, err := os.Stat(filepath.Join(dir, "refs")); err == nil && st.IsDir() {
			return dir
		}
	}
	return ""
}

// Clone clones the repository at src into dst (a new directory), bare or
// with a working tree, and opens the clone.
func Clone(ctx context.Context, src, dst string, bare bool, log *slog.Logger) (*Repo, error) {
	args := []string{"clone", "--quiet", "--no-hardlinks"}
	if bare {
		args = append(args, "--bare")
	}
	args = append(args, "--end-of-options", src, dst)
	if _, _, err := runGit(ctx, log, cmd{}, args...); err != nil {
		return nil, fmt.Errorf("clone %s: %w", src, err)
	}
	return Open(ctx, dst, log)
}
