// Package rollout runs the agent on one task against one library version,
// scores the output, and caches the result so no version is rolled out
// twice on the same task — within a run, across concurrent callers, and
// across restarts.
package rollout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-descent/git-descent/eval"
	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/sandbox"
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

// Cache keeps records on disk and in memory, and makes concurrent requests
// for one key share a single rollout. It is safe for concurrent use.
//
// On disk, records are lines appended to one log (logName: a JSON object
// with the key and the record per line), read once when the cache is
// first asked: a rollout adds one write to an open file rather than a
// file of its own. A damaged or torn line (a crash mid-write) is skipped,
// so its rollout is run again. Records of the one-file-per-record layout
// of earlier versions are still read.
type Cache struct {
	dir string

	loaded sync.Once
	disk   map[string]Record // the log's records, read once; never written after

	logMu  sync.Mutex
	log    *os.File // opened for appending on the first store
	stored []byte   // the log lines this process stored, for sharing (Stored)

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
	done      chan struct{}  // closed by the leader when it has finished
	outcome                  // the leader's result
	cancelled bool           // the leader's context ended: its result is no one else's
	claim     *sandbox.Claim // the leader's slot claim (sandbox.WithClaim), or nil
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
			fl = &flight{done: make(chan struct{}), claim: sandbox.ClaimOf(ctx)}
			c.inflight[k] = fl
			c.mu.Unlock()
			return c.lead(ctx, k, fl, f)
		}
		if fl.claim != nil {
			fl.claim.Raise(sandbox.PriorityOf(ctx)) // its slot is waited for at the most urgent waiter's priority
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

// logName is the cache's log in its directory.
const logName = "log.jsonl"

// entry is one line of the log.
type entry struct {
	Key    string `json:"key"`
	Record Record `json:"record"`
}

// legacyPath is where the one-file-per-record layout kept a record.
func (c *Cache) legacyPath(k string) string { return filepath.Join(c.dir, k[:2], k+".json") }

func (c *Cache) load(k string) (Record, bool) {
	if c.dir == "" {
		return Record{}, false
	}
	c.loaded.Do(func() { c.disk = readLog(filepath.Join(c.dir, logName)) })
	if r, ok := c.disk[k]; ok {
		return r, true
	}
	data, err := os.ReadFile(c.legacyPath(k))
	if err != nil {
		return Record{}, false
	}
	var r Record
	if json.Unmarshal(data, &r) != nil {
		return Record{}, false // a damaged entry is rebuilt
	}
	return r, true
}

// readLog reads every whole, valid line of a log; a missing log is empty.
func readLog(path string) map[string]Record {
	data, err := os.ReadFile(path)
	if err != nil {
		return map[string]Record{}
	}
	return parseLog(data)
}

// parseLog reads every whole, valid line of a log's content.
func parseLog(data []byte) map[string]Record {
	out := map[string]Record{}
	for len(data) > 0 {
		line, rest, whole := bytes.Cut(data, []byte("\n"))
		data = rest
		var e entry
		if whole && json.Unmarshal(line, &e) == nil && e.Key != "" {
			out[e.Key] = e.Record
		}
	}
	return out
}

func (c *Cache) store(k string, r Record) error {
	if c.dir == "" {
		return nil
	}
	line, err := json.Marshal(entry{Key: k, Record: r})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.log == nil {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return fmt.Errorf("rollout cache: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(c.dir, logName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("rollout cache: %w", err)
		}
		c.log = f
	}
	// One write per line: appends of concurrent writers do not interleave.
	if _, err := c.log.Write(line); err != nil {
		return fmt.Errorf("rollout cache: %w", err)
	}
	c.stored = append(c.stored, line...)
	return nil
}

// Stored returns the log lines of every rollout this process ran and
// stored, in the log's format, for sharing with other machines.
func (c *Cache) Stored() []byte {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	return append([]byte(nil), c.stored...)
}

// Import makes the records of a log (another machine's, in the log's
// format) answer this process's requests as if cached here, without
// writing them to disk; records already known are kept as they are. It
// returns how many it added. Damaged lines are skipped.
func (c *Cache) Import(log []byte) int {
	recs := parseLog(log)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, r := range recs {
		if _, ok := c.kept[k]; ok {
			continue
		}
		c.kept[k] = outcome{rec: r}
		n++
	}
	return n
}

// Close closes the log; a later store opens it again.
func (c *Cache) Close() error {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.log == nil {
		return nil
	}
	err := c.log.Close()
	c.log = nil
	return err
}

// Usage counts the records kept in a cache directory and the bytes they
// take, the log's and earlier versions' files together.
func Usage(dir string) (records int, size int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		switch {
		case d.Name() == logName:
			records += len(readLog(p))
		case strings.HasSuffix(d.Name(), ".json"):
			records++
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	return records, size, err
}
