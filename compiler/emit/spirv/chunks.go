package spirv

import "unsafe"

// chunks hands out slices of Ts carved from chunks that a unit keeps from
// module to module (see units). Writing a kernel makes thousands of small
// objects that live only while it is written: a dim for every address it
// computes, a list of ids for every coopmatrix value, the parts of every
// coopmatrix access.
type chunks[T any] struct {
	all  [][]T // the chunks made so far, each chunkLen[T]() long
	n    int   // chunks in use; the last of them, all[n-1], is being carved
	used int   // elements handed out of all[n-1]
}

// chunkLen is the length of a chunk of Ts: 4 KiB, or 16 large Ts. A GEMM
// kernel's dims fill a few chunks.
func chunkLen[T any]() int {
	var t T
	return max(4096/int(unsafe.Sizeof(t)), 16)
}

// maxChunks bounds the chunks a unit keeps: one huge kernel does not pin
// its memory in the pool.
const maxChunks = 64

// take returns n zeroed Ts. Their capacity is n, so appending to them
// copies them rather than overwriting a neighbour. They stay valid until
// reset.
func (c *chunks[T]) take(n int) []T {
	size := chunkLen[T]()
	if n > size {
		return make([]T, n)
	}
	if c.n == 0 || c.used+n > size {
		if c.n == len(c.all) {
			c.all = append(c.all, make([]T, size))
		}
		c.n++
		c.used = 0
	}
	s := c.all[c.n-1][c.used : c.used+n : c.used+n]
	c.used += n
	return s
}

// one returns a pointer to a zeroed T (take(1)).
func (c *chunks[T]) one() *T { return &c.take(1)[0] }

// reset makes every chunk free again, cleared (so that take hands out
// zeroed memory, and so that a unit in the pool refers to no program):
// nothing taken before may be used after.
func (c *chunks[T]) reset() {
	if c.n > 0 {
		for _, ch := range c.all[:c.n-1] {
			clear(ch)
		}
		clear(c.all[c.n-1][:c.used]) // the rest of it was never handed out
	}
	if len(c.all) > maxChunks {
		clear(c.all[maxChunks:])
		c.all = c.all[:maxChunks]
	}
	c.n, c.used = 0, 0
}
