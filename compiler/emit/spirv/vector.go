package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// Vector memory access: one OpLoad or OpStore of a vector through a cast
// pointer with the Aligned memory operand (the instruction's semantics
// guarantee the alignment), its elements extracted or assembled as the
// memory holds them. f16 on targets without native half goes through
// vloada_halfn / vstorea_halfn, which convert from and to float and assume
// the same alignment.

// memVector is the vector type holding n elements of t as they are in
// memory, and its components per element (2 for complex types).
func (e *fn) memVector(t *ir.Type, n int) (spv.ID, int) {
	if t.IsComplex() {
		return e.u.vec(e.u.reg(t.ComponentType()), 2*n), 2
	}
	return e.u.vec(e.u.mem(t), n), 1
}

// vectorPtr is the element pointer of the first element as a pointer to
// vector type vt.
func (e *fn) vectorPtr(m *memref, idx []*ir.Value, vt spv.ID) spv.ID {
	return e.op(spv.OpBitcast, e.u.ptr(m.sc, vt), e.elemPtr(m, e.offset(m, e.indices(idx))))
}

func (e *fn) vectorLoad(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	t, n, u := m.typ.Elem(), len(in.Results), e.u
	if u.halfway(t) {
		p := e.elemPtr(m, e.offset(m, e.indices(in.Operands[1:])))
		v := e.ext(u.vec(u.floatT(32), n), spv.CLVloadaHalfn, u.i64(0), p, spv.ID(n))
		for k, r := range in.Results {
			e.vals.Set(r, e.extract(u.floatT(32), v, uint32(k)))
		}
		return
	}
	vt, per := e.memVector(t, n)
	p := e.vectorPtr(m, in.Operands[1:], vt)
	v := e.b.Emit(spv.OpLoad, vt, uint32(p), uint32(spv.MemoryAccessAligned), uint32(int64(n)*t.Size()))
	for k, r := range in.Results {
		switch {
		case per == 2:
			e.vals.Set(r, e.b.Emit(spv.OpVectorShuffle, u.reg(t), uint32(v), uint32(v), uint32(2*k), uint32(2*k+1)))
		case t.Kind() == ir.KindBF16:
			bits := e.op(spv.OpUConvert, u.intT(32), e.extract(u.intT(16), v, uint32(k)))
			e.vals.Set(r, e.op(spv.OpBitcast, u.floatT(32), e.op(spv.OpShiftLeftLogical, u.intT(32), bits, u.i32(16))))
		default:
			e.vals.Set(r, e.extract(u.reg(t), v, uint32(k)))
		}
	}
}

func (e *fn) vectorStore(in *ir.Inst) {
	xs, mv, idx := in.VectorStoreOperands()
	m := e.memref(mv)
	t, n, u := m.typ.Elem(), len(xs), e.u
	var parts []spv.ID // the vector's components
	for _, x := range xs {
		switch v := e.value(x); {
		case t.IsComplex():
			ct := u.reg(t.ComponentType())
			parts = append(parts, e.extract(ct, v, 0), e.extract(ct, v, 1))
		case t.Kind() == ir.KindBF16:
			parts = append(parts, e.bf16Bits(v))
		default:
			parts = append(parts, v)
		}
	}
	if u.halfway(t) {
		p := e.elemPtr(m, e.offset(m, e.indices(idx)))
		v := e.compose(u.vec(u.floatT(32), n), parts...)
		e.b.Emit(spv.OpExtInst, u.void(), uint32(u.clStd), uint32(spv.CLVstoreaHalfn), uint32(v), uint32(u.i64(0)), uint32(p))
		return
	}
	vt, _ := e.memVector(t, n)
	p := e.vectorPtr(m, idx, vt)
	e.b.Emit(spv.OpStore, 0, uint32(p), uint32(e.compose(vt, parts...)), uint32(spv.MemoryAccessAligned), uint32(int64(n)*t.Size()))
}
