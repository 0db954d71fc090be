package ptx

import (
	"slices"
	"sync"

	"tltune/compiler/internal/slab"
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
	slab                     slabs
}

var workspaces = sync.Pool{New: func() any {
	return &workspace{yields: map[*ir.Region][]val{}, unrolled: map[*ir.Region][]val{}, done: map[*ir.Inst]bool{}}
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
	if c, n, ok := regNumber(r); ok {
		s.setRegDepth(c, n, d)
	}
}

// setRegDepth notes that register n of class c is written at loop depth
// d (reg knows both, and need not spell the name to be read back).
func (s *workspace) setRegDepth(c class, n, d int) {
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
	if len(r)-digits > 9 { // more registers than a kernel declares
		return 0, 0, false
	}
	x, ok := decimalDigits(r[digits:])
	return c, int(x), ok
}

// pureTable is the instructions pure wrote that may be reused, keyed by
// opcode and operands, by scope: a scope's instructions are forgotten
// when it ends. A key is in at most one scope (pure looks in all before
// it writes one), so one table serves them all, each scope listing its
// entries to forget. The table is open addressing (linear probing) on
// the keys' hashes, an entry holding its opcode and operands as they
// came: Go maps keyed by the spelled keys cost a string per entry and a
// map grown from empty per scope, and keyed by their hashes the spelling
// and the hashing were most of pure.
type pureTable struct {
	slots   []int32 // an entry's index + 1, 0 where free; a power of two long
	live    int     // the entries in slots
	entries []pureEntry
	args    []string  // the entries' operands, back to back
	scopes  [][]int32 // each scope's entries, the innermost last
}

type pureEntry struct {
	hash       uint64
	opcode     string
	start, end int32 // the operands, in args
	reg        string
}

func (t *pureTable) reset() {
	if t.slots == nil {
		t.slots = make([]int32, 256)
	}
	clear(t.slots)
	t.live = 0
	clear(t.entries) // the registers
	clear(t.args)
	t.entries, t.args = t.entries[:0], t.args[:0]
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
		t.remove(i)
	}
	t.scopes = t.scopes[:n]
}

// hash is the hash of the key of opcode on args: FNV-1a over their
// bytes, each operand ended by a byte no operand holds. Keys are a few
// dozen bytes, and hashing them in place is cheaper than spelling them to
// hash them, or calling a hash per operand.
func (t *pureTable) hash(opcode string, args []string) uint64 {
	const prime = 0x100000001b3
	h := uint64(0xcbf29ce484222325)
	for i := range len(opcode) {
		h = (h ^ uint64(opcode[i])) * prime
	}
	for _, a := range args {
		for i := range len(a) {
			h = (h ^ uint64(a[i])) * prime
		}
		h = (h ^ '\t') * prime
	}
	return h
}

// lookup is the register of the entry of opcode on args (whose hash is
// h), ok false where there is none.
func (t *pureTable) lookup(h uint64, opcode string, args []string) (string, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.slots[i] != 0; i = (i + 1) & mask {
		x := &t.entries[t.slots[i]-1]
		if x.hash == h && x.opcode == opcode && slices.Equal(t.args[x.start:x.end], args) {
			return x.reg, true
		}
	}
	return "", false
}

// insert adds the entry of opcode on args (whose hash is h), written to
// reg, to scope scope.
func (t *pureTable) insert(scope int, h uint64, opcode string, args []string, reg string) {
	if 2*(t.live+1) > len(t.slots) {
		t.grow()
	}
	i := int32(len(t.entries))
	start := int32(len(t.args))
	t.args = append(t.args, args...)
	t.entries = append(t.entries, pureEntry{hash: h, opcode: opcode, start: start, end: int32(len(t.args)), reg: reg})
	t.place(i)
	t.scopes[scope] = append(t.scopes[scope], i)
}

// place puts entry i in the first free slot from its hash's.
func (t *pureTable) place(i int32) {
	mask := uint64(len(t.slots) - 1)
	at := t.entries[i].hash & mask
	for t.slots[at] != 0 {
		at = (at + 1) & mask
	}
	t.slots[at] = i + 1
	t.live++
}

// grow doubles the slots and places the entries in them again.
func (t *pureTable) grow() {
	old := t.slots
	t.slots = make([]int32, 2*len(old))
	t.live = 0
	for _, s := range old {
		if s != 0 {
			t.place(s - 1)
		}
	}
}

// remove takes entry i out of the slots, moving back the entries after
// it that would no longer be found past the hole (linear probing's
// deletion, which leaves no tombstones).
func (t *pureTable) remove(i int32) {
	mask := uint64(len(t.slots) - 1)
	hole := t.entries[i].hash & mask
	for t.slots[hole] != i+1 {
		hole = (hole + 1) & mask
	}
	for j := (hole + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := t.entries[t.slots[j]-1].hash & mask
		// The entry at j stays where its home lies cyclically in
		// (hole, j]; else it moves into the hole.
		if hole <= j && (home <= hole || home > j) || hole > j && home <= hole && home > j {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = 0
	t.live--
}

// slabs hand out a kernel's memref views and string slices (shapes and
// strides, a matrix's registers) from arrays recycled with the
// workspace.
type slabs struct {
	mems slab.Of[memref]
	strs slab.Of[string]
	vs   slab.Of[val]
}

// recycle empties s; nothing it handed out may be used after.
func (s *slabs) recycle() {
	s.mems.Recycle()
	s.strs.Recycle()
	s.vs.Recycle()
}
