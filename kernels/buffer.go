package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"tltune/compiler/numeric"
	"tltune/internal/parallel"
)

// Buffer is one kernel argument's batch as the device holds it: Batch
// entries packed one after another, each column-major with the packed
// layout of its memref type, elements little-endian in their device
// encoding (f16/bf16 as 16-bit patterns, complex as real then imaginary
// part). The same bytes serve both layouts: for a group the host passes
// one pointer (or offset) per entry into this buffer.
type Buffer struct {
	Name  string // the kernel argument, e.g. "A"
	Type  DType
	Shape []int // one batch entry
	Batch int
	Data  []byte
}

func newBuffer(o operand, batch int) *Buffer {
	b := &Buffer{Name: o.name, Type: o.dtype, Shape: o.shape, Batch: batch}
	b.Data = make([]byte, b.EntryElements()*batch*o.dtype.Size())
	return b
}

// EntryElements is the number of elements of one batch entry.
func (b *Buffer) EntryElements() int {
	n := 1
	for _, d := range b.Shape {
		n *= d
	}
	return n
}

// Len is the number of elements of the whole batch.
func (b *Buffer) Len() int { return b.EntryElements() * b.Batch }

// At returns element i of the batch (entry i / EntryElements()).
func (b *Buffer) At(i int) complex128 {
	cs := b.Type.componentSize()
	off := i * b.Type.Size()
	re := decodeComponent(b.Type, b.Data[off:off+cs])
	if !b.Type.IsComplex() {
		return complex(re, 0)
	}
	return complex(re, decodeComponent(b.Type, b.Data[off+cs:off+2*cs]))
}

// Set stores z, rounded to the buffer's type, as element i.
func (b *Buffer) Set(i int, z complex128) {
	cs := b.Type.componentSize()
	off := i * b.Type.Size()
	encodeComponent(b.Type, b.Data[off:off+cs], real(z))
	if b.Type.IsComplex() {
		encodeComponent(b.Type, b.Data[off+cs:off+2*cs], imag(z))
	}
}

// absolute is a copy of b holding the absolute values of its elements.
func (b *Buffer) absolute() *Buffer {
	abs := *b
	abs.Data = make([]byte, len(b.Data))
	for i := range b.Len() {
		abs.Set(i, complex(cmplx.Abs(b.At(i)), 0))
	}
	return &abs
}

// Fill sets every element to z.
func (b *Buffer) Fill(z complex128) {
	for i := range b.Len() {
		b.Set(i, z)
	}
}

func encodeComponent(t DType, dst []byte, x float64) {
	switch t {
	case F16:
		binary.LittleEndian.PutUint16(dst, numeric.F16Bits(x))
	case BF16:
		binary.LittleEndian.PutUint16(dst, numeric.BF16Bits(x))
	case F32, C32:
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(x)))
	default:
		binary.LittleEndian.PutUint64(dst, math.Float64bits(x))
	}
}

func decodeComponent(t DType, src []byte) float64 {
	switch t {
	case F16:
		return numeric.F16FromBits(binary.LittleEndian.Uint16(src))
	case BF16:
		return numeric.BF16FromBits(binary.LittleEndian.Uint16(src))
	case F32, C32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(src)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(src))
}

// Inputs is one seeded set of kernel arguments.
type Inputs struct {
	Seed  uint64 // record it with the measurement: Inputs(Seed, Batch) regenerates the same bytes
	Batch int
	// Args are the kernel's memref/group arguments in order. The last one
	// is the output, holding its initial contents: random when the kernel
	// reads it (β ≠ 0), NaN otherwise, so a kernel that reads C when it
	// must not is caught by verification.
	Args []*Buffer
}

// Output is the argument the kernel writes.
func (in *Inputs) Output() *Buffer { return in.Args[len(in.Args)-1] }

// inputs draws every element uniformly from [-1, 1) (both parts for complex
// types), rounded to the argument's type, from a PCG stream keyed by seed.
func (s Spec) inputs(seed uint64, batch int) (*Inputs, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch must be at least 1, got %d", batch)
	}
	in := &Inputs{Seed: seed, Batch: batch}
	ops := s.operands()
	for i, o := range ops {
		buf := newBuffer(o, batch)
		if i == len(ops)-1 && !s.readsC() {
			buf.Fill(complex(math.NaN(), math.NaN()))
		} else {
			fillRandom(buf, seed, i)
		}
		in.Args = append(in.Args, buf)
	}
	return in, nil
}

// randomChunk is the number of elements one random stream fills.
const randomChunk = 1 << 16

// fillRandom fills b with values uniform in [-1, 1) (both parts of a
// complex value). Each chunk of randomChunk elements has a random stream
// of its own, named by the seed, the operand and the chunk, so the values
// depend on neither the number of cores nor the order the chunks are
// filled in.
func fillRandom(b *Buffer, seed uint64, operand int) {
	chunks := (b.Len() + randomChunk - 1) / randomChunk
	parallel.For(chunks, func(c int) {
		r := rand.New(rand.NewPCG(seed, 0x746c74756e65^uint64(operand)<<48^uint64(c))) // "tltune"
		for i := c * randomChunk; i < min((c+1)*randomChunk, b.Len()); i++ {
			z := complex(2*r.Float64()-1, 0)
			if b.Type.IsComplex() {
				z += complex(0, 2*r.Float64()-1)
			}
			b.Set(i, z)
		}
	})
}

// readsC reports whether the kernel's result depends on the initial output:
// β, as the kernel holds it, is not zero.
func (s Spec) readsC() bool { return s.Acc.Round(s.Beta) != 0 }
