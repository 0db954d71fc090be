package interp

import (
	"encoding/binary"
	"fmt"
	"math"

	"tltune/compiler/ir"
	"tltune/compiler/numeric"
)

// Buffer is a block of memory holding elements of one scalar type, stored
// little-endian in the element type's own encoding (f16 as binary16, c32 as
// two f32, ...), exactly as a device buffer holds them.
type Buffer struct {
	Elem *ir.Type
	Data []byte
	// Align is the alignment in bytes of the buffer's first element; 0
	// means DeviceAlignment. Only vector accesses depend on it.
	Align int64
}

// DeviceAlignment is the alignment of a buffer handed to a kernel: OpenCL
// guarantees CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least the 128 bytes of
// long16, for every allocation.
const DeviceAlignment = 128

func (b *Buffer) alignment() int64 {
	if b.Align == 0 {
		return DeviceAlignment
	}
	return b.Align
}

// NewBuffer returns a zeroed buffer of n elements of the scalar type elem.
func NewBuffer(elem *ir.Type, n int) *Buffer {
	return &Buffer{Elem: elem, Data: make([]byte, n*int(elem.Size()))}
}

// Len is the number of elements.
func (b *Buffer) Len() int { return len(b.Data) / int(b.Elem.Size()) }

// Float returns element i as float64: the value of a floating element, the
// real part of a complex one, the value of an integer one.
func (b *Buffer) Float(i int) float64 {
	v := b.load(int64(i))
	switch {
	case b.Elem.IsFloat():
		return v.f
	case b.Elem.IsComplex():
		return real(v.c)
	}
	return float64(v.i)
}

// Complex returns element i as complex128 (imaginary part 0 for real types).
func (b *Buffer) Complex(i int) complex128 {
	if b.Elem.IsComplex() {
		return b.load(int64(i)).c
	}
	return complex(b.Float(i), 0)
}

// Int returns integer element i (sign-extended).
func (b *Buffer) Int(i int) int64 { return b.load(int64(i)).i }

// SetFloat stores x, rounded to the element type, as element i (for an
// integer buffer: truncated toward zero).
func (b *Buffer) SetFloat(i int, x float64) { b.store(int64(i), convert(floatVal(x), ir.F64, b.Elem)) }

// SetComplex stores z, rounded to the element type, as element i; the
// element type must be complex.
func (b *Buffer) SetComplex(i int, z complex128) {
	b.store(int64(i), convert(complexVal(z), ir.C64, b.Elem))
}

// SetInt stores x, wrapped or converted to the element type, as element i.
func (b *Buffer) SetInt(i int, x int64) { b.store(int64(i), convert(intVal(x), ir.I64, b.Elem)) }

// load reads element i.
func (b *Buffer) load(i int64) value {
	size := b.Elem.Size()
	p := b.Data[i*size : (i+1)*size]
	le := binary.LittleEndian
	switch b.Elem.Kind() {
	case ir.KindI8:
		return intVal(int64(int8(p[0])))
	case ir.KindI16:
		return intVal(int64(int16(le.Uint16(p))))
	case ir.KindI32:
		return intVal(int64(int32(le.Uint32(p))))
	case ir.KindI64, ir.KindIndex:
		return intVal(int64(le.Uint64(p)))
	case ir.KindF16:
		return floatVal(numeric.F16FromBits(le.Uint16(p)))
	case ir.KindBF16:
		return floatVal(numeric.BF16FromBits(le.Uint16(p)))
	case ir.KindF32:
		return floatVal(float64(math.Float32frombits(le.Uint32(p))))
	case ir.KindF64:
		return floatVal(math.Float64frombits(le.Uint64(p)))
	case ir.KindC32:
		return complexVal(complex(float64(math.Float32frombits(le.Uint32(p))),
			float64(math.Float32frombits(le.Uint32(p[4:])))))
	}
	return complexVal(complex(math.Float64frombits(le.Uint64(p)), math.Float64frombits(le.Uint64(p[8:]))))
}

// poison overwrites element i with all one bits: NaN for every floating
// type, -1 for integers.
func (b *Buffer) poison(i int64) {
	size := b.Elem.Size()
	for k := range b.Data[i*size : (i+1)*size] {
		b.Data[i*size+int64(k)] = 0xff
	}
}

// store writes v, which must already be exact in the element type.
func (b *Buffer) store(i int64, v value) {
	size := b.Elem.Size()
	p := b.Data[i*size : (i+1)*size]
	le := binary.LittleEndian
	switch b.Elem.Kind() {
	case ir.KindI8:
		p[0] = byte(v.i)
	case ir.KindI16:
		le.PutUint16(p, uint16(v.i))
	case ir.KindI32:
		le.PutUint32(p, uint32(v.i))
	case ir.KindI64, ir.KindIndex:
		le.PutUint64(p, uint64(v.i))
	case ir.KindF16:
		le.PutUint16(p, numeric.F16Bits(v.f))
	case ir.KindBF16:
		le.PutUint16(p, numeric.BF16Bits(v.f))
	case ir.KindF32:
		le.PutUint32(p, math.Float32bits(float32(v.f)))
	case ir.KindF64:
		le.PutUint64(p, math.Float64bits(v.f))
	case ir.KindC32:
		le.PutUint32(p, math.Float32bits(float32(real(v.c))))
		le.PutUint32(p[4:], math.Float32bits(float32(imag(v.c))))
	case ir.KindC64:
		le.PutUint64(p, math.Float64bits(real(v.c)))
		le.PutUint64(p[8:], math.Float64bits(imag(v.c)))
	}
}

// Memref is a view of a buffer: element (i1, ..., in) lives at element
// Offset + i1·Stride[0] + ... + in·Stride[n-1] of Buf.
type Memref struct {
	Buf    *Buffer
	Offset int64
	Shape  []int64
	Stride []int64
}

// NewMemref returns a memref over a fresh zeroed buffer with the packed
// column-major layout of shape.
func NewMemref(elem *ir.Type, shape ...int64) *Memref {
	stride := ir.PackedStride(shape)
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	return &Memref{Buf: NewBuffer(elem, int(n)), Shape: shape, Stride: stride}
}

// Each calls f for every element of m, first index fastest, with its
// multi-index (reused between calls) and its position in m.Buf.
func (m *Memref) Each(f func(idx []int64, pos int)) {
	elements(m.Shape, func(idx []int64) error {
		pos := m.Offset
		for k, i := range idx {
			pos += i * m.Stride[k]
		}
		f(idx, int(pos))
		return nil
	})
}

// Group is a list of memrefs (one per group index, each possibly with its
// own dynamic shape) and the element offset added to each of them when it is
// loaded. Offset is used only when the group type's offset is dynamic.
type Group struct {
	Memrefs []*Memref
	Offset  int64
}

// addr returns the buffer position of element idx after checking idx
// against the shape. Out-of-bounds accesses are undefined in the language;
// the reference reports them.
func (m *Memref) addr(idx []int64) (int64, error) {
	a := m.Offset
	for k, i := range idx {
		if i < 0 || i >= m.Shape[k] {
			return 0, fmt.Errorf("index %v out of bounds of shape %v", idx, m.Shape)
		}
		a += i * m.Stride[k]
	}
	if a < 0 || a >= int64(m.Buf.Len()) {
		return 0, fmt.Errorf("index %v reaches element %d outside its buffer of %d elements", idx, a, m.Buf.Len())
	}
	return a, nil
}

func (m *Memref) get(idx ...int64) (value, error) {
	a, err := m.addr(idx)
	if err != nil {
		return value{}, err
	}
	return m.Buf.load(a), nil
}

func (m *Memref) set(v value, idx ...int64) error {
	a, err := m.addr(idx)
	if err != nil {
		return err
	}
	m.Buf.store(a, v)
	return nil
}

// vectorAddr returns the buffer position of element idx, the first of n
// that a vector access reads or writes along mode 0 (whose stride the
// verifier fixed to 1), after checking that all n are in bounds and that
// the first one's address is a multiple of the n elements' size. Both are
// undefined behaviour in the language; the reference reports them.
func (m *Memref) vectorAddr(idx []int64, n int) (int64, error) {
	a, err := m.runAddr(idx, n)
	if err != nil {
		return 0, err
	}
	return a, m.alignedFor(idx, a, n)
}

// runAddr returns the buffer position of element idx after checking that it
// and the n-1 elements after it along mode 0 are in bounds.
func (m *Memref) runAddr(idx []int64, n int) (int64, error) {
	a, err := m.addr(idx)
	if err != nil {
		return 0, err
	}
	last := append([]int64(nil), idx...)
	last[0] += int64(n - 1)
	if _, err := m.addr(last); err != nil {
		return 0, fmt.Errorf("vector of %d elements from %v: %w", n, idx, err)
	}
	return a, nil
}

// alignedFor checks that buffer position a (of element idx) is aligned for
// an access of n elements.
func (m *Memref) alignedFor(idx []int64, a int64, n int) error {
	size := m.Buf.Elem.Size()
	bytes := int64(n) * size
	if m.Buf.alignment()%bytes != 0 || a*size%bytes != 0 {
		return fmt.Errorf("vector of %d bytes from index %v starts at byte %d of a buffer aligned to %d bytes: not %d-byte aligned",
			bytes, idx, a*size, m.Buf.alignment(), bytes)
	}
	return nil
}

// span returns the lowest and highest buffer element the memref can reach
// (hi < lo for an empty memref).
func (m *Memref) span() (lo, hi int64) {
	lo, hi = m.Offset, m.Offset
	for k, s := range m.Shape {
		if s == 0 {
			return 0, -1
		}
		d := (s - 1) * m.Stride[k]
		if d < 0 {
			lo += d
		} else {
			hi += d
		}
	}
	return lo, hi
}

// elements calls f for every multi-index of shape in column-major order (the
// first index fastest) and stops at the first error.
func elements(shape []int64, f func(idx []int64) error) error {
	idx := make([]int64, len(shape))
	for _, s := range shape {
		if s == 0 {
			return nil
		}
	}
	for {
		if err := f(idx); err != nil {
			return err
		}
		k := 0
		for ; k < len(idx); k++ {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
		if k == len(idx) {
			return nil
		}
	}
}
