package interp

import (
	"fmt"

	"tltune/compiler/ir"
)

// Asynchronous copies (async_copy, async_commit, async_wait). A work-item's
// copies are kept in flight until an async_wait retires their group; in the
// meantime the destination holds all one bits (NaN, or -1), so a pipeline
// that reads a panel before its wait and barrier, or overwrites one that
// other work-items still read, computes a visibly wrong result.

// pendingCopy is one async_copy in flight: the values read when it was
// issued and where they land.
type pendingCopy struct {
	buf  *Buffer
	at   int64
	vals []value
}

// copyQueue is a work-item's copies in flight: the open group and the
// committed ones, oldest first.
type copyQueue struct {
	open   []pendingCopy
	groups [][]pendingCopy
}

func (e *exec) asyncCopy(in *ir.Inst, env *env) error {
	if e.item == nil {
		return fmt.Errorf("async_copy outside an SPMD region")
	}
	src, srcIdx, dst, dstIdx, valid := in.AsyncCopyOperands()
	n := int(in.Count)
	nv := env.get(valid).i
	if nv < 0 || nv > int64(n) {
		return fmt.Errorf("%d valid elements of a copy of %d", nv, n)
	}
	d := env.get(dst).ref.(*Memref)
	at, err := d.vectorAddr(indexValues(dstIdx, env), n)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	vals := make([]value, n)
	if nv > 0 {
		// Only the valid elements are read, but the copy is issued at the
		// address of all n: it must be aligned for them.
		s := env.get(src).ref.(*Memref)
		idx := indexValues(srcIdx, env)
		from, err := s.runAddr(idx, int(nv))
		if err == nil {
			err = s.alignedFor(idx, from, n)
		}
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		for k := range nv {
			vals[k] = s.Buf.load(from + k)
		}
	}
	for k := range n {
		d.Buf.poison(at + int64(k))
	}
	q := &e.item.copies
	q.open = append(q.open, pendingCopy{buf: d.Buf, at: at, vals: vals})
	return nil
}

func indexValues(idx []*ir.Value, env *env) []int64 {
	out := make([]int64, len(idx))
	for i, v := range idx {
		out[i] = env.get(v).i
	}
	return out
}

func (e *exec) asyncCommit() error {
	if e.item == nil {
		return fmt.Errorf("async_commit outside an SPMD region")
	}
	q := &e.item.copies
	q.groups = append(q.groups, q.open)
	q.open = nil
	return nil
}

func (e *exec) asyncWait(in *ir.Inst) error {
	if e.item == nil {
		return fmt.Errorf("async_wait outside an SPMD region")
	}
	e.item.copies.retire(int(in.Count))
	return nil
}

// retire completes the oldest committed groups until at most left remain.
func (q *copyQueue) retire(left int) {
	for len(q.groups) > left {
		for _, c := range q.groups[0] {
			for k, v := range c.vals {
				c.buf.store(c.at+int64(k), v)
			}
		}
		q.groups = q.groups[1:]
	}
}
