package ptx

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync"

	"tltune/compiler/ir"
)

// workspace is what writing a kernel needs only while it is written: the
// tables of its values, sized by the function, the texts it is written
// in, and pure's table of instructions. Made afresh for every kernel they
// were most of the writer's allocations (maps grown from empty in every
// scope, builders grown by doubling), and the tuner writes a kernel per
// evaluation: a workspace is recycled instead (compiler/emit/opencl
// recycles its own the same way). Nothing handed out refers into it: the
// module's text is copied out of out once it is written.
type workspace struct {
	vals   ir.ValueMap[val]     // the values' operands
	mems   ir.ValueMap[*memref] // the memrefs' views
	ranges ir.ValueMap[ir.Range]
	// tight are the ranges learnt where values were written (fold.go).
	tight ir.ValueMap[ir.Range]
	// coopUses counts the reads of each cooperative matrix; aliased are
	// the arguments of unrolled loops, whose registers are their initial
	// values' (ownsLastUse); lazy are the matrices loaded where first
	// read (rows.go).
	coopUses ir.ValueMap[int32]
	aliased  ir.ValueMap[bool]
	lazy     ir.ValueMap[*lazyLoad]
	// yields are the registers the regions' yields move into; unrolled
	// collects the values the body of a loop being unrolled yields, in
	// their place.
	yields   map[*ir.Region][]val
	unrolled map[*ir.Region][]val
	done     map[*ir.Inst]bool // mul_adds written with an earlier one of their group
	// coopInsts are the instructions on cooperative matrices (checkCoop).
	coopInsts []*ir.Inst
	cse       pureTable // what pure wrote
	// regDepth is the depth at which each register is written, by class
	// and number (0 where it was written outside every loop).
	regDepth [numClasses][]int32
	loops    []loopFrame
	// body, decls and shared are the kernel's texts (fn), out the
	// module's.
	body, decls, shared, out []byte
	slab                     slab
}

var workspaces = sync.Pool{New: func() any {
	return &workspace{yields: map[*ir.Region][]val{}, unrolled: map[*ir.Region][]val{}, done: map[*ir.Inst]bool{},
		cse: pureTable{seed: maphash.MakeSeed(), index: map[uint64]int32{}}}
}}

// getWorkspace returns a workspace for a module; putWorkspace returns it
// once the module's text is copied out.
func getWorkspace() *workspace {
	s := workspaces.Get().(*workspace)
	s.out = s.out[:0]
	return s
}

func putWorkspace(s *workspace) {
	// Emptied here, so that the pool keeps no program alive.
	s.reset(0)
	workspaces.Put(s)
}

// reset readies the tables for a function of n values.
func (s *workspace) reset(n int) {
	s.vals.Reset(n)
	s.mems.Reset(n)
	s.ranges.Reset(n)
	s.tight.Reset(n)
	s.coopUses.Reset(n)
	s.aliased.Reset(n)
	s.lazy.Reset(n)
	clear(s.yields)
	clear(s.unrolled)
	clear(s.done)
	clear(s.coopInsts)
	s.coopInsts = s.coopInsts[:0]
	s.cse.reset()
	for c := range s.regDepth {
		clear(s.regDepth[c])
		s.regDepth[c] = s.regDepth[c][:0]
	}
	s.loops = s.loops[:0]
	s.body, s.decls, s.shared = s.body[:0], s.decls[:0], s.shared[:0]
	s.slab.recycle()
}

// setDepth notes that register r is written at loop depth d.
func (s *workspace) setDepth(r string, d int) {
	c, n, ok := regNumber(r)
	if !ok {
		return
	}
	ds := s.regDepth[c]
	if n >= len(ds) {
		// Past len, the capacity holds zeros: reset clears up to len.
		ds = slices.Grow(ds, n+1-len(ds))[:n+1]
		s.regDepth[c] = ds
	}
	ds[n] = int32(d)
}

// depthOf is the loop depth at which operand a is written: 0 for an
// immediate or a register written outside every loop.
func (s *workspace) depthOf(a string) int {
	c, n, ok := regNumber(a)
	if !ok || n >= len(s.regDepth[c]) {
		return 0
	}
	return int(s.regDepth[c][n])
}

// regNumber is the class and number of register r (regName's inverse),
// ok false for anything else: an immediate, a special register (%tid.x).
func regNumber(r string) (c class, n int, ok bool) {
	if len(r) < 3 || r[0] != '%' {
		return 0, 0, false
	}
	digits := 2
	switch r[1] {
	case 'p':
		c = pred
	case 'r':
		switch r[2] {
		case 's':
			c, digits = b16, 3
		case 'd':
			c, digits = b64, 3
		default:
			c = b32
		}
	case 'f':
		if r[2] == 'd' {
			c, digits = f64, 3
		} else {
			c = f32
		}
	default:
		return 0, 0, false
	}
	if digits >= len(r) {
		return 0, 0, false
	}
	for _, d := range []byte(r[digits:]) {
		if d < '0' || d > '9' {
			return 0, 0, false
		}
		n = n*10 + int(d-'0')
	}
	return c, n, true
}

// pureTable is the instructions pure wrote that may be reused, keyed by
// opcode and operands, by scope: a scope's instructions are forgotten
// when it ends. A key is in at most one scope (pure looks in all before
// it writes one), so one table serves them all, each scope listing its
// entries to forget. Keys are spelled back to back in keys, and the
// table indexes entries by their keys' hash, colliding ones chained: Go
// maps keyed by the spelled strings cost a string per entry and a map
// grown from empty per scope.
type pureTable struct {
	seed    maphash.Seed
	index   map[uint64]int32 // a key's hash: its newest entry
	entries []pureEntry
	keys    []byte
	scopes  [][]int32 // each scope's entries, the innermost last
}

type pureEntry struct {
	hash       uint64
	start, end int32 // the key, in keys
	reg        string
	next       int32 // the next entry of the same hash, -1 for none
}

func (t *pureTable) reset() {
	clear(t.index)
	clear(t.entries) // the registers
	t.entries, t.keys = t.entries[:0], t.keys[:0]
	t.scopes = t.scopes[:0]
	t.enter()
}

// enter starts a scope; leave forgets its entries.
func (t *pureTable) enter() {
	n := len(t.scopes)
	if n < cap(t.scopes) {
		t.scopes = t.scopes[:n+1]
		t.scopes[n] = t.scopes[n][:0]
		return
	}
	t.scopes = append(t.scopes, nil)
}

func (t *pureTable) leave() {
	n := len(t.scopes) - 1
	for _, i := range t.scopes[n] {
		t.unlink(i)
	}
	t.scopes = t.scopes[:n]
}

// unlink removes entry i from the index.
func (t *pureTable) unlink(i int32) {
	h := t.entries[i].hash
	at := t.index[h]
	if at == i {
		if next := t.entries[i].next; next < 0 {
			delete(t.index, h)
		} else {
			t.index[h] = next
		}
		return
	}
	for t.entries[at].next != i {
		at = t.entries[at].next
	}
	t.entries[at].next = t.entries[i].next
}

// lookup is the register of the entry of key (whose hash is h), ok
// false where there is none.
func (t *pureTable) lookup(h uint64, key []byte) (string, bool) {
	i, ok := t.index[h]
	if !ok {
		return "", false
	}
	for ; i >= 0; i = t.entries[i].next {
		if x := &t.entries[i]; bytes.Equal(t.keys[x.start:x.end], key) {
			return x.reg, true
		}
	}
	return "", false
}

// insert adds key (whose hash is h), written to reg, to scope scope.
func (t *pureTable) insert(scope int, h uint64, key []byte, reg string) {
	i := int32(len(t.entries))
	next, ok := t.index[h]
	if !ok {
		next = -1
	}
	start := int32(len(t.keys))
	t.keys = append(t.keys, key...)
	t.entries = append(t.entries, pureEntry{hash: h, start: start, end: int32(len(t.keys)), reg: reg, next: next})
	t.index[h] = i
	t.scopes[scope] = append(t.scopes[scope], i)
}

// slab hands out a kernel's memref views and string slices (shapes and
// strides, a matrix's registers) from arrays recycled with the
// workspace.
type slab struct {
	mems []memref
	strs []string
	vs   []val
}

// memref returns a view holding m.
func (s *slab) memref(m memref) *memref {
	if len(s.mems) == cap(s.mems) {
		// A fresh array: the views handed out keep the old one.
		s.mems = make([]memref, 0, max(32, 2*cap(s.mems)))
	}
	s.mems = append(s.mems, m)
	return &s.mems[len(s.mems)-1]
}

// strings returns n empty strings, which the caller may append to only
// by copying.
func (s *slab) strings(n int) []string {
	at := len(s.strs)
	if at+n > cap(s.strs) {
		s.strs, at = make([]string, 0, max(256, 2*cap(s.strs), n)), 0
	}
	s.strs = s.strs[:at+n]
	return s.strs[at : at+n : at+n]
}

// vals returns n zero vals, which the caller may append to only by
// copying.
func (s *slab) vals(n int) []val {
	at := len(s.vs)
	if at+n > cap(s.vs) {
		s.vs, at = make([]val, 0, max(64, 2*cap(s.vs), n)), 0
	}
	s.vs = s.vs[:at+n]
	return s.vs[at : at+n : at+n]
}

// recycle empties s; nothing it handed out may be used after.
func (s *slab) recycle() {
	clear(s.mems)
	clear(s.strs)
	clear(s.vs)
	s.mems, s.strs, s.vs = s.mems[:0], s.strs[:0], s.vs[:0]
}
