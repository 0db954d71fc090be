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
	t.used += copyParts(t.chunk[at:], parts)
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
	n := len(a) + len(b)
	t.room(n + 20)
	at := t.used
	copyParts(t.chunk[at:], []string{a, b})
	n = len(strconv.AppendInt(t.chunk[at+n:at+n], int64(x), 10)) + n
	t.used += n
	return unsafe.String(&t.chunk[at], n)
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
// moves no slice along per write: its array is assigned only when it
// grows, and a count marks what is written (a bytes.Buffer's reslicing
// cost a write barrier per string while the collector ran, and a kernel
// is written from thousands of strings).
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

func (c *code) grow(n int) {
	buf := make([]byte, max(2*len(c.buf), c.n+n))
	copy(buf, c.buf[:c.n])
	c.buf = buf
}

// WriteString appends s.
func (c *code) WriteString(s string) {
	if len(c.buf)-c.n < len(s) {
		c.grow(len(s))
	}
	c.n += copy(c.buf[c.n:], s)
}

// WriteByte appends b.
func (c *code) WriteByte(b byte) error {
	if c.n == len(c.buf) {
		c.grow(1)
	}
	c.buf[c.n] = b
	c.n++
	return nil
}

// Write appends p (for fmt.Fprintf).
func (c *code) Write(p []byte) (int, error) {
	if len(c.buf)-c.n < len(p) {
		c.grow(len(p))
	}
	c.n += copy(c.buf[c.n:], p)
	return len(p), nil
}

// line appends one line of C: indent levels of indentation (four spaces
// each), parts and a newline.
func (c *code) line(indent int, parts ...string) {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	b := c.indented(indent, n)
	b[copyParts(b, parts)] = '\n'
}

// indented appends indent levels of indentation and returns the n bytes
// after them for the caller to fill: room is made once for a whole line.
func (c *code) indented(indent, n int) []byte {
	pad := 4 * indent
	if len(c.buf)-c.n < pad+n {
		c.grow(pad + n)
	}
	b := c.buf[c.n : c.n+pad+n]
	c.n += pad + n
	for at := 0; at < pad; at += len(indentation) {
		copy(b[at:pad], indentation)
	}
	return b[pad:]
}

// copyParts copies parts one after the other to the start of b and
// returns the bytes copied. Most parts of C text are a few bytes (a name,
// an operator, a bracket): those are copied byte by byte, which costs
// less than a call of memmove and the registers it spills.
func copyParts(b []byte, parts []string) int {
	at := 0
	for _, p := range parts {
		if len(p) > 8 {
			at += copy(b[at:], p)
			continue
		}
		d := b[at : at+len(p)]
		for i := range d {
			d[i] = p[i]
		}
		at += len(p)
	}
	return at
}

// indentation is 16 levels of indentation, written in one piece.
const indentation = "                                                                "

// writeInt appends x in decimal.
func (c *code) writeInt(x int) {
	var digits [20]byte
	c.Write(strconv.AppendInt(digits[:0], int64(x), 10))
}

// Bytes returns what is written.
func (c *code) Bytes() []byte { return c.buf[:c.n] }

// Len is the number of bytes written.
func (c *code) Len() int { return c.n }
