package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// atomicStore writes x to element off of m with a relaxed atomic exchange
// (ir.Atomic) or adds it (ir.AtomicAdd), at device scope. Complex values are
// updated component by component, as the reference allows.
func (e *fn) atomicStore(m *memref, off *dim, x spv.ID, mode ir.AtomicMode) {
	t := m.typ.Elem()
	p := e.elemPtr(m, off)
	if !t.IsComplex() {
		e.atomicScalar(m.sc, t, p, x, mode)
		return
	}
	ct := t.ComponentType()
	rt := e.u.reg(ct)
	pc := e.op(spv.OpBitcast, e.u.ptr(m.sc, rt), p)
	for i := range uint32(2) {
		pi := e.op(spv.OpInBoundsPtrAccessChain, e.u.ptr(m.sc, rt), pc, e.u.i64(int64(i)))
		e.atomicScalar(m.sc, ct, pi, e.extract(rt, x, i), mode)
	}
}

func (e *fn) atomicScalar(sc spv.StorageClass, t *ir.Type, p, x spv.ID, mode ir.AtomicMode) {
	u := e.u
	scope, relaxed := u.i32(int64(spv.ScopeDevice)), u.i32(int64(spv.MemorySemanticsRelaxed))
	if t.Bits() == 64 {
		u.b.Capability(spv.CapabilityInt64Atomics)
	}
	switch {
	case t.IsInteger() && mode == ir.AtomicAdd:
		e.op(spv.OpAtomicIAdd, u.reg(t), p, scope, relaxed, x)
	case t.IsInteger():
		e.op(spv.OpAtomicExchange, u.reg(t), p, scope, relaxed, x)
	case mode == ir.AtomicAdd && u.target.NativeF16 && t.Kind() != ir.KindF16:
		// Targets with SPV_EXT_shader_atomic_float_add (Intel GPUs).
		u.b.Capability(map[int]spv.Capability{32: spv.CapabilityAtomicFloat32AddEXT, 64: spv.CapabilityAtomicFloat64AddEXT}[t.Bits()])
		e.op(spv.OpAtomicFAddEXT, u.reg(t), p, scope, relaxed, x)
	case mode == ir.AtomicAdd:
		e.casAdd(sc, t, p, x)
	default:
		it := u.intT(t.Bits())
		ip := e.op(spv.OpBitcast, u.ptr(sc, it), p)
		e.op(spv.OpAtomicExchange, it, ip, scope, relaxed, e.op(spv.OpBitcast, it, x))
	}
}

// casAdd adds x to the float at p with a compare-exchange loop on its bit
// pattern: OpenCL 1.2 has no float atomics.
func (e *fn) casAdd(sc spv.StorageClass, t *ir.Type, p, x spv.ID) {
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
	sum := e.op(spv.OpFAdd, ft, e.op(spv.OpBitcast, ft, old), x)
	seen := e.op(spv.OpAtomicCompareExchange, it, ip, scope, relaxed, relaxed, e.op(spv.OpBitcast, it, sum), old)
	done := e.op(spv.OpIEqual, u.boolT(), seen, old)
	// The header is its own continue target: a one-block loop.
	e.b.Emit(spv.OpLoopMerge, 0, uint32(merge), uint32(header), uint32(spv.LoopControlNone))
	e.b.Emit(spv.OpBranchConditional, 0, uint32(done), uint32(merge), uint32(header))
	e.b.Patch(slot, uint32(first), uint32(pre), uint32(seen), uint32(header))
	e.label(merge)
}
