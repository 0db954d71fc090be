package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// atomicStore writes x to element off of m with a relaxed atomic exchange
// (ir.Atomic) or combines it with the element (ir.AtomicAdd, AtomicMax,
// AtomicMin), at device scope, and returns the element's old value.
// Complex values are updated component by component, as the reference
// allows.
func (e *fn) atomicStore(m *memref, off *dim, x spv.ID, mode ir.AtomicMode) spv.ID {
	t := m.typ.Elem()
	p := e.elemPtr(m, off)
	if !t.IsComplex() {
		return e.atomicScalar(m.sc, t, p, x, mode)
	}
	ct := t.ComponentType()
	rt := e.u.reg(ct)
	pc := e.op(spv.OpBitcast, e.u.ptr(m.sc, rt), p)
	var old [2]spv.ID
	for i := range uint32(2) {
		pi := e.op(spv.OpInBoundsPtrAccessChain, e.u.ptr(m.sc, rt), pc, e.u.i64(int64(i)))
		old[i] = e.atomicScalar(m.sc, ct, pi, e.extract(rt, x, i), mode)
	}
	return e.complex(e.u.reg(t), old[0], old[1])
}

// atomicScalar performs the atomic access of atomicStore on a real or
// integer element at p and returns the old value.
func (e *fn) atomicScalar(sc spv.StorageClass, t *ir.Type, p, x spv.ID, mode ir.AtomicMode) spv.ID {
	u := e.u
	scope, relaxed := u.i32(int64(spv.ScopeDevice)), u.i32(int64(spv.MemorySemanticsRelaxed))
	if t.Bits() == 64 {
		u.b.Capability(spv.CapabilityInt64Atomics)
	}
	switch {
	case t.IsInteger() && mode == ir.AtomicAdd:
		return e.op(spv.OpAtomicIAdd, u.reg(t), p, scope, relaxed, x)
	case t.IsInteger() && mode == ir.AtomicMax:
		return e.op(spv.OpAtomicSMax, u.reg(t), p, scope, relaxed, x)
	case t.IsInteger() && mode == ir.AtomicMin:
		return e.op(spv.OpAtomicSMin, u.reg(t), p, scope, relaxed, x)
	case t.IsInteger():
		return e.op(spv.OpAtomicExchange, u.reg(t), p, scope, relaxed, x)
	case mode == ir.AtomicAdd && u.target.NativeF16 && t.Kind() != ir.KindF16:
		// Targets with SPV_EXT_shader_atomic_float_add (Intel GPUs).
		u.b.Capability(map[int]spv.Capability{32: spv.CapabilityAtomicFloat32AddEXT, 64: spv.CapabilityAtomicFloat64AddEXT}[t.Bits()])
		return e.op(spv.OpAtomicFAddEXT, u.reg(t), p, scope, relaxed, x)
	case mode != ir.Atomic:
		return e.casUpdate(sc, t, p, x, mode.Op())
	}
	it := u.intT(t.Bits())
	ip := e.op(spv.OpBitcast, u.ptr(sc, it), p)
	return e.op(spv.OpBitcast, u.reg(t), e.op(spv.OpAtomicExchange, it, ip, scope, relaxed, e.op(spv.OpBitcast, it, x)))
}

// casUpdate combines x with the float at p (add, max or min) by a
// compare-exchange loop on its bit pattern, OpenCL 1.2 having no float
// atomics, and returns the old value.
func (e *fn) casUpdate(sc spv.StorageClass, t *ir.Type, p, x spv.ID, op ir.ArithOp) spv.ID {
	u := e.u
	it, ft := u.intT(t.Bits()), u.reg(t)
	scope, relaxed := u.i32(int64(spv.ScopeDevice)), u.i32(int64(spv.MemorySemanticsRelaxed))
	ip := e.op(spv.OpBitcast, u.ptr(sc, it), p)
	first := e.op(spv.OpLoad, it, ip)
	pre := e.block
	header, merge := e.b.NewID(), e.b.NewID()
	e.branch(header)
	e.label(header)
	old := e.b.NewID()
	slot := e.b.Reserve(spv.OpPhi, it, old, 4)
	combined, _ := e.binary(op, t, e.op(spv.OpBitcast, ft, old), x)
	seen := e.op(spv.OpAtomicCompareExchange, it, ip, scope, relaxed, relaxed, e.op(spv.OpBitcast, it, combined), old)
	done := e.op(spv.OpIEqual, u.boolT(), seen, old)
	// The header is its own continue target: a one-block loop.
	e.b.Emit(spv.OpLoopMerge, 0, uint32(merge), uint32(header), uint32(spv.LoopControlNone))
	e.b.Emit(spv.OpBranchConditional, 0, uint32(done), uint32(merge), uint32(header))
	e.b.Patch(slot, uint32(first), uint32(pre), uint32(seen), uint32(header))
	e.label(merge)
	return e.op(spv.OpBitcast, ft, seen)
}
