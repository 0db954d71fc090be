package tuner

import (
	"io"
	"sync"
	"time"
)

// compileCache holds compiled artifacts by source hash. Two configurations
// that generate the same source (a parameter the recipe ignores for this
// shape, say) compile once. Entries in use are never evicted; beyond
// capacity the least recently used idle entry goes, closed if it is an
// io.Closer (a device program, for instance).
type compileCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	cap     int
	clock   int64
}

// cacheEntry is one compilation; done is closed when it has finished.
type cacheEntry struct {
	hash    string
	done    chan struct{}
	art     Artifact
	err     error
	kind    Kind // the error's kind
	dur     time.Duration
	users   int
	lastUse int64
}

func newCompileCache(capacity int) *compileCache {
	return &compileCache{entries: map[string]*cacheEntry{}, cap: capacity}
}

// acquire returns the entry for hash and marks it in use; created says the
// caller must compile it and call finish.
func (c *compileCache) acquire(hash string) (e *cacheEntry, created bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	e, hit := c.entries[hash]
	if !hit {
		e = &cacheEntry{hash: hash, done: make(chan struct{})}
		c.entries[hash] = e
	}
	e.users++
	e.lastUse = c.clock
	return e, !hit
}

// finish publishes a compilation's result to everyone waiting on e.
func (c *compileCache) finish(e *cacheEntry, art Artifact, err error, kind Kind, dur time.Duration) {
	e.art, e.err, e.kind, e.dur = art, err, kind, dur
	close(e.done)
}

// release ends one use of e and trims the cache to its capacity.
func (c *compileCache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	for len(c.entries) > c.cap {
		victim := c.oldestIdle()
		if victim == nil {
			return
		}
		delete(c.entries, victim.hash)
		closeArtifact(victim.art)
	}
}

func (c *compileCache) oldestIdle() *cacheEntry {
	var old *cacheEntry
	for _, e := range c.entries {
		if e.users == 0 && (old == nil || e.lastUse < old.lastUse) {
			old = e
		}
	}
	return old
}

// close closes every artifact; the cache is unusable afterwards.
func (c *compileCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		closeArtifact(e.art)
		delete(c.entries, h)
	}
}

// closeArtifact releases a. A failure to release a compiled program says
// nothing about the configuration and cannot be acted on here.
func closeArtifact(a Artifact) {
	if cl, ok := a.(io.Closer); ok {
		_ = cl.Close()
	}
}
