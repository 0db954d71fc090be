package syntax

// slab hands out elements of T from chunks: a kernel has hundreds of
// instructions and values, and one allocation per chunk instead of one per
// object keeps the parser's garbage-collection cost low. Chunks double up
// to slabChunk, from the number of elements the parser's previous source
// took (restart) or slabFirst: the tuner parses the same kernel with
// thousands of configurations, and the unused ends of chunks that started
// at slabFirst were a sixth of the bytes parsing a GEMM kernel allocated.
type slab[T any] struct {
	buf  []T
	size int // of the last chunk
	used int // elements handed out since the last restart
	hint int // elements the previous source took: the first chunk's size
}

const (
	slabChunk = 64
	slabFirst = 8
)

func (s *slab[T]) new() *T {
	if len(s.buf) == 0 {
		s.size = nextChunk(s.size, s.hint, slabFirst, slabChunk)
		s.buf = make([]T, s.size)
	}
	x := &s.buf[0]
	s.buf = s.buf[1:]
	s.used++
	return x
}

// restart lets go of the chunk for the next source, which starts with a
// chunk of the elements this one took.
func (s *slab[T]) restart() { *s = slab[T]{hint: s.used} }

// nextChunk is the size of the chunk after one of size last (0: none
// yet): hint (at most most) for the first when there is one, else
// doubling within [first, most].
func nextChunk(last, hint, first, most int) int {
	if last == 0 && hint > 0 {
		return min(hint, most)
	}
	return min(max(2*last, first), most)
}

// sliceSlab hands out empty slices of capacity n carved from shared chunks;
// the capacity limit makes an append past n reallocate instead of
// overwriting a neighbour.
// Its chunks grow as a slab's do, from 4·slabFirst to 4·slabChunk.
type sliceSlab[T any] struct {
	buf  []T
	size int // of the last chunk
	used int // elements handed out since the last restart
	hint int // elements the previous source took: the first chunk's size
}

func (s *sliceSlab[T]) make(n int) []T {
	if n > slabChunk/4 {
		return make([]T, 0, n)
	}
	if len(s.buf) < n {
		s.size = nextChunk(s.size, s.hint, 4*slabFirst, 4*slabChunk)
		s.buf = make([]T, s.size)
	}
	out := s.buf[:0:n]
	s.buf = s.buf[n:]
	s.used += n
	return out
}

// restart lets go of the chunk for the next source (see slab.restart).
func (s *sliceSlab[T]) restart() { *s = sliceSlab[T]{hint: s.used} }
