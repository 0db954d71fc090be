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
