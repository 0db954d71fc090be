package syntax

// slab hands out elements of T from large chunks: a kernel has hundreds of
// instructions and values, and one allocation per chunk instead of one per
// object keeps the parser's garbage-collection cost low.
type slab[T any] struct{ buf []T }

const slabChunk = 64

func (s *slab[T]) new() *T {
	if len(s.buf) == 0 {
		s.buf = make([]T, slabChunk)
	}
	x := &s.buf[0]
	s.buf = s.buf[1:]
	return x
}

// sliceSlab hands out empty slices of capacity n carved from shared chunks;
// the capacity limit makes an append past n reallocate instead of
// overwriting a neighbour.
type sliceSlab[T any] struct{ buf []T }

func (s *sliceSlab[T]) make(n int) []T {
	if n > slabChunk/4 {
		return make([]T, 0, n)
	}
	if len(s.buf) < n {
		s.buf = make([]T, 4*slabChunk)
	}
	out := s.buf[:0:n]
	s.buf = s.buf[n:]
	return out
}
