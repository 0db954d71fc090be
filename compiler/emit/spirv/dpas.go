package spirv

import (
	"strconv"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// DPAS. On an Intel GPU with cl_intel_subgroup_matrix_multiply_accumulate
// (t.MMA lists its shapes), the mul_adds the engine can execute call its
// built-ins, intel_sub_group_<f16|bf16>_<f16|bf16>_matrix_mad_k16, as the
// OpenCL C writer does: the same values are held in the same fragment
// layout (opencl.FragmentLayout decides which), and each 8×16 by 16×N
// block product is one call. SPIR-V has no instruction for them that
// every Intel driver takes, so the module imports each built-in by its
// mangled OpenCL C name (a function declaration with Import linkage),
// which Intel's compiler resolves from its built-in library as it does
// for OpenCL C compiled offline. Tests link an emulation in its place
// (compiler/testdata/targets/dpas_emulation.h).
//
// The fragment layouts are target.DPASLayout's. A lane holds the blocks
// of a matrix one after another, numbered column-major over the block
// grid: element k is element k mod Per of block k / Per.

// dpasFragment is the layout of matrix use u at subgroup size sgs.
func dpasFragment(u ir.MatrixUse, sgs int) target.DPASFragment {
	a, b, acc := target.DPASLayout(sgs)
	switch u {
	case ir.MatrixA:
		return a
	case ir.MatrixB:
		return b
	}
	return acc
}

// chooseEngine decides which coopmatrix values of the kernel being
// written are held in DPAS fragments: those the OpenCL C writer would
// hold so, when its engine is DPAS.
func (e *fn) chooseEngine() {
	e.frag = nil
	t := e.u.target
	if len(t.MMA) == 0 || e.launch.SubgroupSize == 1 {
		return
	}
	held, engine := opencl.FragmentLayout(e.f, t, e.launch.SubgroupSize)
	if engine != nil && engine.Engine == target.EngineDPAS && !engine.Emulated {
		e.frag = held
	}
}

// inFragments reports whether v is held in DPAS fragments.
func (e *fn) inFragments(v *ir.Value) bool { return e.frag != nil && e.frag(v) }

// eachFragmentElement is eachElement for a value held in fragments: every
// lane holds every block's elements, so no element is partial.
func (e *fn) eachFragmentElement(t *ir.Type, f func(k, ri, ci int, r, c *dim, partial spv.ID)) {
	fr := dpasFragment(t.Use(), e.launch.SubgroupSize)
	rows, cols := int(t.Rows()), int(t.Cols())
	blocksM := rows / fr.Rows
	lane := e.mul(e.newDim(e.op(spv.OpSConvert, e.u.intT(64), e.lane)), constDim(int64(fr.Width)))
	colDims := e.dimLists.take(cols) // by column offset, made as first needed
	for b := range blocksM * cols / fr.Cols {
		for i := range fr.Per {
			ri := (b%blocksM)*fr.Rows + i/fr.Width
			ci := (b/blocksM)*fr.Cols + i%fr.Width
			if colDims[ci] == nil {
				colDims[ci] = e.add(lane, constDim(int64(ci)))
			}
			f(b*fr.Per+i, ri, ci, constDim(int64(ri)), colDims[ci], 0)
		}
	}
}

// dpasMulAdd writes D = A·B + C on fragments as a grid of built-in calls,
// one per 8×N block of D and 16-deep slice of K.
func (e *fn) dpasMulAdd(in *ir.Inst) {
	av, bv, cv := in.Operands[0], in.Operands[1], in.Operands[2]
	a, b := e.coop(av), e.coop(bv)
	acc := append(e.idLists.take(len(e.coop(cv)))[:0], e.coop(cv)...)
	sgs := e.launch.SubgroupSize
	fa, fb, fc := dpasFragment(ir.MatrixA, sgs), dpasFragment(ir.MatrixB, sgs), dpasFragment(ir.MatrixAcc, sgs)
	bm, bk, bn := int(cv.Type.Rows())/fc.Rows, int(av.Type.Cols())/fa.Cols, int(cv.Type.Cols())/fc.Cols
	in16 := av.Type.Elem()
	u := e.u
	f32x8 := u.vec(u.floatT(32), 8)
	call := u.dpasBuiltin(in16, sgs)
	for ni := range bn {
		for mi := range bm {
			for ki := range bk {
				offC, offA, offB := (mi+ni*bm)*fc.Per, (mi+ki*bm)*fa.Per, (ki+ni*bk)*fb.Per
				x := e.dpasA(a[offA:offA+fa.Per], in16)
				y := e.pairs(b[offB:offB+fb.Per], in16)
				z := e.compose(f32x8, acc[offC:offC+fc.Per]...)
				d := e.op(spv.OpFunctionCall, f32x8, call, x, y, z)
				for j := range fc.Per {
					acc[offC+j] = e.extract(u.floatT(32), d, uint32(j))
				}
			}
		}
	}
	e.coops[in.Result()] = acc
}

// dpasA is the built-in's a operand from one block of A: a short8 of one
// 16-bit value per row at 16 lanes, an int8 of two at 8 lanes.
func (e *fn) dpasA(a []spv.ID, t *ir.Type) spv.ID {
	if len(a) == 16 {
		return e.pairs(a, t)
	}
	u := e.u
	bits := e.idLists.take(len(a))
	for i, x := range a {
		bits[i] = e.bits16(x, t)
	}
	return e.compose(u.vec(u.intT(16), len(a)), bits...)
}

// pairs packs 16 values of t, two per 32-bit lane of an int8, the first
// of a pair in the low half: the built-ins' b operand (and a at 8 lanes).
func (e *fn) pairs(x []spv.ID, t *ir.Type) spv.ID {
	u := e.u
	i16x2 := u.vec(u.intT(16), 2)
	words := e.idLists.take(len(x) / 2)
	for i := range words {
		two := e.compose(i16x2, e.bits16(x[2*i], t), e.bits16(x[2*i+1], t))
		words[i] = e.op(spv.OpBitcast, u.intT(32), two)
	}
	return e.compose(u.vec(u.intT(32), len(words)), words...)
}

// Vectors are built by insertion (compose), not OpCompositeConstruct,
// which llvm-spirv-15 (PoCL's path from SPIR-V) reads only for constants.

// bits16 is the 16 bits of register value x of type t (f16 or bf16).
func (e *fn) bits16(x spv.ID, t *ir.Type) spv.ID {
	u := e.u
	switch {
	case t.Kind() == ir.KindBF16:
		return e.bf16Bits(x)
	case u.halfway(t):
		// An f32 register (no native half): rounded into a private half
		// by vstore_half, as a store to memory rounds, and read back as
		// bits.
		if e.halfBits == 0 {
			e.halfBits = e.b.FunctionVariable(u.ptr(spv.StorageClassFunction, u.intT(16)))
		}
		half := e.op(spv.OpBitcast, u.ptr(spv.StorageClassFunction, u.halfBuffer()), e.halfBits)
		e.b.Emit(spv.OpExtInst, u.void(), uint32(u.clStd), uint32(spv.CLVstoreHalf), uint32(x), uint32(u.i64(0)), uint32(half))
		return e.op(spv.OpLoad, u.intT(16), e.halfBits)
	}
	return e.op(spv.OpBitcast, u.intT(16), x)
}

// dpasBuiltin is the imported built-in multiplying 16-bit inputs of type
// in into f32 at subgroup size sgs, declared once per module.
func (u *unit) dpasBuiltin(in *ir.Type, sgs int) spv.ID {
	bf := in.Kind() == ir.KindBF16
	slot := &u.dpasFns[b2i(bf)][b2i(sgs == 16)]
	if *slot != 0 {
		return *slot
	}
	name := "intel_sub_group_f16_f16_matrix_mad_k16"
	if bf {
		name = "intel_sub_group_bf16_bf16_matrix_mad_k16"
	}
	i32x8, f32x8 := u.vec(u.intT(32), 8), u.vec(u.floatT(32), 8)
	a, args := i32x8, "Dv8_iS_Dv8_f" // (int8, int8, float8): the second int8 is a substitution
	if sgs == 16 {
		a, args = u.vec(u.intT(16), 8), "Dv8_sDv8_iDv8_f" // (short8, int8, float8)
	}
	params := []spv.ID{a, i32x8, f32x8}
	fnType := u.b.Type(spv.OpTypeFunction, uint32(f32x8), uint32(a), uint32(i32x8), uint32(f32x8))
	*slot = u.b.ImportFunction("_Z"+strconv.Itoa(len(name))+name+args, f32x8, fnType, params)
	return *slot
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
