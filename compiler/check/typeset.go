package check

import (
	"unsafe"

	"tltune/compiler/ir"
)

// typeSet remembers types, as a cache: a slot holds one type, and a type
// that hashes to a taken slot evicts the one there. Types are interned, so
// a type's pointer is its identity; whether a type is well formed depends
// on nothing else, so the set of a checker holds from program to program.
// The verifier checks the type of every result, and a lowered GEMM's
// memrefs, each checked mode by mode again and again, were a twentieth of
// verifying it.
type typeSet [1 << typeSetBits]*ir.Type

const typeSetBits = 6

func (s *typeSet) slot(t *ir.Type) **ir.Type {
	// Fibonacci hashing of the address: the top bits of the product mix
	// all of its bits. (unsafe only reads the address; nothing is
	// dereferenced through it.)
	h := uint64(uintptr(unsafe.Pointer(t))) * 0x9e3779b97f4a7c15
	return &s[h>>(64-typeSetBits)]
}

func (s *typeSet) has(t *ir.Type) bool { return *s.slot(t) == t }

func (s *typeSet) add(t *ir.Type) { *s.slot(t) = t }

// promotions remembers answers of ir.Promotable, as a cache like typeSet
// (the answer depends on the two interned types only): it is a map lookup
// in ir, and a lowered GEMM's cooperative_matrix_mul_adds ask it three
// times each.
type promotions [1 << typeSetBits]struct {
	a, b *ir.Type
	ok   bool
}

func (p *promotions) promotable(a, b *ir.Type) bool {
	h := (uint64(uintptr(unsafe.Pointer(a))) ^ uint64(uintptr(unsafe.Pointer(b)))<<1) * 0x9e3779b97f4a7c15
	e := &p[h>>(64-typeSetBits)]
	if e.a != a || e.b != b {
		e.a, e.b, e.ok = a, b, ir.Promotable(a, b)
	}
	return e.ok
}

// promote is ir.Promote through the cache: b if a ⪯ b, a if b ⪯ a, else
// nil.
func (p *promotions) promote(a, b *ir.Type) *ir.Type {
	switch {
	case p.promotable(a, b):
		return b
	case p.promotable(b, a):
		return a
	}
	return nil
}
