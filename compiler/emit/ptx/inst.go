package ptx

import (
	"math"

	"tltune/compiler/ir"
	"tltune/compiler/numeric"
)

// region writes the instructions of r.
func (e *fn) region(r *ir.Region) error {
	for _, in := range r.Insts {
		if e.done[in] { // written with the head of its group (rows.go)
			delete(e.done, in)
			continue
		}
		if err := e.inst(in); err != nil {
			return err
		}
	}
	return nil
}

// inst writes one instruction.
func (e *fn) inst(in *ir.Inst) error {
	switch in.Op {
	case ir.OpConstant:
		return e.constant(in)
	case ir.OpArith:
		return e.arith(in)
	case ir.OpArithUnary:
		return e.unary(in)
	case ir.OpCmp:
		return e.cmp(in)
	case ir.OpCast:
		return e.cast(in)
	case ir.OpBuiltin:
		return e.builtin(in)
	case ir.OpSize:
		e.size(in)
	case ir.OpLoad:
		return e.load(in)
	case ir.OpStore:
		return e.store(in)
	case ir.OpVectorLoad:
		return e.vectorLoad(in)
	case ir.OpVectorStore:
		return e.vectorStore(in)
	case ir.OpSubview:
		e.subview(in)
	case ir.OpLifetimeStop:
	case ir.OpFor:
		return e.forLoop(in)
	case ir.OpIf:
		return e.ifElse(in)
	case ir.OpYield:
		e.yield(in)
	case ir.OpParallel:
		return e.region(in.Body())
	case ir.OpSubgroupBroadcast:
		e.vals.Set(in.Result(), e.shuffle(e.value(in.Operands[0]), e.intAs(in.Operands[1], 32)))
	case ir.OpAlloca:
		e.alloca(in)
	case ir.OpBarrier:
		e.barrier(in)
	case ir.OpAsyncCopy:
		return e.asyncCopy(in)
	case ir.OpAsyncCommit:
		e.op("cp.async.commit_group")
	case ir.OpAsyncWait:
		e.op("cp.async.wait_group", i64toa(in.Count))
	case ir.OpCoopMatrixLoad:
		e.coopLoad(in)
	case ir.OpCoopMatrixStore:
		e.coopStore(in)
	case ir.OpCoopMatrixMulAdd:
		e.coopMulAdd(in)
	case ir.OpCoopMatrixScale:
		e.coopScale(in)
	case ir.OpSubgroupShuffleXor:
		lane := e.pure(b32, "xor.b32", e.lane, e.intAs(in.Operands[1], 32))
		e.vals.Set(in.Result(), e.shuffle(e.value(in.Operands[0]), lane))
	default:
		return unsupported("%s", in.Mnemonic())
	}
	return nil
}

// constant makes integers immediates and floats registers (PTX has no
// f16 immediates, and one register per constant costs ptxas nothing).
func (e *fn) constant(in *ir.Inst) error {
	r := in.Result()
	if isCoop(r) {
		return e.coopConstant(in)
	}
	t := r.Type
	c, cplx := e.classOfValue(r)
	k := in.Const
	switch {
	case k.Kind == ir.ConstInt && t.IsInteger():
		e.vals.Set(r, one(c, i64toa(k.Int)))
		return nil
	case k.Kind == ir.ConstBool:
		return unsupported("bool constants")
	case k.Kind == ir.ConstInt:
		k = ir.Constant{Kind: ir.ConstFloat, Float: float64(k.Int)}
	}
	re := e.def(c, movOf(c), floatBits(k.Float, t.ComponentType()))
	if cplx {
		e.vals.Set(r, two(c, re, e.def(c, movOf(c), floatBits(k.Imag, t.ComponentType()))))
	} else {
		e.vals.Set(r, one(c, re))
	}
	return nil
}

// floatBits spells x in the bits of real type t as a PTX literal.
func floatBits(x float64, t *ir.Type) string {
	switch t.Kind() {
	case ir.KindF16:
		return hexBits("0x", uint64(numeric.F16Bits(x)), 4)
	case ir.KindBF16:
		return hexBits("0x", uint64(numeric.BF16Bits(x)), 4)
	case ir.KindF32:
		return hexBits("0f", uint64(math.Float32bits(float32(x))), 8)
	}
	return hexBits("0d", math.Float64bits(x), 16)
}

// hexBits is prefix and bits in digits upper-case hexadecimal digits
// (fmt's %0NX, without fmt).
func hexBits(prefix string, bits uint64, digits int) string {
	var b [2 + 16]byte
	n := copy(b[:], prefix)
	for i := digits - 1; i >= 0; i-- {
		b[n+i] = "0123456789ABCDEF"[bits&15]
		bits >>= 4
	}
	return string(b[:n+digits])
}

// intOps are the PTX integer instructions of the arithmetic operations,
// their type appended (s32, s64).
var intOps = [...]string{
	ir.Add: "add.", ir.Sub: "sub.", ir.Mul: "mul.lo.", ir.Div: "div.", ir.Rem: "rem.",
	ir.Min: "min.", ir.Max: "max.", ir.Shl: "shl.b", ir.Shr: "shr.", ir.And: "and.b", ir.Or: "or.b", ir.Xor: "xor.b",
}

// arith writes a binary arithmetic instruction.
func (e *fn) arith(in *ir.Inst) error {
	r := in.Result()
	t := r.Type
	if isCoop(r) {
		return e.coopArith(in)
	}
	if t.IsInteger() {
		err := e.intArith(in) // before value, which adds up affine operands
		e.learnArith(in)
		return err
	}
	if x, ok := e.foldBool(in); ok {
		e.vals.Set(r, x)
		return nil
	}
	a, b := e.value(in.Operands[0]), e.value(in.Operands[1])
	switch {
	case t.Kind() == ir.KindBool:
		op := map[ir.ArithOp]string{ir.And: "and.pred", ir.Or: "or.pred", ir.Xor: "xor.pred"}[in.Arith]
		if op == "" {
			return unsupported("arith.%s on bool", in.Arith)
		}
		e.vals.Set(r, one(pred, e.def(pred, op, a.x(), b.x())))
	case t.IsComplex():
		return e.complexArith(in, a, b)
	default:
		op, err := floatOp(in.Arith, t)
		if err != nil {
			return err
		}
		e.vals.Set(r, one(a.cls, e.def(a.cls, op, a.x(), b.x())))
	}
	return nil
}

// floatOp is the PTX instruction of x op y on real type t. f32 and f64
// sums and products carry no rounding mode, so that ptxas may contract
// them into FMAs as NVVM contracts the OpenCL C's; f16 and bf16 ones
// round (.rn), which keeps them apart, as the C rounds each to its type.
func floatOp(op ir.ArithOp, t *ir.Type) (string, error) {
	if k := int(t.Kind()); int(op) < len(floatOpcodes) && k < len(floatOpcodes[op]) && floatOpcodes[op][k] != "" {
		return floatOpcodes[op][k], nil
	}
	return spellFloatOp(op, t)
}

// floatOpcodes are floatOp's instructions by operation and kind, spelled
// once ("" where there is none).
var floatOpcodes = func() (ops [len(intOps)][len(typeNames)]string) {
	for op := range ops {
		for _, t := range []*ir.Type{ir.F16, ir.BF16, ir.F32, ir.F64} {
			ops[op][t.Kind()], _ = spellFloatOp(ir.ArithOp(op), t)
		}
	}
	return ops
}()

// spellFloatOp is floatOp spelled.
func spellFloatOp(op ir.ArithOp, t *ir.Type) (string, error) {
	suffix := typeNames[t.Kind()]
	half := t.Kind() == ir.KindF16 || t.Kind() == ir.KindBF16
	switch {
	case !t.IsFloat():
	case half && (op == ir.Add || op == ir.Sub || op == ir.Mul):
		return [...]string{ir.Add: "add.rn.", ir.Sub: "sub.rn.", ir.Mul: "mul.rn."}[op] + suffix, nil
	case half:
	case op == ir.Add || op == ir.Sub || op == ir.Mul:
		return [...]string{ir.Add: "add.", ir.Sub: "sub.", ir.Mul: "mul."}[op] + suffix, nil
	case op == ir.Div:
		return "div.rn." + suffix, nil
	case op == ir.Min || op == ir.Max:
		return [...]string{ir.Min: "min.", ir.Max: "max."}[op] + suffix, nil
	}
	return "", unsupported("arith.%s on %s", op, t)
}

// complexArith writes complex sums, differences and products, the latter
// as the OpenCL C writer's tl_cmul helper computes them.
func (e *fn) complexArith(in *ir.Inst, a, b val) error {
	c := a.cls
	suffix := "f32"
	if c == f64 {
		suffix = "f64"
	}
	switch in.Arith {
	case ir.Add, ir.Sub:
		op := map[ir.ArithOp]string{ir.Add: "add.", ir.Sub: "sub."}[in.Arith] + suffix
		e.vals.Set(in.Result(), two(c, e.def(c, op, a.parts[0], b.parts[0]), e.def(c, op, a.parts[1], b.parts[1])))
	case ir.Mul:
		mul, add, sub := "mul."+suffix, "add."+suffix, "sub."+suffix
		re := e.def(c, sub, e.def(c, mul, a.parts[0], b.parts[0]), e.def(c, mul, a.parts[1], b.parts[1]))
		im := e.def(c, add, e.def(c, mul, a.parts[0], b.parts[1]), e.def(c, mul, a.parts[1], b.parts[0]))
		e.vals.Set(in.Result(), two(c, re, im))
	default:
		return unsupported("arith.%s on %s", in.Arith, in.Result().Type)
	}
	return nil
}

// intArith writes integer arithmetic: in 32 bits where the result and
// both operands are held in 32 bits (the OpenCL C's int arithmetic), else
// in 64 with the 32-bit operands widened and the result truncated where
// it is narrow. Two immediates fold.
func (e *fn) intArith(in *ir.Inst) error {
	r := in.Result()
	if int(in.Arith) >= len(intOps) || intOps[in.Arith] == "" {
		return unsupported("arith.%s on %s", in.Arith, r.Type)
	}
	a, b := in.Operands[0], in.Operands[1]
	w := max(e.width(r), e.width(a), e.width(b))
	if w == e.width(r) && r.Type == ir.Index {
		if s, ok := e.affineArith(in.Arith, e.affineOf(a, w), e.affineOf(b, w), w); ok {
			e.vals.Set(r, affineVal(s))
			return nil
		}
	}
	x, y := e.intAs(a, w), e.intAs(b, w)
	if v, ok := foldInt(in.Arith, x, y); ok {
		e.vals.Set(r, one(widthClass(e.width(r)), i64toa(v)))
		return nil
	}
	x, y = e.immSecond(in.Arith, x, y, w)
	res, ok := identity(in.Arith, x, y)
	if !ok {
		res, ok = e.divideByImm(in, x, y, w)
	}
	if !ok {
		res = e.pure(widthClass(w), intOpcodes[in.Arith][e.unsignedIndex(in)].of(w), x, y)
	}
	e.vals.Set(r, one(widthClass(e.width(r)), e.resize(res, w, e.width(r))))
	return nil
}

// identity is x op y where the immediate y makes it x or 0 (the
// lowerings' index arithmetic multiplies by 1 and adds 0 a lot).
func identity(op ir.ArithOp, x, y string) (string, bool) {
	switch {
	case y == "0" && (op == ir.Add || op == ir.Sub || op == ir.Or || op == ir.Xor || op == ir.Shl || op == ir.Shr):
		return x, true
	case y == "1" && (op == ir.Mul || op == ir.Div):
		return x, true
	case y == "1" && op == ir.Rem, y == "0" && (op == ir.Mul || op == ir.And):
		return "0", true
	}
	return "", false
}

// immSecond returns x op y's operands with no immediate first, as NVVM
// writes them: commuted where op commutes, else the immediate in a
// register.
func (e *fn) immSecond(op ir.ArithOp, x, y string, w int) (string, string) {
	if !isImm(x) {
		return x, y
	}
	switch op {
	case ir.Add, ir.Mul, ir.Min, ir.Max, ir.And, ir.Or, ir.Xor:
		return y, x
	}
	return e.pure(widthClass(w), movOf(widthClass(w)), x), y
}

// intSuffix is the type suffix of integer operation op on w bits: bit
// operations name the size alone (intOps ends them with "b").
func intSuffix(op ir.ArithOp, w int) string {
	switch op {
	case ir.Shl, ir.And, ir.Or, ir.Xor:
		return itoa(w)
	}
	return widthSuffix(w)
}

// unsignedDivision reports whether in is a division or remainder whose
// ranges show both operands non-negative (a lane's or a tile's index), so
// that it may be unsigned: a signed one pays its sign corrections, and
// only an unsigned one by a constant is a shift, a mask or a
// multiply-high (divideByImm).
func (e *fn) unsignedDivision(in *ir.Inst) bool {
	return (in.Arith == ir.Div || in.Arith == ir.Rem) &&
		e.known(in.Operands[0]).Lo >= 0 && e.known(in.Operands[1]).Lo > 0
}

// unsignedIndex is 1 where unsignedDivision allows instruction in to be
// unsigned, else 0: the index of its opcode in intOpcodes.
func (e *fn) unsignedIndex(in *ir.Inst) int { return b2i(e.unsignedDivision(in)) }

// intOpcodes are the integer instructions of the arithmetic operations,
// intOps with intSuffix, signed and unsigned (divisions), spelled once.
var intOpcodes = func() (ops [len(intOps)][2]byWidth) {
	for op, name := range intOps {
		if name == "" {
			continue
		}
		for i, w := range []int{32, 64} {
			ops[op][0][i] = name + intSuffix(ir.ArithOp(op), w)
			ops[op][1][i] = name + "u" + itoa(w)
		}
	}
	return ops
}()

// divideByImm writes x / y or x mod y where the division is unsigned
// (unsignedDivision) and y an immediate, by udivImm and uremImm.
func (e *fn) divideByImm(in *ir.Inst, x, y string, w int) (string, bool) {
	d, ok := immOf(y)
	if !ok || d <= 0 || !e.unsignedDivision(in) {
		return "", false
	}
	if in.Arith == ir.Div {
		return e.udivImm(w, x, uint64(d)), true
	}
	return e.uremImm(w, x, uint64(d)), true
}

// foldInt computes x op y when both are immediates (C folds them too),
// except where C would trap or shift out of range.
func foldInt(op ir.ArithOp, x, y string) (int64, bool) {
	a, okA := immOf(x)
	b, okB := immOf(y)
	if !okA || !okB {
		return 0, false
	}
	switch op {
	case ir.Add:
		return a + b, true
	case ir.Sub:
		return a - b, true
	case ir.Mul:
		return a * b, true
	case ir.Div:
		return a / b, b != 0
	case ir.Rem:
		return a % b, b != 0
	case ir.Min:
		return min(a, b), true
	case ir.Max:
		return max(a, b), true
	}
	return 0, false
}

// unary writes negation and absolute value of reals and integers and the
// parts and conjugate of complex values.
func (e *fn) unary(in *ir.Inst) error {
	r, x := in.Result(), e.value(in.Operands[0])
	t := in.Operands[0].Type
	switch {
	case t.IsComplex() && (in.Unary == ir.Re || in.Unary == ir.Im):
		e.vals.Set(r, one(x.cls, x.parts[b2i(in.Unary == ir.Im)]))
	case t.IsComplex() && in.Unary == ir.Conj:
		e.vals.Set(r, two(x.cls, x.parts[0], e.def(x.cls, "neg."+typeName(t.ComponentType()), x.parts[1])))
	case !t.IsComplex() && (in.Unary == ir.Neg || in.Unary == ir.Abs) && t.Kind() != ir.KindBool:
		op := map[ir.UnaryOp]string{ir.Neg: "neg.", ir.Abs: "abs."}[in.Unary]
		e.vals.Set(r, one(x.cls, e.def(x.cls, op+typeName(t), x.x())))
	default:
		return unsupported("arith.%s on %s", in.Unary, t)
	}
	return nil
}

// typeNames are the PTX arithmetic types of the scalar types.
var typeNames = [ir.KindCoopmatrix + 1]string{ir.KindF16: "f16", ir.KindBF16: "bf16", ir.KindF32: "f32", ir.KindF64: "f64",
	ir.KindI32: "s32", ir.KindI64: "s64", ir.KindIndex: "s64"}

// typeName is the PTX arithmetic type of scalar t.
func typeName(t *ir.Type) string {
	if k := int(t.Kind()); k < len(typeNames) && typeNames[k] != "" {
		n := typeNames[k]
		return n
	}
	panic(unsupported("arithmetic on %s", t))
}

// cmpOps are setp's comparisons; floats' != is unordered (true on NaN,
// as C's), the others ordered.
var cmpOps = [...]string{ir.Eq: "eq", ir.Ne: "ne", ir.Gt: "gt", ir.Ge: "ge", ir.Lt: "lt", ir.Le: "le"}

// setpInts are setp's signed integer comparisons, spelled once.
var setpInts = func() (ops [len(cmpOps)]byWidth) {
	for c, name := range cmpOps {
		ops[c] = byWidth{"setp." + name + ".s32", "setp." + name + ".s64"}
	}
	return ops
}()

func (e *fn) cmp(in *ir.Inst) error {
	a, b := in.Operands[0], in.Operands[1]
	t := a.Type
	op := cmpOps[in.Cmp]
	var x, y, typ string
	switch {
	case t.IsInteger():
		if outcome, ok := decide(in.Cmp, e.known(a), e.known(b)); ok {
			e.vals.Set(in.Result(), predImm(outcome))
			return nil
		}
		w := max(e.width(a), e.width(b))
		x, y = e.intAs(a, w), e.intAs(b, w)
		if isImm(x) {
			x = e.pure(widthClass(w), movOf(widthClass(w)), x)
		}
		e.vals.Set(in.Result(), one(pred, e.pure(pred, setpInts[in.Cmp].of(w), x, y)))
		return nil
	case t.IsFloat():
		x, y, typ = e.value(a).x(), e.value(b).x(), typeName(t)
		if in.Cmp == ir.Ne {
			op = "neu"
		}
	default:
		return unsupported("cmp.%s on %s", in.Cmp, t)
	}
	e.vals.Set(in.Result(), one(pred, e.def(pred, "setp."+op+"."+typ, x, y)))
	return nil
}

// builtin writes the builtins from the prologue's values, as the OpenCL C
// writer's builtin does.
func (e *fn) builtin(in *ir.Inst) error {
	l := e.l
	nsx := l.WorkGroupSize[0] / l.SubgroupSize
	x, w := "", 64
	switch in.Builtin {
	case ir.GroupID:
		x = e.gid
	case ir.GroupSize:
		x = e.groups
	case ir.GroupIDY:
		x = e.part
		if l.Split <= 1 {
			x = e.long(e.groupID(1))
		}
	case ir.GroupSizeY:
		x = e.long(e.numGroups(1))
	case ir.NumSubgroups:
		x = itoa(nsx * l.WorkGroupSize[1])
	case ir.NumSubgroupsX:
		x = itoa(nsx)
	case ir.NumSubgroupsY:
		x = itoa(l.WorkGroupSize[1])
	case ir.NumSubgroupsZ:
		x = "1"
	case ir.SubgroupIDZ:
		x = "0"
	case ir.SubgroupSize:
		x = itoa(l.SubgroupSize)
	case ir.SubgroupID:
		x, w = e.sgid, 32
	case ir.SubgroupIDX:
		x, w = e.uremImm(32, e.sgid, uint64(nsx)), 32
	case ir.SubgroupIDY:
		x, w = e.udivImm(32, e.sgid, uint64(nsx)), 32
	case ir.SubgroupLocalID:
		x, w = e.lane, 32
	default:
		return unsupported("builtin.%s", in.Builtin)
	}
	r := in.Result()
	if !r.Type.IsInteger() {
		return unsupported("builtin.%s of type %s", in.Builtin, r.Type)
	}
	e.vals.Set(r, one(widthClass(e.width(r)), e.resize(x, w, e.width(r))))
	return nil
}

// size is a shape entry of a memref: an immediate or a 64-bit argument.
func (e *fn) size(in *ir.Inst) {
	r := in.Result()
	x := e.mem(in.Operands[0]).shape[in.Mode]
	e.vals.Set(r, one(widthClass(e.width(r)), e.resize(x, 64, e.width(r))))
}
