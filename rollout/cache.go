// Package rollout runs the agent on one task against one library version,
// scores the output, and caches the result so no version is rolled out
// twice on the same task — within a run, across concurrent callers, and
// across restarts.
package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
)

// Record is the result of one rollout.
type Record struct {
	Task    string  `json:"task"`
	Reward  float64 `json:"reward"` // in [0,1]; 0 when the agent failed
	Output  string  `json:"output"` // capped at maxCachedOutput
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
	Tokens  int64   `json:"tokens"`
	Cost    float64 `json:"cost"` // USD, the agent's and the grader's
	// Unpriced are tokens of Tokens whose cost is unknown (no price for
	// the model); Model is the model the agent used or was told to use.
	Unpriced int64  `json:"unpriced_tokens,omitempty"`
	Model    string `json:"model,omitempty"`
	// Grading holds the judge's verdicts on the task's expectations.
	Grading []eval.Verdict `json:"grading,omitempty"`
	Cached  bool           `json:"-"` // served from the cache: cost nothing this time
	// Errored says why the rollout could not run on any attempt (an
	// infrastructure failure): it has no reward and is never cached.
	Errored string `json:"-"`
}

// maxCachedOutput caps the output kept per record.
const maxCachedOutput = 16 << 10

// Key identifies a rollout: the library tree, the task's content, the
// runner and scorer configuration, and the repeat index.
type Key struct {
	Tree   git.Hash
	Task   string // eval.Task.Hash()
	Config string // Config.Hash()
	Repeat int
}

func (k Key) String() string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d", k.Tree, k.Task, k.Config, k.Repeat)))
	return hex.EncodeToString(h[:])
}

// Cache keeps records on disk (one JSON file each, written atomically) and
// in memory, and makes concurrent requests for one key share a single
// rollout. It is safe for concurrent use.
type Cache struct {
	dir string

	// mu guards both maps and every flight's fields until its done is
	// closed. A flight is added by the caller that leads it and removed by
	// that caller, under mu, before done is closed; after that its fields
	// are read without mu.
	mu       sync.Mutex
	kept     map[string]outcome // finished outcomes for this process; never removed
	inflight map[string]*flight // rollouts running now, by key

	// testHookWait, set only by tests, is called when a caller starts
	// waiting for another caller's flight.
	testHookWait func()
}

// outcome is what a finished rollout gave: a record, or (err set) an
// *erroredError, which is kept in memory but never written to disk.
type outcome struct {
	rec Record
	err error
}

// flight is one running rollout that callers asking for its key wait for.
type flight struct {
	done      chan struct{} // closed by the leader when it has finished
	outcome                 // the leader's result
	cancelled bool          // the leader's context ended: its result is no one else's
}

// OpenCache returns the cache stored in dir (created on first write). With
// dir "" nothing is read from or written to disk: results are shared only
// within the process (evolve --no-cache).
func OpenCache(dir string) *Cache {
	return &Cache{dir: dir, kept: map[string]outcome{}, inflight: map[string]*flight{}}
}

// Do returns the record for key, running f only when neither the cache nor
// a concurrent caller has it. hit reports whether f was not run by this
// call. f runs in the calling goroutine under ctx, the caller's context.
// Errors from f are not cached, except that a rollout that errored on
// every attempt stays errored for later callers in this process (it is
// never written to disk). A caller waiting for another's rollout shares
// its result, unless that caller's context ended first: then the waiter
// tries again, leading a new rollout or joining one. A waiter whose own
// context ends stops waiting and returns ctx.Err().
func (c *Cache) Do(ctx context.Context, key Key, f func() (Record, error)) (rec Record, hit bool, err error) {
	k := key.String()
	for {
		c.mu.Lock()
		if o, ok := c.kept[k]; ok {
			c.mu.Unlock()
			o.rec.Cached = true
			return o.rec, true, o.err
		}
		fl, ok := c.inflight[k]
		if !ok {
			fl = &flight{done: make(chan struct{})}
			c.inflight[k] = fl
			c.mu.Unlock()
			return c.lead(ctx, k, fl, f)
		}
		c.mu.Unlock()
		if c.testHookWait != nil {
			c.testHookWait()
		}
		select {
		case <-fl.done:
		case <-ctx.Done():
			return Record{}, false, ctx.Err()
		}
		if !fl.cancelled {
			rec := fl.rec // a copy: fl is shared by every waiter
			rec.Cached = true
			return rec, true, fl.err
		}
		if ctx.Err() != nil {
			return Record{}, false, ctx.Err()
		}
	}
}

// lead runs the rollout of flight fl for key k: from disk, or by f.
func (c *Cache) lead(ctx context.Context, k string, fl *flight, f func() (Record, error)) (rec Record, hit bool, err error) {
	defer func() { c.land(ctx, k, fl, outcome{rec, err}) }()
	if r, ok := c.load(k); ok {
		r.Cached = true
		return r, true, nil
	}
	rec, err = f()
	if err != nil {
		return rec, false, err
	}
	if len(rec.Output) > maxCachedOutput {
		rec.Output = rec.Output[:maxCachedOutput]
	}
	return rec, false, c.store(k, rec)
}

// land ends flight fl with its leader's outcome o: it keeps a record or an
// errored rollout, removes the flight and wakes its waiters. A leader
// whose context ended, or whose error is a context's, was cancelled: its
// outcome is neither kept nor shared.
func (c *Cache) land(ctx context.Context, k string, fl *flight, o outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errored *erroredError
	fl.outcome = o
	fl.cancelled = o.err != nil && (ctx.Err() != nil ||
		errors.Is(o.err, context.Canceled) || errors.Is(o.err, context.DeadlineExceeded))
	if !fl.cancelled && (o.err == nil || errors.As(o.err, &errored)) {
		c.kept[k] = o
	}
	delete(c.inflight, k)
	close(fl.done)
}

func (c *Cache) path(k string) string { return filepath.Join(c.dir, k[:2], k+".json") }

func (c *Cache) load(k string) (Record, bool) {
	if c.dir == "" {
		return Record{}, false
	}
	data, err := os.ReadFile(c.path(k))
	if err != nil {
		return Record{}, false
	}
	var r Record
	if json.Unmarshal(data, &r) != nil {
		return Record{}, false // a damaged entry is rebuilt
	}
	return r, true
}

func (c *Cache) store(k string, r Record) error {
	if c.dir == "" {
		return nil
	}
	p := c.path(k)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("rollout cache: %w", err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("rollout cache: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("rollout cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rollout cache: %w", err)
	}
	return os.Rename(tmp.Name(), p)
}
