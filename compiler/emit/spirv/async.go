package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// Asynchronous copies are done when issued, element by element (a
// synchronous copy is one of the executions async_copy allows; SPIR-V has
// no portable asynchronous copy of a work-item's own). Elements past the
// count of valid ones are written as zero and their source is not read.
// async_commit and async_wait have nothing left to do.
func (e *fn) asyncCopy(in *ir.Inst) {
	srcV, srcIdx, dstV, dstIdx, validV := in.AsyncCopyOperands()
	src, dst := e.memref(srcV), e.memref(dstV)
	t := srcV.Type.Elem()
	from := e.offset(src, e.indices(srcIdx))
	to := e.offset(dst, e.indices(dstIdx))
	valid := e.index(validV)
	full := valid.id == 0 && valid.c == in.Count
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
