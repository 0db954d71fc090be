// Package bincache is the persistent, content-addressed cache of device
// binaries under $XDG_CACHE_HOME/tltune: a program the driver built once
// (its clGetProgramInfo(CL_PROGRAM_BINARIES) or zeModuleGetNativeBinary) is
// loaded from there the next time instead of being compiled again, by this
// process or any other.
//
// A program's key hashes everything the binary depends on: the device, its
// driver and runtime, the build options and the program's text (Key). A
// kernel's key names it independently of the program it was built in (the
// tuner builds many kernels per program, in batches that differ from run
// to run), and the index maps it to the program and the kernel's symbol
// there.
//
// Files are written to a temporary name and renamed into place, so that
// concurrent processes only ever see whole files; each binary ends with the
// SHA-256 of its bytes, so a damaged one reads as absent. Beyond the size
// limit the least recently used binaries go.
//
// Notes are short lists of lines kept beside the binaries (Note, Noted): the
// tuner notes there which configurations of a problem built and ran, so that
// a later search of the same space knows which of its candidates the cache
// can supply without asking the driver. Paths (SetPath, Path) are ordered
// lists kept the same way: the proposals of a search in the order it made
// them, which a search of the same space with the same seed retraces.
package bincache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"tltune/internal/xdg"
)

// DefaultLimit is the size the binaries may take together.
const DefaultLimit = 2 << 30

// Cache is a cache directory. It is safe for concurrent use, by goroutines
// and by processes.
type Cache struct {
	dir   string
	limit int64
}

// DefaultDir is $XDG_CACHE_HOME/tltune, or ~/.cache/tltune when
// XDG_CACHE_HOME is unset or not absolute.
func DefaultDir() (string, error) {
	dir, err := xdg.Dir("XDG_CACHE_HOME", ".cache")
	if err != nil {
		return "", fmt.Errorf("cannot find the binary cache: %v", err)
	}
	return dir, nil
}

// Open returns the cache in dir (created when missing) holding at most
// limit bytes of binaries (0: DefaultLimit).
func Open(dir string, limit int64) (*Cache, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	for _, sub := range subdirs {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("binary cache: %v", err)
		}
	}
	return &Cache{dir: dir, limit: limit}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

const (
	binariesDir = "binaries"
	kernelsDir  = "kernels"
	notesDir    = "notes"
	pathsDir    = "paths"
)

var subdirs = []string{binariesDir, kernelsDir, notesDir, pathsDir}

// Key hashes parts, each length-prefixed so that no two lists of parts
// give the same key.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// path is where key lives under sub: two levels, so that no directory
// holds too many files.
func (c *Cache) path(sub, key string) string {
	return filepath.Join(c.dir, sub, key[:2], key)
}

// Get returns the binary stored under key, and marks it used.
func (c *Cache) Get(key string) ([]byte, bool) {
	path := c.path(binariesDir, key)
	data, err := os.ReadFile(path)
	if err != nil || len(data) < sha256.Size {
		return nil, false
	}
	bin, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(bin); !bytes.Equal(got[:], sum) {
		os.Remove(path) // damaged: built again next time
		return nil, false
	}
	now := time.Now()
	os.Chtimes(path, now, now) // least recently used goes first
	return bin, true
}

// Put stores bin under key, then trims the cache to its limit.
func (c *Cache) Put(key string, bin []byte) error {
	sum := sha256.Sum256(bin)
	if err := c.write(c.path(binariesDir, key), append(slices.Clip(bin), sum[:]...)); err != nil {
		return err
	}
	return c.trim()
}

// Index records that the kernel of kernelKey is symbol in the program
// stored under programKey.
func (c *Cache) Index(kernelKey, programKey, symbol string) error {
	return c.write(c.path(kernelsDir, kernelKey), []byte(programKey+" "+symbol+"\n"))
}

// Lookup returns the program and symbol of a kernel, when both the index
// entry and the program's binary are there.
func (c *Cache) Lookup(kernelKey string) (programKey, symbol string, ok bool) {
	data, err := os.ReadFile(c.path(kernelsDir, kernelKey))
	if err != nil {
		return "", "", false
	}
	programKey, symbol, ok = strings.Cut(strings.TrimSpace(string(data)), " ")
	if !ok || len(programKey) < 2 {
		return "", "", false
	}
	if _, err := os.Stat(c.path(binariesDir, programKey)); err != nil {
		return "", "", false
	}
	return programKey, symbol, true
}

// Note adds lines to the note of key, each once. Two processes noting the
// same key at the same time may each lose the other's lines: a note is a
// hint, never the only record of anything.
func (c *Cache) Note(key string, lines []string) error {
	have, err := c.Noted(key)
	if err != nil {
		return err
	}
	all := distinct(slices.Concat(have, lines))
	if len(all) == len(have) {
		return nil
	}
	return c.writeLines(notesDir, key, all)
}

// SetNote makes lines, each once, the whole note of key; none removes it.
// Like Note, it may lose lines another process notes at the same time.
func (c *Cache) SetNote(key string, lines []string) error {
	return c.writeLines(notesDir, key, distinct(lines))
}

// distinct is lines sorted, each once: a note's order.
func distinct(lines []string) []string { return slices.Compact(slices.Sorted(slices.Values(lines))) }

// SetPath makes lines, in their order, the path of key; none removes it.
// Of two processes writing the same key at once, one wins.
func (c *Cache) SetPath(key string, lines []string) error {
	return c.writeLines(pathsDir, key, lines)
}

// Path returns the lines of the path of key in order; none when there is
// no path.
func (c *Cache) Path(key string) ([]string, error) { return c.readLines(pathsDir, key) }

// writeLines makes lines the file of key under sub; none removes it.
func (c *Cache) writeLines(sub, key string, lines []string) error {
	path := c.path(sub, key)
	if len(lines) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("binary cache: %v", err)
		}
		return nil
	}
	return c.write(path, []byte(strings.Join(lines, "\n")+"\n"))
}

// Noted returns the lines of the note of key; none when there is no note.
func (c *Cache) Noted(key string) ([]string, error) { return c.readLines(notesDir, key) }

// readLines returns the lines of the file of key under sub; none when
// there is no file.
func (c *Cache) readLines(sub, key string) ([]string, error) {
	data, err := os.ReadFile(c.path(sub, key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("binary cache: %v", err)
	}
	return strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' }), nil
}

// write writes data to path through a temporary file renamed into place.
func (c *Cache) write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("binary cache: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("binary cache: %v", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("binary cache: %v", err)
	}
	return nil
}

// Stats describes the cache.
type Stats struct {
	Dir      string
	Binaries int
	Bytes    int64
	Kernels  int // index entries
	Notes    int // notes (Note): shapes whose configurations were noted
	Paths    int // search paths (SetPath)
	Limit    int64
}

type entry struct {
	path string
	size int64
	used time.Time
}

// list returns the files under sub, temporary ones left out.
func (c *Cache) list(sub string) ([]entry, error) {
	var all []entry
	err := filepath.WalkDir(filepath.Join(c.dir, sub), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile, by another process
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		all = append(all, entry{path, info.Size(), info.ModTime()})
		return nil
	})
	return all, err
}

// Stats counts the binaries, index entries, notes and paths.
func (c *Cache) Stats() (Stats, error) {
	s := Stats{Dir: c.dir, Limit: c.limit}
	bins, err := c.list(binariesDir)
	if err != nil {
		return s, err
	}
	s.Binaries = len(bins)
	for _, b := range bins {
		s.Bytes += b.size
	}
	for sub, n := range map[string]*int{kernelsDir: &s.Kernels, notesDir: &s.Notes, pathsDir: &s.Paths} {
		files, err := c.list(sub)
		if err != nil {
			return s, err
		}
		*n = len(files)
	}
	return s, nil
}

// trim removes the least recently used binaries until the rest take at
// most nine tenths of the limit, once they exceed it. Index entries of
// removed binaries are left: Lookup finds them dangling.
func (c *Cache) trim() error {
	bins, err := c.list(binariesDir)
	if err != nil {
		return err
	}
	var total int64
	for _, b := range bins {
		total += b.size
	}
	if total <= c.limit {
		return nil
	}
	slices.SortFunc(bins, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, b := range bins {
		if total <= c.limit/10*9 {
			break
		}
		if err := os.Remove(b.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= b.size
		}
	}
	return nil
}

// Clear removes every binary, index entry, note and path.
func (c *Cache) Clear() error {
	for _, sub := range subdirs {
		if err := os.RemoveAll(filepath.Join(c.dir, sub)); err != nil {
			return fmt.Errorf("binary cache: %v", err)
		}
		if err := os.MkdirAll(filepath.Join(c.dir, sub), 0o755); err != nil {
			return fmt.Errorf("binary cache: %v", err)
		}
	}
	return nil
}
