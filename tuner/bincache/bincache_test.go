package bincache

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestPutGetLookup(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	prog := Key("NVIDIA H200", "580", "opencl", "", "kernel void k() {}")
	if _, ok := c.Get(prog); ok {
		t.Fatal("an empty cache hit")
	}
	if err := c.Put(prog, []byte("PTX")); err != nil {
		t.Fatal(err)
	}
	if bin, ok := c.Get(prog); !ok || string(bin) != "PTX" {
		t.Fatalf("Get = %q, %v", bin, ok)
	}
	kernel := Key("kernel", "gemm source")
	if _, _, ok := c.Lookup(kernel); ok {
		t.Fatal("a kernel never indexed was found")
	}
	if err := c.Index(kernel, prog, "gemm_0123"); err != nil {
		t.Fatal(err)
	}
	if p, sym, ok := c.Lookup(kernel); !ok || p != prog || sym != "gemm_0123" {
		t.Fatalf("Lookup = %s %s %v", p, sym, ok)
	}
	s, err := c.Stats()
	if err != nil || s.Binaries != 1 || s.Kernels != 1 || s.Bytes != 3+32 {
		t.Fatalf("stats %+v, %v", s, err)
	}
	if err := c.Clear(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Lookup(kernel); ok {
		t.Error("found after Clear")
	}
}

// TestDamagedBinaryIsAMiss: a binary whose checksum does not match is
// absent (and removed), and so is an index entry whose binary is gone.
func TestDamagedBinaryIsAMiss(t *testing.T) {
	c, _ := Open(t.TempDir(), 0)
	key := Key("p")
	c.Put(key, []byte("binary"))
	c.Index(Key("k"), key, "k")
	path := c.path(binariesDir, key)
	data, _ := os.ReadFile(path)
	data[0] ^= 0xff
	os.WriteFile(path, data, 0o644)
	if _, ok := c.Get(key); ok {
		t.Error("a damaged binary was returned")
	}
	if _, _, ok := c.Lookup(Key("k")); ok {
		t.Error("a kernel of a removed binary was found")
	}
}

// TestLimit: beyond its limit the cache drops the least recently used
// binaries.
func TestLimit(t *testing.T) {
	c, _ := Open(t.TempDir(), 1200) // three binaries of 332 bytes fit, four do not
	bin := bytes.Repeat([]byte{1}, 300)
	start := time.Now().Add(-time.Hour)
	for i := range 3 {
		key := Key(fmt.Sprint(i))
		c.Put(key, bin)
		at := start.Add(time.Duration(i) * time.Minute)
		os.Chtimes(c.path(binariesDir, key), at, at)
	}
	c.Get(Key("0")) // used now: the newest
	c.Put(Key("3"), bin)
	s, _ := c.Stats()
	if s.Bytes > 1200 {
		t.Errorf("%d bytes kept, limit 1200", s.Bytes)
	}
	for i, want := range []bool{true, false, true, true} {
		if _, ok := c.Get(Key(fmt.Sprint(i))); ok != want {
			t.Errorf("binary %d kept %v, want %v (least recently used goes)", i, ok, want)
		}
	}
}

// TestConcurrentWriters: processes (here goroutines with caches of their
// own on one directory) writing and reading the same keys only ever see
// whole binaries.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			c, err := Open(dir, 0)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 50 {
				key := Key(fmt.Sprint(i % 5))
				want := bytes.Repeat([]byte{byte(i % 5)}, 4096)
				if i%2 == w%2 {
					if err := c.Put(key, want); err != nil {
						t.Error(err)
					}
				} else if got, ok := c.Get(key); ok && !bytes.Equal(got, want) {
					t.Errorf("key %d: a torn or foreign binary", i%5)
				}
			}
		})
	}
	wg.Wait()
}

// TestNotes: a note keeps each line once, across Note calls; a key never
// noted has no lines; SetNote replaces a note, or removes it when given
// none; Clear removes notes with the binaries.
func TestNotes(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	key := Key("configurations", "gemm.nn f32 64x64x32")
	if lines, err := c.Noted(key); err != nil || lines != nil {
		t.Fatalf("a key never noted: %q, %v", lines, err)
	}
	for _, lines := range [][]string{{"b", "a"}, {"a", "c"}, {"c"}} {
		if err := c.Note(key, lines); err != nil {
			t.Fatal(err)
		}
	}
	if lines, err := c.Noted(key); err != nil || !slices.Equal(lines, []string{"a", "b", "c"}) {
		t.Fatalf("Noted = %q, %v; want a, b, c", lines, err)
	}
	if lines, _ := c.Noted(Key("configurations", "another")); lines != nil {
		t.Errorf("another key has %q", lines)
	}
	if s, err := c.Stats(); err != nil || s.Notes != 1 {
		t.Errorf("Stats: %d notes, %v; want 1", s.Notes, err)
	}
	if err := c.SetNote(key, []string{"c", "a"}); err != nil {
		t.Fatal(err)
	}
	if lines, _ := c.Noted(key); !slices.Equal(lines, []string{"a", "c"}) {
		t.Errorf("after SetNote(c, a): %q", lines)
	}
	checkClearAndRemove(t, c, key, c.Noted, c.SetNote)
}

// TestPaths: a path keeps its lines in order, is
// replaced whole, counted apart from notes and cleared with the cache.
func TestPaths(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	key := Key("path", "gemm.nn f32 64x64x32", "1")
	if lines, err := c.Path(key); err != nil || lines != nil {
		t.Fatalf("a key never written: %q, %v", lines, err)
	}
	for _, lines := range [][]string{{"b", "a"}, {"c", "a", "b"}} {
		if err := c.SetPath(key, lines); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Path(key); err != nil || !slices.Equal(got, lines) {
			t.Fatalf("Path = %q, %v; want %q", got, err, lines)
		}
	}
	c.Note(key, []string{"a"})
	if s, err := c.Stats(); err != nil || s.Paths != 1 || s.Notes != 1 {
		t.Errorf("Stats: %d paths and %d notes, %v; want 1 and 1", s.Paths, s.Notes, err)
	}
	checkClearAndRemove(t, c, key, c.Path, c.SetPath)
}

// checkClearAndRemove: Clear empties what read finds under key, and set
// with no lines removes it.
func checkClearAndRemove(t *testing.T, c *Cache, key string, read func(string) ([]string, error), set func(string, []string) error) {
	t.Helper()
	if err := c.Clear(); err != nil {
		t.Fatal(err)
	}
	if lines, _ := read(key); lines != nil {
		t.Errorf("after Clear: %q", lines)
	}
	if err := set(key, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := set(key, nil); err != nil {
		t.Fatal(err)
	}
	if lines, _ := read(key); lines != nil {
		t.Errorf("after setting no lines: %q", lines)
	}
}
