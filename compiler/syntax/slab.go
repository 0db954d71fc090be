package syntax

import "slices"

// slab hands out elements of T from chunks: a kernel has hundreds of
// instructions and values, and one allocation per chunk instead of one per
// object keeps the parser's garbage-collection cost low. Chunks hold the
// number of elements the parser's previous source took (restart), as far
// as this one has not taken them yet, at most slabChunk each: the tuner
// parses the same kernel with thousands of configurations, and the unused
// ends of chunks that started at slabFirst were a sixth of the bytes
// parsing a GEMM kernel allocated. A source that takes more adds chunks of
// half what it took so far, within [slabFirst, slabChunk]: its
// configurations' attribute dictionaries differ by a few entries, and
// doubling the first chunk for them cost more bytes than the slabs of the
// dictionaries saved.
type slab[T any] struct {
	buf  []T
	next int // index in buf of the next element to hand out
	used int // elements handed out since the last restart
	hint int // elements the previous source took: the first chunk's size
}

const (
	slabChunk = 64
	slabFirst = 8
)

func (s *slab[T]) new() *T {
	if s.next == len(s.buf) {
		s.buf, s.next = chunk[T](nextChunk(s.used, s.hint, slabChunk)), 0
	}
	x := &s.buf[s.next]
	s.next++ // (an index: moving s.buf's pointer instead costs a write barrier while the collector marks)
	s.used++
	return x
}

// restart lets go of the chunk for the next source, which starts with a
// chunk of the elements this one took.
func (s *slab[T]) restart() { *s = slab[T]{hint: s.used} }

// nextChunk is the size of a slab's next chunk after used elements: what
// hint has left, else half of used but at least slabFirst; at most most.
func nextChunk(used, hint, most int) int {
	if used < hint {
		return min(hint-used, most)
	}
	return min(max(used/2, slabFirst), most)
}

// chunk returns a chunk of at least n elements: all that fit the
// allocation's size class, which would otherwise go unused (a GEMM
// kernel's 14 attributes, 1568 bytes, take 1792).
func chunk[T any](n int) []T {
	c := slices.Grow([]T(nil), n)
	return c[:cap(c)]
}

// sliceSlab hands out empty slices of capacity n carved from shared chunks;
// the capacity limit makes an append past n reallocate instead of
// overwriting a neighbour.
// Its chunks are sized as a slab's are, up to 4·slabChunk elements.
type sliceSlab[T any] struct {
	buf  []T
	next int // index in buf of the next free element (see slab.new)
	used int // elements handed out since the last restart
	hint int // elements the previous source took: the first chunk's size
}

func (s *sliceSlab[T]) make(n int) []T {
	if n > slabChunk/4 {
		return make([]T, 0, n)
	}
	if len(s.buf)-s.next < n {
		// (At least n: the previous source's hint may be smaller.)
		s.buf, s.next = chunk[T](max(nextChunk(s.used, s.hint, 4*slabChunk), n)), 0
	}
	out := s.buf[s.next : s.next : s.next+n]
	s.next += n
	s.used += n
	return out
}

// clone returns a copy of xs of capacity len(xs), never nil: what
// append(make([]T, 0, len(xs)), xs...) returns, carved from the chunks.
func (s *sliceSlab[T]) clone(xs []T) []T {
	if len(xs) == 0 {
		return []T{}
	}
	return append(s.make(len(xs)), xs...)
}

// append is append(xs, x) for xs carved from s: a full xs moves to a
// slice of twice its capacity carved from s too, not to the heap (gemm's
// fifth operand outgrew the room for four that each instruction starts
// with, two allocations a GEMM kernel).
func (s *sliceSlab[T]) append(xs []T, x T) []T {
	if len(xs) == cap(xs) {
		xs = append(s.make(max(2*cap(xs), 1)), xs...)
	}
	return append(xs, x)
}

// restart lets go of the chunk for the next source (see slab.restart).
func (s *sliceSlab[T]) restart() { *s = sliceSlab[T]{hint: s.used} }
