package rollout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent requests for one key share a single run; the record survives
// on disk for a new Cache (a restart).
func TestCacheSingleFlightAndPersistence(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir)
	key := Key{Tree: "t", Task: "x", Config: "c"}
	var runs atomic.Int32
	var wg sync.WaitGroup
	hits := make([]bool, 8)
	for i := range hits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, hit, err := c.Do(context.Background(), key, func() (Record, error) {
				runs.Add(1)
				time.Sleep(50 * time.Millisecond)
				return Record{Task: "x", Reward: 0.5}, nil
			})
			if err != nil || rec.Reward != 0.5 {
				t.Errorf("Do = %+v, %v", rec, err)
			}
			hits[i] = hit
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("ran %d times, want 1", runs.Load())
	}
	misses := 0
	for _, h := range hits {
		if !h {
			misses++
		}
	}
	if misses != 1 {
		t.Fatalf("%d callers missed, want 1", misses)
	}
	rec, hit, err := OpenCache(dir).Do(context.Background(), key, func() (Record, error) {
		t.Fatal("ran again after a restart")
		return Record{}, nil
	})
	if err != nil || !hit || rec.Reward != 0.5 {
		t.Fatalf("after restart: %+v hit=%v err=%v", rec, hit, err)
	}
}

// Errors are not cached: a later call runs again. A damaged file is
// rebuilt.
func TestCacheErrorsAndDamage(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir)
	key := Key{Tree: "t", Task: "x", Config: "c", Repeat: 1}
	boom := errors.New("boom")
	if _, _, err := c.Do(context.Background(), key, func() (Record, error) { return Record{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	rec, hit, err := c.Do(context.Background(), key, func() (Record, error) { return Record{Reward: 1}, nil })
	if err != nil || hit || rec.Reward != 1 {
		t.Fatalf("retry: %+v hit=%v err=%v", rec, hit, err)
	}
	// A damaged line, and one a crash cut short, are skipped: their
	// rollouts are run again; the lines after them are read.
	log := filepath.Join(dir, logName)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	other := Key{Tree: "t", Task: "y", Config: "c"}
	if _, _, err := c.Do(context.Background(), other, func() (Record, error) { return Record{Reward: 0.75}, nil }); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	last := whole[len(data):]
	damaged := append(append(append([]byte("{garbage\n"), data[:len(data)-1]...), []byte("}}\n")...), last...)
	if err := os.WriteFile(log, append(damaged, data[:len(data)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	c = OpenCache(dir)
	rec, hit, err = c.Do(context.Background(), key, func() (Record, error) { return Record{Reward: 0.25}, nil })
	if err != nil || hit || rec.Reward != 0.25 {
		t.Fatalf("damaged: %+v hit=%v err=%v", rec, hit, err)
	}
	if rec, hit, _ := c.Do(context.Background(), other, func() (Record, error) { return Record{}, nil }); !hit || rec.Reward != 0.75 {
		t.Fatalf("the line after a damaged one: %+v hit=%v", rec, hit)
	}
}

// Records of the one-file-per-record layout of earlier versions are read.
func TestCacheReadsLegacyFiles(t *testing.T) {
	dir := t.TempDir()
	key := Key{Tree: "t", Task: "x", Config: "c"}
	k := key.String()
	if err := os.MkdirAll(filepath.Join(dir, k[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, k[:2], k+".json"), []byte(`{"task":"x","reward":0.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, hit, err := OpenCache(dir).Do(context.Background(), key, func() (Record, error) { return Record{}, nil })
	if err != nil || !hit || rec.Reward != 0.5 {
		t.Fatalf("legacy: %+v hit=%v err=%v", rec, hit, err)
	}
	if n, size, err := Usage(dir); err != nil || n != 1 || size == 0 {
		t.Fatalf("usage: %d records, %d bytes, %v", n, size, err)
	}
}

func TestKeyDependsOnEveryPart(t *testing.T) {
	base := Key{Tree: "t", Task: "x", Config: "c", Repeat: 0}
	seen := map[string]bool{base.String(): true}
	for _, k := range []Key{
		{Tree: "u", Task: "x", Config: "c"},
		{Tree: "t", Task: "y", Config: "c"},
		{Tree: "t", Task: "x", Config: "d"},
		{Tree: "t", Task: "x", Config: "c", Repeat: 1},
	} {
		if seen[k.String()] {
			t.Errorf("key %+v collides", k)
		}
		seen[k.String()] = true
	}
}

// What one machine stored, another imports: its requests for those keys
// are answered without running, and what it stores itself stays its own.
func TestCacheShares(t *testing.T) {
	ctx := context.Background()
	one, two := OpenCache(t.TempDir()), OpenCache(t.TempDir())
	ka, kb := Key{Tree: "t", Task: "a", Config: "c"}, Key{Tree: "t", Task: "b", Config: "c"}
	run := func(c *Cache, k Key, reward float64) (Record, bool) {
		rec, hit, err := c.Do(ctx, k, func() (Record, error) { return Record{Task: k.Task, Reward: reward}, nil })
		if err != nil {
			t.Fatal(err)
		}
		return rec, hit
	}
	run(one, ka, 1)
	run(two, kb, 0)
	if n := two.Import(append(one.Stored(), "{torn"...)); n != 1 {
		t.Fatalf("imported %d records, want 1", n)
	}
	if rec, hit := run(two, ka, 0); !hit || rec.Reward != 1 {
		t.Errorf("after import: %+v hit %v, want one's record", rec, hit)
	}
	if n := two.Import(one.Stored()); n != 0 {
		t.Errorf("importing again added %d", n)
	}
	if recs := parseLog(two.Stored()); len(recs) != 1 || recs[kb.String()].Reward != 0 {
		t.Errorf("two stored %v, want its own record alone", recs)
	}
}
