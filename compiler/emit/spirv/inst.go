package spirv

import (
	"fmt"
	"math"

	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// inst writes one instruction.
func (e *fn) inst(in *ir.Inst) error {
	switch in.Op {
	case ir.OpConstant:
		e.constantInst(in)
	case ir.OpArith:
		return e.arithInst(in)
	case ir.OpArithUnary:
		return e.unaryInst(in)
	case ir.OpCmp:
		e.vals.Set(in.Result(), e.cmp(in.Cmp, in.Operands[0].Type, e.value(in.Operands[0]), e.value(in.Operands[1])))
	case ir.OpCast:
		e.castInst(in)
	case ir.OpMath:
		return e.mathInst(in)
	case ir.OpBuiltin:
		e.builtin(in)
	case ir.OpSize:
		e.size(in)
	case ir.OpLoad:
		e.load(in)
	case ir.OpStore:
		m := e.memref(in.Operands[1])
		e.storeElem(m, e.offset(m, e.indices(in.Operands[2:])), e.value(in.Operands[0]), in.Atomic)
	case ir.OpAsyncCopy:
		e.asyncCopy(in)
	case ir.OpAsyncCommit, ir.OpAsyncWait:
	case ir.OpVectorLoad:
		e.vectorLoad(in)
	case ir.OpVectorStore:
		e.vectorStore(in)
	case ir.OpSubview:
		e.subview(in)
	case ir.OpExpand:
		e.expand(in)
	case ir.OpFuse:
		e.fuse(in)
	case ir.OpAlloca:
		e.alloca(in)
	case ir.OpBarrier:
		e.barrier(in.Fence)
	case ir.OpLifetimeStop:
		// Workgroup memory is allocated statically; nothing to release.
	case ir.OpFor:
		return e.forLoop(in)
	case ir.OpIf:
		return e.ifElse(in)
	case ir.OpYield:
		e.yield(in)
	case ir.OpParallel:
		return e.region(in.Body())
	case ir.OpSubgroupBroadcast:
		e.vals.Set(in.Result(), e.broadcast(e.value(in.Operands[0]), in.Result().Type, e.value(in.Operands[1])))
	case ir.OpSubgroupShuffleXor:
		lane := e.op(spv.OpBitwiseXor, e.u.intT(32), e.lane, e.value(in.Operands[1]))
		e.vals.Set(in.Result(), e.broadcast(e.value(in.Operands[0]), in.Result().Type, lane))
	case ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin:
		return e.subgroupOp(in)
	case ir.OpCoopMatrixLoad:
		e.coopLoad(in)
	case ir.OpCoopMatrixStore:
		e.coopStore(in)
	case ir.OpCoopMatrixMulAdd:
		e.coopMulAdd(in)
	case ir.OpCoopMatrixScale:
		e.coopScale(in)
	default:
		if done, err := e.releasedInst(in); done {
			return err
		}
		return fmt.Errorf("spirv: %s must be lowered before emission", in.Mnemonic())
	}
	return nil
}

func (e *fn) indices(vs []*ir.Value) []*dim {
	out := e.dimLists.take(len(vs))
	for i, v := range vs {
		out[i] = e.index(v)
	}
	return out
}

func (e *fn) load(in *ir.Inst) {
	v := in.Operands[0]
	if v.Type.Kind() == ir.KindGroup {
		e.loadGroup(in)
		return
	}
	m := e.memref(v)
	e.vals.Set(in.Result(), e.loadElem(m, e.offset(m, e.indices(in.Operands[1:]))))
}

// barrier is OpControlBarrier over the work-group with sequentially
// consistent semantics on the fenced memories (what barrier() compiles to).
func (e *fn) barrier(f ir.Fence) {
	sem := spv.MemorySemanticsSequentiallyConsistent
	if f&ir.FenceLocal != 0 {
		sem |= spv.MemorySemanticsWorkgroupMemory
	}
	if f&ir.FenceGlobal != 0 {
		sem |= spv.MemorySemanticsCrossWorkgroupMemory
	}
	wg := e.u.i32(int64(spv.ScopeWorkgroup))
	e.b.Emit(spv.OpControlBarrier, 0, uint32(wg), uint32(wg), uint32(e.u.i32(int64(sem))))
}

func (e *fn) constantInst(in *ir.Inst) {
	t := in.Result().Type
	if t.Kind() == ir.KindCoopmatrix {
		c := e.u.constant(in.Const, t.Elem())
		ids := e.idLists.take(e.perLane(in.Result()))
		for i := range ids {
			ids[i] = c
		}
		e.coops[in.Result()] = ids
		return
	}
	e.vals.Set(in.Result(), e.u.constant(in.Const, t))
}

func (e *fn) arithInst(in *ir.Inst) error {
	t := in.Result().Type
	if t.Kind() == ir.KindCoopmatrix {
		op := e.binaryOf(in.Arith, t.Elem())
		return e.coopElementwise(in.Result(), func(x []spv.ID) (spv.ID, error) {
			return e.apply(op, x[0], x[1])
		}, in.Operands[0], in.Operands[1])
	}
	id, err := e.binary(in.Arith, t, e.value(in.Operands[0]), e.value(in.Operands[1]))
	e.vals.Set(in.Result(), id)
	return err
}

// The instructions of the arithmetic operations, in tables indexed by the
// operation: binary runs for every element of unrolled coopmatrix
// arithmetic, where hashing map keys showed in profiles.
var (
	intOps   = tableOf(map[ir.ArithOp]spv.Op{ir.Add: spv.OpIAdd, ir.Sub: spv.OpISub, ir.Mul: spv.OpIMul, ir.Div: spv.OpSDiv, ir.Rem: spv.OpSRem, ir.Shl: spv.OpShiftLeftLogical, ir.Shr: spv.OpShiftRightArithmetic, ir.And: spv.OpBitwiseAnd, ir.Or: spv.OpBitwiseOr, ir.Xor: spv.OpBitwiseXor})
	intExt   = tableOf(map[ir.ArithOp]spv.CLExtInst{ir.Min: spv.CLSMin, ir.Max: spv.CLSMax})
	floatOps = tableOf(map[ir.ArithOp]spv.Op{ir.Add: spv.OpFAdd, ir.Sub: spv.OpFSub, ir.Mul: spv.OpFMul, ir.Div: spv.OpFDiv})
	floatExt = tableOf(map[ir.ArithOp]spv.CLExtInst{ir.Rem: spv.CLFmod, ir.Min: spv.CLFmin, ir.Max: spv.CLFmax})
	boolOps  = tableOf(map[ir.ArithOp]spv.Op{ir.And: spv.OpLogicalAnd, ir.Or: spv.OpLogicalOr, ir.Xor: spv.OpLogicalNotEqual})
)

// opTable is a map from the 256 values of a byte-sized operation to Vs.
type opTable[K ~uint8, V any] struct {
	v  [256]V
	ok [256]bool
}

func tableOf[K ~uint8, V any](m map[K]V) *opTable[K, V] {
	t := &opTable[K, V]{}
	for k, v := range m {
		t.v[k], t.ok[k] = v, true
	}
	return t
}

func (t *opTable[K, V]) get(k K) (V, bool) { return t.v[k], t.ok[k] }

// binary computes x op y for scalar or bool type t.
func (e *fn) binary(op ir.ArithOp, t *ir.Type, x, y spv.ID) (spv.ID, error) {
	rt := e.u.reg(t)
	switch {
	case t.Kind() == ir.KindBool:
		if o, ok := boolOps.get(op); ok {
			return e.op(o, rt, x, y), nil
		}
	case t.IsComplex():
		return e.complexBinary(op, t, x, y)
	case t.IsFloat():
		if o, ok := floatOps.get(op); ok {
			return e.roundTo(e.op(o, rt, x, y), t), nil
		}
		if o, ok := floatExt.get(op); ok {
			return e.roundTo(e.ext(rt, o, x, y), t), nil
		}
	case t.IsInteger():
		if o, ok := intOps.get(op); ok {
			return e.op(o, rt, x, y), nil
		}
		if o, ok := intExt.get(op); ok {
			return e.ext(rt, o, x, y), nil
		}
	}
	return 0, fmt.Errorf("spirv: arith.%s on %s", op, t)
}

// binaryOp is binary for one operation on one type, worked out once for
// a loop over a coopmatrix's elements: an operation that is a single
// instruction without rounding (f32 and integer arithmetic, as nearly
// always) is written straight, every other through binary. Working out
// the type and the instruction for every element of an unrolled product
// cost as much as writing it.
type binaryOp struct {
	arith ir.ArithOp
	t     *ir.Type
	op    spv.Op // 0: through binary
	rt    spv.ID
}

func (e *fn) binaryOf(op ir.ArithOp, t *ir.Type) binaryOp {
	b := binaryOp{arith: op, t: t}
	plain := t.IsInteger() && !t.IsComplex()
	table := intOps
	if t.IsFloat() && !t.IsComplex() && e.roundsNot(t) {
		plain, table = true, floatOps
	}
	if o, ok := table.get(op); ok && plain {
		b.op, b.rt = o, e.u.reg(t)
	}
	return b
}

// roundsNot reports whether roundTo leaves values of t as they are.
func (e *fn) roundsNot(t *ir.Type) bool { return !e.u.halfway(t) && t.Kind() != ir.KindBF16 }

// apply computes x op y as binary does.
func (e *fn) apply(b binaryOp, x, y spv.ID) (spv.ID, error) {
	if b.op != 0 {
		return e.op(b.op, b.rt, x, y), nil
	}
	return e.binary(b.arith, b.t, x, y)
}

// complexBinary computes on 2-vectors (real, imaginary).
func (e *fn) complexBinary(op ir.ArithOp, t *ir.Type, x, y spv.ID) (spv.ID, error) {
	rt, ct := e.u.reg(t), e.u.reg(t.ComponentType())
	switch op {
	case ir.Add:
		return e.op(spv.OpFAdd, rt, x, y), nil
	case ir.Sub:
		return e.op(spv.OpFSub, rt, x, y), nil
	case ir.Mul, ir.Div:
		a, b := e.extract(ct, x, 0), e.extract(ct, x, 1)
		c, d := e.extract(ct, y, 0), e.extract(ct, y, 1)
		mul := func(p, q spv.ID) spv.ID { return e.op(spv.OpFMul, ct, p, q) }
		if op == ir.Mul { // (ac - bd, ad + bc)
			return e.complex(rt,
				e.op(spv.OpFSub, ct, mul(a, c), mul(b, d)), e.op(spv.OpFAdd, ct, mul(a, d), mul(b, c))), nil
		}
		// ((ac + bd) / (c² + d²), (bc - ad) / (c² + d²))
		den := e.op(spv.OpFAdd, ct, mul(c, c), mul(d, d))
		re := e.op(spv.OpFDiv, ct, e.op(spv.OpFAdd, ct, mul(a, c), mul(b, d)), den)
		im := e.op(spv.OpFDiv, ct, e.op(spv.OpFSub, ct, mul(b, c), mul(a, d)), den)
		return e.complex(rt, re, im), nil
	}
	return 0, fmt.Errorf("spirv: arith.%s on %s", op, t)
}

func (e *fn) unaryInst(in *ir.Inst) error {
	src := in.Operands[0].Type
	if src.Kind() == ir.KindCoopmatrix {
		return e.coopElementwise(in.Result(), func(x []spv.ID) (spv.ID, error) {
			return e.unary(in.Unary, src.Elem(), x[0])
		}, in.Operands[0])
	}
	id, err := e.unary(in.Unary, src, e.value(in.Operands[0]))
	e.vals.Set(in.Result(), id)
	return err
}

func (e *fn) unary(op ir.UnaryOp, t *ir.Type, x spv.ID) (spv.ID, error) {
	rt := e.u.reg(t)
	complexParts := func() (spv.ID, spv.ID, spv.ID) {
		ct := e.u.reg(t.ComponentType())
		return ct, e.extract(ct, x, 0), e.extract(ct, x, 1)
	}
	switch {
	case op == ir.Abs && t.IsComplex():
		ct, re, im := complexParts()
		return e.ext(ct, spv.CLHypot, re, im), nil
	case op == ir.Abs && t.IsFloat():
		return e.ext(rt, spv.CLFabs, x), nil
	case op == ir.Abs && t.IsInteger():
		return e.ext(rt, spv.CLSAbs, x), nil
	case op == ir.Neg && (t.IsFloat() || t.IsComplex()):
		return e.op(spv.OpFNegate, rt, x), nil
	case op == ir.Neg && t.IsInteger():
		return e.op(spv.OpSNegate, rt, x), nil
	case op == ir.Not && t.Kind() == ir.KindBool:
		return e.op(spv.OpLogicalNot, rt, x), nil
	case op == ir.Not && t.IsInteger():
		return e.op(spv.OpNot, rt, x), nil
	case op == ir.Conj && t.IsComplex():
		ct, re, im := complexParts()
		return e.complex(rt, re, e.op(spv.OpFNegate, ct, im)), nil
	case op == ir.Re && t.IsComplex():
		_, re, _ := complexParts()
		return re, nil
	case op == ir.Im && t.IsComplex():
		_, _, im := complexParts()
		return im, nil
	}
	return 0, fmt.Errorf("spirv: arith.%s on %s", op, t)
}

var (
	intCmp   = map[ir.CmpOp]spv.Op{ir.Eq: spv.OpIEqual, ir.Ne: spv.OpINotEqual, ir.Gt: spv.OpSGreaterThan, ir.Ge: spv.OpSGreaterThanEqual, ir.Lt: spv.OpSLessThan, ir.Le: spv.OpSLessThanEqual}
	floatCmp = map[ir.CmpOp]spv.Op{ir.Eq: spv.OpFOrdEqual, ir.Ne: spv.OpFUnordNotEqual, ir.Gt: spv.OpFOrdGreaterThan, ir.Ge: spv.OpFOrdGreaterThanEqual, ir.Lt: spv.OpFOrdLessThan, ir.Le: spv.OpFOrdLessThanEqual}
	boolCmp  = map[ir.CmpOp]spv.Op{ir.Eq: spv.OpLogicalEqual, ir.Ne: spv.OpLogicalNotEqual}
)

// cmp compares x and y of type t as C does (!= is true for NaN).
func (e *fn) cmp(op ir.CmpOp, t *ir.Type, x, y spv.ID) spv.ID {
	b := e.u.boolT()
	switch {
	case t.Kind() == ir.KindBool:
		return e.op(boolCmp[op], b, x, y)
	case t.IsComplex():
		bv := e.u.vec(b, 2)
		if op == ir.Eq {
			return e.op(spv.OpAll, b, e.op(spv.OpFOrdEqual, bv, x, y))
		}
		return e.op(spv.OpAny, b, e.op(spv.OpFUnordNotEqual, bv, x, y))
	case t.IsFloat():
		return e.op(floatCmp[op], b, x, y)
	}
	return e.op(intCmp[op], b, x, y)
}

func (e *fn) castInst(in *ir.Inst) {
	from, to := in.Operands[0].Type, in.Result().Type
	if to.Kind() == ir.KindCoopmatrix {
		// The element conversion cannot fail: the verifier admits the cast.
		_ = e.coopElementwise(in.Result(), func(x []spv.ID) (spv.ID, error) {
			return e.convert(x[0], from.Elem(), to.Elem()), nil
		}, in.Operands[0])
		return
	}
	e.vals.Set(in.Result(), e.convert(e.value(in.Operands[0]), from, to))
}

// convert converts register value x of scalar type from to scalar type to.
func (e *fn) convert(x spv.ID, from, to *ir.Type) spv.ID {
	if from == to {
		return x
	}
	u := e.u
	rt := u.reg(to)
	switch {
	case to.IsComplex() && from.IsComplex():
		return e.sameOrConvert(spv.OpFConvert, rt, x, from.ComponentType(), to.ComponentType())
	case to.IsComplex():
		ct := to.ComponentType()
		return e.complex(rt, e.convert(x, from, ct), u.zero(ct))
	case from.IsInteger() && to.IsInteger():
		return e.convertInt(x, from.Bits(), to.Bits())
	case from.IsInteger():
		return e.roundTo(e.op(spv.OpConvertSToF, rt, x), to)
	case to.IsInteger():
		return e.op(spv.OpConvertFToS, rt, x)
	}
	return e.roundTo(e.sameOrConvert(spv.OpFConvert, rt, x, from, to), to)
}

// sameOrConvert applies op unless from and to share a register type (f16
// computed in f32 and f32, say).
func (e *fn) sameOrConvert(op spv.Op, rt, x spv.ID, from, to *ir.Type) spv.ID {
	if e.u.reg(from) == e.u.reg(to) {
		return x
	}
	return e.op(op, rt, x)
}

// roundTo rounds an f32 register value to the precision of t when t is f16
// or bf16 computed in f32, so results match a native implementation.
func (e *fn) roundTo(x spv.ID, t *ir.Type) spv.ID {
	u := e.u
	switch {
	case u.halfway(t):
		return e.roundHalf(x)
	case t.Kind() == ir.KindBF16:
		bits := e.op(spv.OpUConvert, u.intT(32), e.bf16Bits(x))
		return e.op(spv.OpBitcast, u.floatT(32), e.op(spv.OpShiftLeftLogical, u.intT(32), bits, u.i32(16)))
	}
	return x
}

// mathExt are the OpenCL.std instructions of the math functions, accurate
// and native.
var mathExt = map[ir.MathOp][2]spv.CLExtInst{
	ir.Exp: {spv.CLExp, spv.CLNativeExp}, ir.Exp2: {spv.CLExp2, spv.CLNativeExp2},
	ir.Cos: {spv.CLCos, spv.CLNativeCos}, ir.Sin: {spv.CLSin, spv.CLNativeSin},
	ir.Log: {spv.CLLog, spv.CLNativeLog}, ir.Log2: {spv.CLLog2, spv.CLNativeLog2},
}

// mathInst computes math functions as the OpenCL C back end does: native_
// ones only on f32, complex exponentials from exp, cos and sin of the
// parts (2^z = e^(z ln 2)).
func (e *fn) mathInst(in *ir.Inst) error {
	t := in.Result().Type
	x := e.value(in.Operands[0])
	rt := e.u.reg(t)
	op, native := in.Math.Native()
	switch {
	case t.IsComplex(): // exp(a + bi) = exp(a) (cos b + i sin b)
		ct := e.u.reg(t.ComponentType())
		re, im := e.extract(ct, x, 0), e.extract(ct, x, 1)
		if op == ir.Exp2 {
			ln2 := e.u.constant(ir.Constant{Kind: ir.ConstFloat, Float: math.Ln2}, t.ComponentType())
			re, im = e.op(spv.OpFMul, ct, re, ln2), e.op(spv.OpFMul, ct, im, ln2)
		}
		r := e.ext(ct, spv.CLExp, re)
		e.vals.Set(in.Result(), e.complex(rt,
			e.op(spv.OpFMul, ct, r, e.ext(ct, spv.CLCos, im)), e.op(spv.OpFMul, ct, r, e.ext(ct, spv.CLSin, im))))
	case !t.IsFloat():
		return fmt.Errorf("spirv: math on %s", t)
	case native && rt == e.u.floatT(32):
		e.vals.Set(in.Result(), e.roundTo(e.ext(rt, mathExt[op][1], x), t))
	default:
		e.vals.Set(in.Result(), e.roundTo(e.ext(rt, mathExt[op][0], x), t))
	}
	return nil
}

func (e *fn) builtin(in *ir.Inst) {
	u, l := e.u, e.launch
	nsx := int64(l.WorkGroupSize[0] / l.SubgroupSize)
	var id spv.ID
	bits := 32
	switch in.Builtin {
	case ir.GroupID:
		id, bits = e.gid, 64
	case ir.GroupSize:
		id, bits = e.numGroups, 64
	case ir.GroupIDY, ir.GroupIDZ:
		if in.Builtin == ir.GroupIDY && e.part != 0 {
			id, bits = e.part, 64 // splitGroups
			break
		}
		id, bits = e.extract(u.intT(64), e.loadBuiltin(spv.BuiltInWorkgroupId), uint32(1+in.Builtin-ir.GroupIDY)), 64
	case ir.GroupSizeY, ir.GroupSizeZ:
		id, bits = e.extract(u.intT(64), e.loadBuiltin(spv.BuiltInNumWorkgroups), uint32(1+in.Builtin-ir.GroupSizeY)), 64
	case ir.NumSubgroups:
		id = u.i32(nsx * int64(l.WorkGroupSize[1]))
	case ir.NumSubgroupsX:
		id = u.i32(nsx)
	case ir.NumSubgroupsY:
		id = u.i32(int64(l.WorkGroupSize[1]))
	case ir.NumSubgroupsZ:
		id = u.i32(1)
	case ir.SubgroupIDZ:
		id = u.i32(0)
	case ir.SubgroupSize:
		id = u.i32(int64(l.SubgroupSize))
	case ir.SubgroupID:
		id = e.sgid
	case ir.SubgroupIDX:
		id = e.op(spv.OpUMod, u.intT(32), e.sgid, u.i32(nsx))
	case ir.SubgroupIDY:
		id = e.op(spv.OpUDiv, u.intT(32), e.sgid, u.i32(nsx))
	case ir.SubgroupLocalID:
		id = e.lane
	}
	e.vals.Set(in.Result(), e.convertInt(id, bits, in.Result().Type.Bits()))
}

// complex builds the 2-vector (re, im) of type t. It inserts into an undef
// vector rather than using OpCompositeConstruct, which llvm-spirv 15 only
// reads back correctly when every constituent is a constant (it crashes
// otherwise).
func (e *fn) complex(t, re, im spv.ID) spv.ID { return e.compose(t, re, im) }

// compose builds the vector of type t whose components are parts, by
// insertion (see complex).
func (e *fn) compose(t spv.ID, parts ...spv.ID) spv.ID {
	v := e.b.Constant(spv.OpUndef, t)
	for i, x := range parts {
		v = e.b.Emit(spv.OpCompositeInsert, t, uint32(x), uint32(v), uint32(i))
	}
	return v
}

// roundHalf rounds f32 x to half precision through the module's helper
// function: inlined at every f16 operation it made GEMM kernels big enough
// for PoCL to spend a minute compiling them.
func (e *fn) roundHalf(x spv.ID) spv.ID {
	u := e.u
	if u.roundHalfFn == 0 {
		u.roundHalfFn = u.b.NewID()
	}
	return e.op(spv.OpFunctionCall, u.floatT(32), u.roundHalfFn, x)
}

// defineHelpers writes the helper functions the kernels call.
func (u *unit) defineHelpers() {
	if u.roundHalfFn == 0 {
		return
	}
	f32 := u.floatT(32)
	e := &fn{u: u, b: u.b, block: u.b.NewID()}
	params := u.b.BeginFunction(u.roundHalfFn, f32, u.b.Type(spv.OpTypeFunction, uint32(f32), uint32(f32)), []spv.ID{f32}, e.block)
	u.b.Name(u.roundHalfFn, "tl_round_half")
	u.b.Emit(spv.OpReturnValue, 0, uint32(e.roundHalfInline(params[0])))
	u.b.EndFunction()
}

// roundHalfInline rounds f32 x to the nearest value of IEEE half precision
// (ties to even), staying in f32 registers: no Float16 capability.
//
//	NaN              x itself
//	|x| >= 65520     ±infinity (65520 is the tie between 65504 and 2^16)
//	|x| < 2^-14      a multiple of 2^-24, the subnormal spacing: rint(x·2^24)·2^-24
//	otherwise        the mantissa rounded to 10 bits on the bit pattern
func (e *fn) roundHalfInline(x spv.ID) spv.ID {
	u := e.u
	f32, i32, b := u.floatT(32), u.intT(32), u.boolT()
	c := func(v float32) spv.ID { return u.b.Constant(spv.OpConstant, f32, math.Float32bits(v)) }
	bits := e.op(spv.OpBitcast, i32, x)
	odd := e.op(spv.OpBitwiseAnd, i32, e.op(spv.OpShiftRightLogical, i32, bits, u.i32(13)), u.i32(1))
	up := e.op(spv.OpIAdd, i32, e.op(spv.OpIAdd, i32, bits, u.i32(0x0fff)), odd)
	normal := e.op(spv.OpBitcast, f32, e.op(spv.OpBitwiseAnd, i32, up, u.i32(^0x1fff)))
	sub := e.op(spv.OpFMul, f32, e.ext(f32, spv.CLRint, e.op(spv.OpFMul, f32, x, c(1<<24))), c(1.0/(1<<24)))
	abs := e.ext(f32, spv.CLFabs, x)
	r := e.op(spv.OpSelect, f32, e.op(spv.OpFOrdLessThan, b, abs, c(1.0/(1<<14))), sub, normal)
	inf := e.ext(f32, spv.CLCopysign, c(float32(math.Inf(1))), x)
	r = e.op(spv.OpSelect, f32, e.op(spv.OpFOrdGreaterThanEqual, b, abs, c(65520)), inf, r)
	return e.op(spv.OpSelect, f32, e.op(spv.OpIsNan, b, x), x, r)
}
