package ir

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// Dynamic marks a shape, stride, group size or group offset entry that is
// only known at run time (written "?"). It is math.MinInt64, which no integer
// constant of the language can denote (their range starts at -2^63+1).
const Dynamic int64 = math.MinInt64

// Kind classifies a Type.
type Kind uint8

// The kinds of types. The scalar kinds are ordered by family (integers,
// floating point, complex) so that range checks classify them.
const (
	KindVoid Kind = iota
	KindBool
	KindI8
	KindI16
	KindI32
	KindI64
	KindIndex // integer of platform width; promotes like i64
	KindBF16
	KindF16
	KindF32
	KindF64
	KindC32
	KindC64
	KindMemref
	KindGroup
	KindCoopmatrix
)

var kindNames = [...]string{
	KindVoid: "void", KindBool: "bool",
	KindI8: "i8", KindI16: "i16", KindI32: "i32", KindI64: "i64", KindIndex: "index",
	KindBF16: "bf16", KindF16: "f16", KindF32: "f32", KindF64: "f64",
	KindC32: "c32", KindC64: "c64",
	KindMemref: "memref", KindGroup: "group", KindCoopmatrix: "coopmatrix",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsInteger reports whether k is i8, i16, i32, i64 or index.
func (k Kind) IsInteger() bool { return k >= KindI8 && k <= KindIndex }

// IsFloat reports whether k is bf16, f16, f32 or f64.
func (k Kind) IsFloat() bool { return k >= KindBF16 && k <= KindF64 }

// IsComplex reports whether k is c32 or c64.
func (k Kind) IsComplex() bool { return k == KindC32 || k == KindC64 }

// IsScalar reports whether k is an integer, floating or complex kind (bool is
// not a scalar type in the language).
func (k Kind) IsScalar() bool { return k >= KindI8 && k <= KindC64 }

// AddrSpace is the address space of a memref.
type AddrSpace uint8

// Address spaces; Global is the default.
const (
	Global AddrSpace = iota
	Local
)

func (a AddrSpace) String() string {
	if a == Local {
		return "local"
	}
	return "global"
}

// MatrixUse is the role of a cooperative matrix in a multiplication.
type MatrixUse uint8

// Matrix uses.
const (
	MatrixA MatrixUse = iota
	MatrixB
	MatrixAcc
)

func (u MatrixUse) String() string {
	switch u {
	case MatrixA:
		return "matrix_a"
	case MatrixB:
		return "matrix_b"
	}
	return "matrix_acc"
}

// Type is an interned type: two types are equal exactly when their pointers
// are equal, so *Type can be compared with == and used as a map key. Build
// types with the constructors (Memref, Group, Coopmatrix) or use the
// predeclared scalar types; never build a Type literal.
//
// A Type is immutable. The slices returned by Shape and Stride are shared and
// must not be modified.
type Type struct {
	kind   Kind
	elem   *Type     // memref: element type; group: memref type; coopmatrix: component type
	shape  []int64   // memref: mode sizes; coopmatrix: rows, cols
	stride []int64   // memref: strides, always explicit (the packed layout is computed)
	space  AddrSpace // memref
	size   int64     // group: number of memrefs (maybe Dynamic)
	offset int64     // group: element offset applied to every pointer (maybe Dynamic)
	use    MatrixUse // coopmatrix
	str    string    // canonical spelling, also the interning key
}

// The predeclared types.
var (
	Void  = &Type{kind: KindVoid, str: "void"}
	Bool  = &Type{kind: KindBool, str: "bool"}
	I8    = &Type{kind: KindI8, str: "i8"}
	I16   = &Type{kind: KindI16, str: "i16"}
	I32   = &Type{kind: KindI32, str: "i32"}
	I64   = &Type{kind: KindI64, str: "i64"}
	Index = &Type{kind: KindIndex, str: "index"}
	BF16  = &Type{kind: KindBF16, str: "bf16"}
	F16   = &Type{kind: KindF16, str: "f16"}
	F32   = &Type{kind: KindF32, str: "f32"}
	F64   = &Type{kind: KindF64, str: "f64"}
	C32   = &Type{kind: KindC32, str: "c32"}
	C64   = &Type{kind: KindC64, str: "c64"}
)

var basicTypes = [...]*Type{Void, Bool, I8, I16, I32, I64, Index, BF16, F16, F32, F64, C32, C64}

// Basic returns the predeclared type of a non-composite kind (void, bool or
// a scalar kind); it panics on memref, group and coopmatrix.
func Basic(k Kind) *Type {
	if int(k) >= len(basicTypes) {
		panic("ir.Basic: composite kind " + k.String())
	}
	return basicTypes[k]
}

// BasicByName returns the predeclared type spelled name ("f32", "index",
// "bool", ...) or nil.
func BasicByName(name string) *Type {
	for _, t := range basicTypes {
		if t.str == name {
			return t
		}
	}
	return nil
}

var interned sync.Map // canonical spelling -> *Type

func intern(t *Type) *Type {
	if old, ok := interned.Load(t.str); ok {
		return old.(*Type)
	}
	old, _ := interned.LoadOrStore(t.str, t)
	return old.(*Type)
}

// PackedStride returns the packed column-major strides of shape: 1, s1,
// s1*s2, ...; an entry following a dynamic size (or an overflowing product) is
// Dynamic.
func PackedStride(shape []int64) []int64 {
	stride := make([]int64, len(shape))
	packedStride(shape, stride)
	return stride
}

// packedStride writes PackedStride(shape) to stride.
func packedStride(shape, stride []int64) {
	s := int64(1)
	for i, n := range shape {
		stride[i] = s
		if s == Dynamic || n == Dynamic || (n != 0 && s > math.MaxInt64/n) {
			s = Dynamic
		} else {
			s *= n
		}
	}
}

// Memref returns the memref type with element type elem (a scalar type),
// the given shape and strides (nil stride: the packed layout) and address
// space. It panics if elem is not scalar or len(stride) differs from
// len(shape); the parser checks both before calling it. Shape and stride are
// copied.
func Memref(elem *Type, shape, stride []int64, space AddrSpace) *Type {
	if !elem.kind.IsScalar() {
		panic("ir.Memref: element type " + elem.String() + " is not scalar")
	}
	if stride != nil && len(stride) != len(shape) {
		panic("ir.Memref: stride and shape differ in length")
	}
	key, keyed := memrefKeyOf(elem, shape, stride, space)
	if keyed {
		if t := memrefs.get(key); t != nil {
			return t
		}
	}
	if stride == nil {
		stride = PackedStride(shape)
	}
	t := &Type{kind: KindMemref, elem: elem, space: space,
		shape:  append([]int64(nil), shape...),
		stride: append([]int64(nil), stride...)}
	t.str = memrefString(t)
	t = intern(t)
	if keyed {
		memrefs.put(key, t)
	}
	return t
}

// memrefKey identifies a memref type of order up to 4 by its parts, so
// that Memref finds it without spelling it: the lowerings ask for the
// types of their views again and again, and spelling each to look it up
// was most of what building instructions allocated.
type memrefKey struct {
	elem          *Type
	space         AddrSpace
	order         int
	shape, stride [4]int64
}

// memrefKeyOf is the key of a memref type, false when its order is too
// high for one (the spelling finds those).
func memrefKeyOf(elem *Type, shape, stride []int64, space AddrSpace) (memrefKey, bool) {
	k := memrefKey{elem: elem, space: space, order: len(shape)}
	if len(shape) > len(k.shape) {
		return k, false
	}
	copy(k.shape[:], shape)
	if stride != nil {
		copy(k.stride[:], stride)
	} else {
		packedStride(shape, k.stride[:len(shape)])
	}
	return k, true
}

// typeTable maps structural keys to interned types, safely for
// concurrent compiles.
type typeTable[K comparable] struct {
	mu sync.RWMutex
	m  map[K]*Type
}

func (tt *typeTable[K]) get(k K) *Type {
	tt.mu.RLock()
	defer tt.mu.RUnlock()
	return tt.m[k]
}

func (tt *typeTable[K]) put(k K, t *Type) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.m == nil {
		tt.m = map[K]*Type{}
	}
	tt.m[k] = t
}

var (
	memrefs      typeTable[memrefKey]
	coopmatrices typeTable[coopmatrixKey]
)

type coopmatrixKey struct {
	comp       *Type
	rows, cols int64
	use        MatrixUse
}

// Group returns the group type of memref m with the given size and offset
// (either may be Dynamic). It panics if m is not a memref.
func Group(m *Type, size, offset int64) *Type {
	if m.kind != KindMemref {
		panic("ir.Group: element type " + m.String() + " is not a memref")
	}
	t := &Type{kind: KindGroup, elem: m, size: size, offset: offset}
	var b strings.Builder
	b.WriteString("group<")
	b.WriteString(m.str)
	b.WriteString("x")
	writeDim(&b, size)
	if offset != 0 {
		b.WriteString(", offset: ")
		writeDim(&b, offset)
	}
	b.WriteString(">")
	t.str = b.String()
	return intern(t)
}

// Coopmatrix returns the cooperative matrix type with the given component
// type (a scalar type), shape and use. It panics if comp is not scalar.
func Coopmatrix(comp *Type, rows, cols int64, use MatrixUse) *Type {
	if !comp.kind.IsScalar() {
		panic("ir.Coopmatrix: component type " + comp.String() + " is not scalar")
	}
	key := coopmatrixKey{comp, rows, cols, use}
	if t := coopmatrices.get(key); t != nil {
		return t
	}
	t := &Type{kind: KindCoopmatrix, elem: comp, shape: []int64{rows, cols}, use: use}
	t.str = "coopmatrix<" + comp.str + "x" + strconv.FormatInt(rows, 10) + "x" +
		strconv.FormatInt(cols, 10) + ", " + use.String() + ">"
	t = intern(t)
	coopmatrices.put(key, t)
	return t
}

func memrefString(t *Type) string {
	var b strings.Builder
	b.WriteString("memref<")
	b.WriteString(t.elem.str)
	for _, n := range t.shape {
		b.WriteString("x")
		writeDim(&b, n)
	}
	if !equalInts(t.stride, PackedStride(t.shape)) {
		b.WriteString(", strided<")
		for i, s := range t.stride {
			if i > 0 {
				b.WriteString(",")
			}
			writeDim(&b, s)
		}
		b.WriteString(">")
	}
	if t.space == Local {
		b.WriteString(", local")
	}
	b.WriteString(">")
	return b.String()
}

func writeDim(b *strings.Builder, n int64) {
	if n == Dynamic {
		b.WriteString("?")
		return
	}
	b.WriteString(strconv.FormatInt(n, 10))
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// String returns the canonical spelling of t, as the printer writes it.
func (t *Type) String() string {
	if t == nil {
		return "<nil type>"
	}
	return t.str
}

// Kind returns the kind of t.
func (t *Type) Kind() Kind { return t.kind }

// IsInteger, IsFloat, IsComplex and IsScalar classify t by its kind.
func (t *Type) IsInteger() bool { return t.kind.IsInteger() }
func (t *Type) IsFloat() bool   { return t.kind.IsFloat() }
func (t *Type) IsComplex() bool { return t.kind.IsComplex() }
func (t *Type) IsScalar() bool  { return t.kind.IsScalar() }

// Elem returns the element type of a memref, the memref type of a group, the
// component type of a coopmatrix, and nil otherwise.
func (t *Type) Elem() *Type { return t.elem }

// Shape returns the mode sizes of a memref or [rows, cols] of a coopmatrix
// (entries may be Dynamic for memrefs). Do not modify the result.
func (t *Type) Shape() []int64 { return t.shape }

// Stride returns the strides of a memref (entries may be Dynamic). Do not
// modify the result.
func (t *Type) Stride() []int64 { return t.stride }

// Order returns the number of modes of a memref (2 for a coopmatrix).
func (t *Type) Order() int { return len(t.shape) }

// Space returns the address space of a memref.
func (t *Type) Space() AddrSpace { return t.space }

// Use returns the matrix use of a coopmatrix.
func (t *Type) Use() MatrixUse { return t.use }

// Rows and Cols return the first and second mode size of a memref or
// coopmatrix.
func (t *Type) Rows() int64 { return t.shape[0] }
func (t *Type) Cols() int64 { return t.shape[1] }

// GroupSize and GroupOffset return the size and offset of a group type
// (either may be Dynamic).
func (t *Type) GroupSize() int64   { return t.size }
func (t *Type) GroupOffset() int64 { return t.offset }

// IsPackedLayout reports whether a memref uses the default packed layout.
func (t *Type) IsPackedLayout() bool { return equalInts(t.stride, PackedStride(t.shape)) }

// HasDynamicShape reports whether any mode size of a memref is Dynamic.
func (t *Type) HasDynamicShape() bool {
	for _, n := range t.shape {
		if n == Dynamic {
			return true
		}
	}
	return false
}

// ScalarOf returns the scalar type underlying t: t itself for bool and
// scalars, the component type for a coopmatrix and the element type for a
// memref; nil otherwise.
func (t *Type) ScalarOf() *Type {
	switch t.kind {
	case KindCoopmatrix, KindMemref:
		return t.elem
	case KindGroup:
		return nil
	}
	return t
}

// Size returns the size in bytes of a scalar type (0 for other types; index
// counts as 8 bytes).
func (t *Type) Size() int64 {
	switch t.kind {
	case KindI8:
		return 1
	case KindI16, KindBF16, KindF16:
		return 2
	case KindI32, KindF32:
		return 4
	case KindI64, KindIndex, KindF64, KindC32:
		return 8
	case KindC64:
		return 16
	}
	return 0
}

// Bits returns the width in bits of an integer type (index counts as 64).
func (t *Type) Bits() int { return int(t.Size()) * 8 }

// ComponentType returns the real type of a complex type (f32 for c32, f64
// for c64) and t itself otherwise.
func (t *Type) ComponentType() *Type {
	switch t.kind {
	case KindC32:
		return F32
	case KindC64:
		return F64
	}
	return t
}

// promotable[a] is the set of kinds that the scalar kind a promotes to
// (the relation matrix of the reference; index behaves like i64).
var promotable = map[Kind][]Kind{
	KindI8:    {KindI8, KindI16, KindI32, KindI64, KindIndex, KindBF16, KindF16, KindF32, KindF64, KindC32, KindC64},
	KindI16:   {KindI16, KindI32, KindI64, KindIndex, KindF32, KindF64, KindC32, KindC64},
	KindI32:   {KindI32, KindI64, KindIndex, KindF64, KindC64},
	KindI64:   {KindI64, KindIndex},
	KindIndex: {KindI64, KindIndex},
	KindBF16:  {KindBF16, KindF32, KindF64, KindC32, KindC64},
	KindF16:   {KindF16, KindF32, KindF64, KindC32, KindC64},
	KindF32:   {KindF32, KindF64, KindC32, KindC64},
	KindF64:   {KindF64, KindC64},
	KindC32:   {KindC32, KindC64},
	KindC64:   {KindC64},
}

// Promotable reports whether scalar type a promotes to scalar type b
// (a ⪯ b): every value of a is exactly representable in b.
func Promotable(a, b *Type) bool {
	for _, k := range promotable[a.kind] {
		if k == b.kind {
			return true
		}
	}
	return false
}

// Promote returns b if a ⪯ b, a if b ⪯ a, and nil if neither holds.
func Promote(a, b *Type) *Type {
	switch {
	case Promotable(a, b):
		return b
	case Promotable(b, a):
		return a
	}
	return nil
}
