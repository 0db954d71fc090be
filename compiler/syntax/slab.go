package syntax

// slab hands out elements of T from chunks: a kernel has hundreds of
// instructions and values, and one allocation per chunk instead of one per
// object keeps the parser's garbage-collection cost low. Chunks start
// small and double up to slabChunk, so that a kernel of a dozen
// instructions (the tuner's GEMM recipes) does not clear a chunk of 64.
type slab[T any] struct {
	buf  []T
	size int // of the last chunk
}

const (
	slabChunk = 64
	slabFirst = 8
)

func (s *slab[T]) new() *T {
	if len(s.buf) == 0 {
		s.size = min(max(2*s.size, slabFirst), slabChunk)
		s.buf = make([]T, s.size)
	}
	x := &s.buf[0]
	s.buf = s.buf[1:]
	return x
}

// sliceSlab hands out empty slices of capacity n carved from shared chunks;
// the capacity limit makes an append past n reallocate instead of
// overwriting a neighbour.
// Its chunks grow as a slab's do, from 4·slabFirst to 4·slabChunk.
type sliceSlab[T any] struct {
	buf  []T
	size int // of the last chunk
}

func (s *sliceSlab[T]) make(n int) []T {
	if n > slabChunk/4 {
		return make([]T, 0, n)
	}
	if len(s.buf) < n {
		s.size = min(max(2*s.size, 4*slabFirst), 4*slabChunk)
		s.buf = make([]T, s.size)
	}
	out := s.buf[:0:n]
	s.buf = s.buf[n:]
	return out
}
