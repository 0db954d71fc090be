// Package slab hands out the many small slices and values a back end
// keeps while it writes one program (memref views, shapes and strides, a
// matrix's registers) from arrays it recycles from program to program:
// allocated one by one they were most of the objects writing a GEMM
// kernel allocated.
package slab

// Of hands out Ts. The zero value is ready to use.
type Of[T any] struct {
	buf []T
}

// minLen is the length of a slab's first array.
const minLen = 64

// Take returns n zero Ts, a slice of capacity n: appending to it copies
// it out of the slab.
func (s *Of[T]) Take(n int) []T {
	at := len(s.buf)
	if at+n > cap(s.buf) {
		// A fresh array: the slices handed out keep the old one.
		s.buf, at = make([]T, 0, max(minLen, 2*cap(s.buf), n)), 0
	}
	s.buf = s.buf[:at+n]
	return s.buf[at : at+n : at+n]
}

// Hold returns a T in the slab that holds x.
func (s *Of[T]) Hold(x T) *T {
	p := &s.Take(1)[0]
	*p = x
	return p
}

// Recycle empties s, keeping its array for the next program: nothing it
// handed out may be used after.
func (s *Of[T]) Recycle() {
	clear(s.buf)
	s.buf = s.buf[:0]
}
