package opencl

import "unsafe"

// text joins the C expressions a kernel is written from (an element's
// address, an operand's conversion, a variable's name) into shared
// chunks: joined one by one they were most of the emitter's allocations,
// a few dozen bytes each. A chunk is never written twice, so the strings
// cut from it stay valid as long as something refers to them; nothing
// from a chunk goes into an Output (kernel names and arguments are joined
// the ordinary way).
type text struct {
	// chunk is assigned only when a new one is cut, and used counts what
	// is written: moving a slice along for every string cost a write
	// barrier each while the collector ran.
	chunk []byte
	used  int
}

// textChunk is the size of a chunk: a GEMM kernel joins a few KiB.
const textChunk = 2 << 10

// room makes room for n more bytes.
func (t *text) room(n int) {
	if len(t.chunk)-t.used < n {
		t.chunk, t.used = make([]byte, max(n, textChunk)), 0
	}
}

// join returns the concatenation of parts.
func (t *text) join(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	t.room(n)
	at := t.used
	for _, p := range parts {
		t.used += copy(t.chunk[t.used:], p)
	}
	return unsafe.String(&t.chunk[at], n)
}

// bytes returns b as a string cut from a chunk.
func (t *text) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	t.room(len(b))
	at := t.used
	t.used += copy(t.chunk[at:], b)
	return unsafe.String(&t.chunk[at], len(b))
}
