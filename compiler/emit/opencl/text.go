package opencl

import (
	"strconv"
	"sync"
	"unsafe"
)

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
	// cut holds the chunks of textChunk bytes written so far and spare
	// those to write next: a text is recycled (recycle), and its chunks
	// with it, once nothing refers to its strings.
	cut, spare [][]byte
}

// textChunk is the size of a chunk: a GEMM kernel joins a few KiB.
const textChunk = 2 << 10

// room makes room for n more bytes.
func (t *text) room(n int) {
	if len(t.chunk)-t.used >= n {
		return
	}
	t.used = 0
	switch {
	case n > textChunk:
		t.chunk = make([]byte, n) // not recycled
	case len(t.spare) > 0:
		t.chunk = t.spare[len(t.spare)-1]
		t.spare = t.spare[:len(t.spare)-1]
		t.cut = append(t.cut, t.chunk)
	default:
		t.chunk = make([]byte, textChunk)
		t.cut = append(t.cut, t.chunk)
	}
}

// recycle makes every chunk written spare again: the strings cut from
// them must no longer be used.
func (t *text) recycle() {
	t.spare = append(t.spare, t.cut...)
	clear(t.cut)
	t.cut, t.chunk, t.used = t.cut[:0], nil, 0
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
	appendParts(t.chunk[at:at], parts) // in place: the room is there
	t.used += n
	return unsafe.String(&t.chunk[at], n)
}

// joined is the concatenation of parts, which hold at least one: the
// part itself if there is one.
func (t *text) joined(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return t.join(parts...)
}

// number returns a, b and x ≥ 0 in decimal, concatenated in a chunk:
// the name of a variable.
func (t *text) number(a, b string, x int) string {
	t.room(len(a) + len(b) + 20)
	at := t.used
	name := strconv.AppendInt(append(append(t.chunk[at:at], a...), b...), int64(x), 10) // in place
	t.used += len(name)
	return unsafe.String(&t.chunk[at], len(name))
}

// itoa is x in decimal: cut from a chunk where strconv's would be
// allocated (beyond decimals).
func (t *text) itoa(x int64) string {
	if 0 <= x && x < int64(len(decimals)) {
		return decimals[x]
	}
	var digits [20]byte
	return t.bytes(strconv.AppendInt(digits[:0], x, 10))
}

// decimal is x in decimal: strconv.Itoa without the allocation of
// numbers from 100 up to 1023 (decimals).
func decimal(x int) string {
	if uint(x) < uint(len(decimals)) {
		return decimals[x]
	}
	return strconv.Itoa(x)
}

// decimals spells 0, 1, ..., 1023, cut from one string: the slots of a
// replicated B operand (up to 16·16 of them), strides and offsets of
// local panels are written by the hundred per kernel, and strconv
// allocates every number from 100 up.
var decimals = func() (d [1024]string) {
	var all []byte
	ends := make([]int, len(d))
	for i := range d {
		all = strconv.AppendInt(all, int64(i), 10)
		ends[i] = len(all)
	}
	s, start := string(all), 0
	for i, end := range ends {
		d[i], start = s[start:end], end
	}
	return d
}()

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

// code is a kernel's C text as it is written. Unlike a bytes.Buffer it
// moves no slice along per write: a write appends to a slice of its own
// and stores back the count written, and the array only when the append
// grew it (a bytes.Buffer's reslicing cost a write barrier per string
// while the collector ran, and a kernel is written from thousands of
// strings).
type code struct {
	buf []byte // all of it usable
	n   int
}

// codes recycles kernel texts: a GEMM kernel is tens of KiB of C.
var codes = sync.Pool{New: func() any { return &code{buf: make([]byte, 16<<10)} }}

func getCode() *code { return codes.Get().(*code) }

func putCode(c *code) {
	c.n = 0
	codes.Put(c)
}

// set records b, Bytes with a write appended, as what is written.
func (c *code) set(b []byte) {
	if cap(b) != len(c.buf) { // the append grew a new array
		c.buf = b[:cap(b)]
	}
	c.n = len(b)
}

// WriteString appends s.
func (c *code) WriteString(s string) { c.set(append(c.Bytes(), s...)) }

// WriteByte appends b.
func (c *code) WriteByte(b byte) error {
	c.set(append(c.Bytes(), b))
	return nil
}

// Write appends p (for fmt.Fprintf).
func (c *code) Write(p []byte) (int, error) {
	c.set(append(c.Bytes(), p...))
	return len(p), nil
}

// line appends one line of C: indent levels of indentation (four spaces
// each), parts and a newline.
func (c *code) line(indent int, parts ...string) {
	b := appendParts(indented(c.Bytes(), indent), parts)
	c.set(append(b, '\n'))
}

// indented appends indent levels of indentation to b.
func indented(b []byte, indent int) []byte {
	for n := 4 * indent; n > 0; n -= len(indentation) {
		b = append(b, indentation[:min(n, len(indentation))]...)
	}
	return b
}

// appendParts appends parts to b. C text is written from parts of a few
// bytes (a name, an operator, a bracket), thousands of them per kernel:
// appended, a part costs a comparison with the capacity and a call of
// memmove, and a line about two thirds of the instructions it cost copied
// into a slice of the line cut beforehand (short parts byte by byte).
func appendParts(b []byte, parts []string) []byte {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// indentation is 16 levels of indentation, written in one piece.
const indentation = "                                                                "

// writeInt appends x in decimal.
func (c *code) writeInt(x int) { c.set(strconv.AppendInt(c.Bytes(), int64(x), 10)) }

// Bytes returns what is written, which a write appends to (set).
func (c *code) Bytes() []byte { return c.buf[:c.n] }

// Len is the number of bytes written.
func (c *code) Len() int { return c.n }
