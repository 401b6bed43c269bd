package git

import "sync"

// objectCache keeps what in-process reads found: objects never change, and
// every rollout of a library version reads the same tree and blobs again
// (from loose objects on disk, a file open each), as the aggregator reads
// the same dev commits for every proposal. It holds at most
// maxCached bytes, and starts again from empty when full.
type objectCache struct {
	mu      sync.Mutex
	size    int
	blobs   map[Hash][]byte
	trees   map[Hash][]TreeEntry
	commits map[Hash][]Hash // parents
}

const (
	maxCached     = 64 << 20
	maxCachedBlob = 1 << 20 // bigger blobs are read each time
)

func (c *objectCache) blob(h Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.blobs[h]
	return b, ok
}

func (c *objectCache) tree(h Hash) ([]TreeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.trees[h]
	return t, ok
}

func (c *objectCache) parents(h Hash) ([]Hash, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.commits[h]
	return ps, ok
}

func (c *objectCache) putParents(h Hash, ps []Hash) {
	c.put(len(h)*(1+len(ps)), func() { c.commits[h] = ps })
}

func (c *objectCache) putBlob(h Hash, data []byte) {
	if len(data) > maxCachedBlob {
		return
	}
	c.put(len(data), func() { c.blobs[h] = data })
}

func (c *objectCache) putTree(h Hash, entries []TreeEntry) {
	n := 0
	for _, e := range entries {
		n += len(e.Path) + len(e.Hash) + 32
	}
	c.put(n, func() { c.trees[h] = entries })
}

func (c *objectCache) put(n int, add func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blobs == nil || c.size+n > maxCached {
		c.blobs, c.trees, c.commits, c.size = map[Hash][]byte{}, map[Hash][]TreeEntry{}, map[Hash][]Hash{}, 0
	}
	c.size += n
	add()
}
