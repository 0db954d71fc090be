package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// Asynchronous copies are done when issued (a synchronous copy is one of
// the executions async_copy allows; SPIR-V has no portable asynchronous
// copy of a work-item's own). A copy of all its elements moves their bytes
// in one load and one store of 32-bit words, as the OpenCL C writer's copy
// does: async_copy's first elements are aligned to the whole copy, and the
// bytes need no conversion (an f16 on a target without native half stays
// half). A copy with fewer valid elements, or narrower than a word, goes
// element by element: elements past the valid ones are written as zero and
// their source is not read. async_commit and async_wait have nothing left
// to do.
func (e *fn) asyncCopy(in *ir.Inst) {
	srcV, srcIdx, dstV, dstIdx, validV := in.AsyncCopyOperands()
	src, dst := e.memref(srcV), e.memref(dstV)
	t := srcV.Type.Elem()
	from := e.offset(src, e.indices(srcIdx))
	to := e.offset(dst, e.indices(dstIdx))
	valid := e.index(validV)
	full := valid.id == 0 && valid.c == in.Count
	if bytes := in.Count * t.Size(); full && in.Count > 1 && bytes%4 == 0 {
		e.copyWords(src, from, dst, to, int(bytes/4))
		return
	}
	for k := range in.Count {
		kd := constDim(k)
		load := func() spv.ID { return e.loadElem(src, e.add(from, kd)) }
		var x spv.ID
		if full {
			x = load()
		} else {
			x = e.guarded(e.inRange(kd, valid), e.u.reg(t), e.u.zero(t), load)
		}
		e.storeElem(dst, e.add(to, kd), x, ir.NotAtomic)
	}
}

// copyWords copies words 32-bit words (1, 2 or 4: a copy is at most
// ir.MaxVectorBytes) from element from of src to element to of dst, both
// aligned to the whole copy, in one load and one store.
func (e *fn) copyWords(src *memref, from *dim, dst *memref, to *dim, words int) {
	u := e.u
	wt := u.intT(32)
	if words > 1 {
		wt = u.vec(wt, words)
	}
	align := uint32(4 * words)
	at := func(m *memref, off *dim) spv.ID {
		return e.op(spv.OpBitcast, u.ptr(m.sc, wt), e.elemPtr(m, off))
	}
	x := e.b.Emit(spv.OpLoad, wt, uint32(at(src, from)), uint32(spv.MemoryAccessAligned), align)
	e.b.Emit(spv.OpStore, 0, uint32(at(dst, to)), uint32(x), uint32(spv.MemoryAccessAligned), align)
}
