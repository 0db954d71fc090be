package opencl

import (
	"fmt"
	"math"
	"strconv"

	"tltune/compiler/ir"
)

// inst writes one instruction.
func (e *fn) inst(in *ir.Inst) error {
	switch in.Op {
	case ir.OpConstant:
		e.constant(in)
	case ir.OpArith:
		return e.arith(in)
	case ir.OpArithUnary:
		return e.unary(in)
	case ir.OpCmp:
		e.cmp(in)
	case ir.OpCast:
		return e.cast(in)
	case ir.OpMath:
		e.math(in)
	case ir.OpBuiltin:
		e.builtin(in)
	case ir.OpSize:
		e.size(in)
	case ir.OpLoad:
		e.load(in)
	case ir.OpStore:
		m := e.memref(in.Operands[1])
		return e.storeElem(m, e.offsetOf(in.Operands[1], in.Operands[2:]), e.value(in.Operands[0]), in.Atomic)
	case ir.OpVectorLoad:
		e.vectorLoad(in)
	case ir.OpVectorStore:
		e.vectorStore(in)
	case ir.OpAsyncCopy:
		e.asyncCopy(in)
	case ir.OpAsyncCommit:
		e.asyncCommit()
	case ir.OpAsyncWait:
		e.asyncWait(in)
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
		// Local memory is allocated statically; nothing to release.
	case ir.OpFor:
		return e.forLoop(in)
	case ir.OpIf:
		return e.ifElse(in)
	case ir.OpYield:
		e.yield(in)
	case ir.OpParallel:
		e.line("{")
		e.indent++
		err := e.region(in.Body())
		e.indent--
		e.line("}")
		return err
	case ir.OpSubgroupBroadcast:
		e.define(in.Result(), e.broadcast(e.value(in.Operands[0]), in.Result().Type, e.value(in.Operands[1])))
	case ir.OpSubgroupShuffleXor:
		e.define(in.Result(), e.broadcast(e.value(in.Operands[0]), in.Result().Type, "tl_lane ^ ("+e.value(in.Operands[1])+")"))
	case ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin:
		return e.subgroupOp(in)
	case ir.OpCoopMatrixLoad:
		e.coopLoad(in)
	case ir.OpCoopMatrixStore:
		return e.coopStore(in)
	case ir.OpCoopMatrixMulAdd:
		e.coopMulAdd(in)
	case ir.OpCoopMatrixScale:
		e.coopScale(in)
	default:
		if done, err := e.releasedInst(in); done {
			return err
		}
		return fmt.Errorf("opencl: %s must be lowered before emission", in.Mnemonic())
	}
	return nil
}

func (e *fn) barrier(f ir.Fence) {
	flags := "CLK_LOCAL_MEM_FENCE"
	switch f {
	case ir.FenceGlobal:
		flags = "CLK_GLOBAL_MEM_FENCE"
	case ir.FenceGlobal | ir.FenceLocal:
		flags = "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"
	}
	e.put("barrier(", flags, ");")
}

// constant writes a constant; coopmatrix constants fill every element.
func (e *fn) constant(in *ir.Inst) {
	t := in.Result().Type
	if t.Kind() == ir.KindCoopmatrix {
		e.coopFill(in.Result(), e.literal(in.Const, t.Elem()))
		return
	}
	// Scalar constants are used inline: the OpenCL compiler folds them and
	// the kernel reads like the source. Narrow index constants are ints.
	if e.narrow(in.Result()) {
		e.names.Set(in.Result(), e.text.itoa(in.Const.Int))
		return
	}
	e.names.Set(in.Result(), e.literal(in.Const, t))
}

// literal spells constant c of scalar or bool type t in C.
func (e *fn) literal(c ir.Constant, t *ir.Type) string {
	switch c.Kind {
	case ir.ConstBool:
		return strconv.FormatBool(c.Bool)
	case ir.ConstInt:
		if t.IsFloat() || t.IsComplex() {
			return e.literal(ir.Constant{Kind: ir.ConstFloat, Float: float64(c.Int)}, t)
		}
		if c.Int == math.MinInt64+1 {
			return "(-9223372036854775807L)"
		}
		var digits [20]byte
		return e.text.join("(", e.u.scalar(t).reg, ")", string(strconv.AppendInt(digits[:0], c.Int, 10)), "L")
	case ir.ConstFloat:
		if t.IsComplex() {
			return e.literal(ir.Constant{Kind: ir.ConstComplex, Float: c.Float}, t)
		}
		return e.floatLiteral(c.Float, e.u.scalar(t).reg)
	}
	reg := e.u.scalar(t).reg
	r := realOf(reg)
	return "(" + reg + ")(" + e.floatLiteral(c.Float, r) + ", " + e.floatLiteral(c.Imag, r) + ")"
}

func (e *fn) floatLiteral(f float64, reg string) string {
	var s string
	switch {
	case math.IsInf(f, 1):
		s = "INFINITY"
	case math.IsInf(f, -1):
		s = "(-INFINITY)"
	case math.IsNaN(f):
		s = "NAN"
	default:
		var digits [32]byte
		b := strconv.AppendFloat(digits[:0], f, 'e', -1, 64)
		if reg != "double" {
			b = append(b, 'f')
		}
		s = e.text.bytes(b)
	}
	return e.text.join("((", reg, ")", s, ")")
}

// arith writes a binary arithmetic instruction.
func (e *fn) arith(in *ir.Inst) error {
	t := in.Result().Type
	if t.Kind() == ir.KindCoopmatrix {
		return e.coopArith(in)
	}
	if t == ir.Index {
		return e.indexArith(in)
	}
	x, y := e.value(in.Operands[0]), e.value(in.Operands[1])
	expr, err := e.binary(in.Arith, t, x, y)
	if err != nil {
		return err
	}
	e.define(in.Result(), expr)
	return nil
}

// indexArith writes index arithmetic: in int when the result is narrow
// (its operands, int or long, give the exact result), else in long with
// the narrow operands widened first.
func (e *fn) indexArith(in *ir.Inst) error {
	r := in.Result()
	a, b := in.Operands[0], in.Operands[1]
	op := cOp(in.Arith)
	if op == "" && in.Arith != ir.Min && in.Arith != ir.Max {
		return fmt.Errorf("opencl: arith.%s on index", in.Arith)
	}
	// Index arithmetic is most of a large kernel's lines: written from its
	// parts, without joining the expression first, the constant ones
	// spelled whole.
	narrow := e.narrow(r)
	wide := !narrow || !e.narrow(a) || !e.narrow(b)
	var room [11]string // the most parts an operation takes: no allocation
	parts := append(room[:0], indexOpens[in.Arith][b2i(narrow)])
	parts = e.indexOperand(parts, a, wide)
	parts = append(parts, indexSeparators[in.Arith])
	parts = append(e.indexOperand(parts, b, wide), ")")
	e.defineAs(r, [...]string{"long ", "int "}[b2i(narrow)], parts...)
	return nil
}

// indexOperand appends v's C expression to parts, widened to long if
// wide asks and v is narrow.
func (e *fn) indexOperand(parts []string, v *ir.Value, wide bool) []string {
	if wide && e.narrow(v) {
		return append(parts, "(long)(", e.value(v), ")") // e.wide(v), in parts
	}
	return append(parts, e.value(v))
}

// indexOpens start index arithmetic in long and in int, by operation;
// indexSeparators go between its operands.
var indexOpens, indexSeparators = func() (opens [len(cOps)][2]string, seps [len(cOps)]string) {
	for op, c := range cOps {
		opens[op] = [2]string{"(long)(", "(int)("}
		seps[op] = " " + c + " "
	}
	opens[ir.Min], seps[ir.Min] = [2]string{"(long)min(", "(int)min("}, ", "
	opens[ir.Max], seps[ir.Max] = [2]string{"(long)max(", "(int)max("}, ", "
	return
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// binary returns the C expression of x op y for scalar or bool type t.
func (e *fn) binary(op ir.ArithOp, t *ir.Type, x, y string) (string, error) {
	reg := e.regType(t)
	switch {
	case t.Kind() == ir.KindBool:
		switch op {
		case ir.And:
			return e.text.join(x, " && ", y), nil
		case ir.Or:
			return e.text.join(x, " || ", y), nil
		case ir.Xor:
			return e.text.join(x, " != ", y), nil
		}
	case t.IsComplex():
		switch op {
		case ir.Add:
			return x + " + " + y, nil
		case ir.Sub:
			return x + " - " + y, nil
		case ir.Mul:
			return e.u.helpers.cmul(reg) + "(" + joinArgs(x, y) + ")", nil
		case ir.Div:
			return e.u.helpers.cdiv(reg) + "(" + joinArgs(x, y) + ")", nil
		}
	case t.IsFloat():
		switch op {
		case ir.Add, ir.Sub, ir.Mul, ir.Div:
			return e.roundTo(e.text.join("(", x, " ", cOp(op), " ", y, ")"), t), nil
		case ir.Rem:
			return e.roundTo("fmod("+joinArgs(x, y)+")", t), nil
		case ir.Min:
			return "fmin(" + joinArgs(x, y) + ")", nil
		case ir.Max:
			return "fmax(" + joinArgs(x, y) + ")", nil
		}
	case t.IsInteger():
		switch op {
		case ir.Min:
			return e.text.join("min(", x, ", ", y, ")"), nil
		case ir.Max:
			return e.text.join("max(", x, ", ", y, ")"), nil
		default:
			return e.text.join("(", reg, ")(", x, " ", cOp(op), " ", y, ")"), nil
		}
	}
	return "", fmt.Errorf("opencl: arith.%s on %s", op, t)
}

// cOps are the C operators of the arithmetic operations that have one,
// indexed by operation: looked up in a map, they were a hundredth of
// writing a large kernel, most of whose lines are index arithmetic.
var cOps = [...]string{
	ir.Add: "+", ir.Sub: "-", ir.Mul: "*", ir.Div: "/", ir.Rem: "%",
	ir.Shl: "<<", ir.Shr: ">>", ir.And: "&", ir.Or: "|", ir.Xor: "^",
}

// cOp is op's C operator, "" when it has none.
func cOp(op ir.ArithOp) string {
	if int(op) < len(cOps) {
		return cOps[op]
	}
	return ""
}

// roundTo rounds an f32 expression to f16 or bf16 precision when the
// target computes those types in f32, so results match a native
// implementation.
func (e *fn) roundTo(x string, t *ir.Type) string {
	si := e.u.scalar(t)
	switch {
	case si.halfway:
		// Without cl_khr_fp16 no half variable may exist; a ushort holds the bits.
		return e.u.helpers.add("tl_round_half", `static inline float tl_round_half(float x) {
    ushort h;
    vstore_half_rte(x, 0, (private half*)&h);
    return vload_half(0, (private half*)&h);
}`) + "(" + x + ")"
	case si.bf16:
		return e.u.helpers.bf16Load() + "(" + e.u.helpers.bf16Store() + "(" + x + "))"
	}
	return x
}

// unary writes a unary arithmetic instruction.
func (e *fn) unary(in *ir.Inst) error {
	src := in.Operands[0].Type
	if src.Kind() == ir.KindCoopmatrix {
		return e.coopUnary(in)
	}
	x := e.value(in.Operands[0])
	expr, err := e.unaryExpr(in.Unary, src, x)
	if err != nil {
		return err
	}
	e.define(in.Result(), expr)
	return nil
}

func (e *fn) unaryExpr(op ir.UnaryOp, t *ir.Type, x string) (string, error) {
	reg := e.regType(t)
	switch op {
	case ir.Abs:
		switch {
		case t.IsComplex():
			return "hypot(" + x + ".x, " + x + ".y)", nil
		case t.IsFloat():
			return "fabs(" + x + ")", nil
		}
		return "(" + reg + ")abs(" + x + ")", nil
	case ir.Neg:
		return "(" + reg + ")(-" + x + ")", nil
	case ir.Not:
		if t.Kind() == ir.KindBool {
			return "!" + x, nil
		}
		return "(" + reg + ")(~" + x + ")", nil
	case ir.Conj:
		return "(" + reg + ")(" + x + ".x, -" + x + ".y)", nil
	case ir.Re:
		return x + ".x", nil
	case ir.Im:
		return x + ".y", nil
	}
	return "", fmt.Errorf("opencl: arith.%s on %s", op, t)
}

var cCmp = map[ir.CmpOp]string{ir.Eq: "==", ir.Ne: "!=", ir.Gt: ">", ir.Ge: ">=", ir.Lt: "<", ir.Le: "<="}

func (e *fn) cmp(in *ir.Inst) {
	x, y := e.value(in.Operands[0]), e.value(in.Operands[1])
	if in.Operands[0].Type.IsComplex() {
		if in.Cmp == ir.Eq {
			e.define(in.Result(), fmt.Sprintf("(%[1]s.x == %[2]s.x && %[1]s.y == %[2]s.y)", x, y))
		} else {
			e.define(in.Result(), fmt.Sprintf("(%[1]s.x != %[2]s.x || %[1]s.y != %[2]s.y)", x, y))
		}
		return
	}
	e.define(in.Result(), e.text.join("(", x, " ", cCmp[in.Cmp], " ", y, ")"))
}

// cast writes a cast between scalar types (or coopmatrices element-wise).
func (e *fn) cast(in *ir.Inst) error {
	from, to := in.Operands[0].Type, in.Result().Type
	if to.Kind() == ir.KindCoopmatrix {
		e.coopCast(in)
		return nil
	}
	if e.narrow(in.Result()) {
		e.define(in.Result(), e.text.join("(int)(", e.value(in.Operands[0]), ")"))
		return nil
	}
	x := e.value(in.Operands[0])
	if from == ir.Index {
		x = e.wide(in.Operands[0])
	}
	e.define(in.Result(), e.convert(x, from, to))
	return nil
}

// convert returns x (of scalar type from) converted to scalar type to.
func (e *fn) convert(x string, from, to *ir.Type) string {
	if from == to {
		return x
	}
	fr, tr := e.regType(from), e.regType(to)
	switch {
	case to.IsComplex() && from.IsComplex():
		return "convert_" + tr + "(" + x + ")"
	case to.IsComplex():
		return "(" + tr + ")((" + realOf(tr) + ")(" + x + "), 0)"
	case fr == tr:
		return e.roundTo(x, to)
	}
	return e.roundTo(e.text.join("(", tr, ")(", x, ")"), to)
}

// math calls the OpenCL C function of the same name; native_ ones only on
// float (OpenCL C has them for float alone), complex exponentials through
// the helper (2^z = e^(z ln 2)).
func (e *fn) math(in *ir.Inst) {
	t := in.Result().Type
	x := e.value(in.Operands[0])
	op, native := in.Math.Native()
	switch {
	case t.IsComplex() && op == ir.Exp2:
		e.define(in.Result(), e.u.helpers.cexp(e.regType(t))+"("+x+" * "+e.literal(ir.Constant{Kind: ir.ConstFloat, Float: math.Ln2}, t.ComponentType())+")")
	case t.IsComplex():
		e.define(in.Result(), e.u.helpers.cexp(e.regType(t))+"("+x+")")
	case native && e.regType(t) == "float":
		e.define(in.Result(), e.roundTo("native_"+op.String()+"("+x+")", t))
	default:
		e.define(in.Result(), e.roundTo(op.String()+"("+x+")", t))
	}
}

func (e *fn) builtin(in *ir.Inst) {
	l := e.launch
	nsx := l.WorkGroupSize[0] / l.SubgroupSize
	var expr string
	switch in.Builtin {
	case ir.GroupID:
		expr = "tl_gid"
	case ir.GroupSize:
		expr = "tl_groups"
	case ir.GroupIDY:
		expr = "get_group_id(1)"
		if l.Split > 1 {
			expr = "tl_part" // splitGroups
		}
	case ir.GroupIDZ:
		expr = "get_group_id(2)"
	case ir.GroupSizeY:
		expr = "get_num_groups(1)"
	case ir.GroupSizeZ:
		expr = "get_num_groups(2)"
	case ir.NumSubgroups:
		expr = strconv.Itoa(nsx * l.WorkGroupSize[1])
	case ir.NumSubgroupsX:
		expr = strconv.Itoa(nsx)
	case ir.NumSubgroupsY:
		expr = strconv.Itoa(l.WorkGroupSize[1])
	case ir.NumSubgroupsZ:
		expr = "1"
	case ir.SubgroupIDZ:
		expr = "0"
	case ir.SubgroupSize:
		expr = strconv.Itoa(l.SubgroupSize)
	case ir.SubgroupID:
		expr = "tl_sgid"
	case ir.SubgroupIDX:
		expr = fmt.Sprintf("(tl_sgid %% %d)", nsx)
	case ir.SubgroupIDY:
		expr = fmt.Sprintf("(tl_sgid / %d)", nsx)
	case ir.SubgroupLocalID:
		expr = "tl_lane"
	}
	t := in.Result().Type
	e.define(in.Result(), e.text.join("(", e.regType(t), ")", expr))
}

func (e *fn) size(in *ir.Inst) {
	v := in.Operands[0]
	if g, ok := e.groups[v]; ok {
		e.define(in.Result(), "(long)"+g.size)
		return
	}
	e.define(in.Result(), "(long)"+e.memref(v).shape[in.Mode])
}

func (e *fn) load(in *ir.Inst) {
	v := in.Operands[0]
	if v.Type.Kind() == ir.KindGroup {
		e.loadGroup(in)
		return
	}
	m := e.memref(v)
	e.define(in.Result(), e.loadElem(m, e.offsetOf(in.Operands[0], in.Operands[1:])))
}

// forLoop writes a for loop; loop-carried values live in variables declared
// before the loop, which also hold the loop's results afterwards.
func (e *fn) forLoop(in *ir.Inst) error {
	from, to, step, init := in.LoopBounds()
	body := in.Body()
	iv := body.Args[0]
	carried := e.carried(in.Results, init)
	for i, c := range carried {
		e.names.Set(body.Args[i+1], c)
	}
	e.yields[body] = carried
	ivName := e.fresh(iv.Name)
	e.names.Set(iv, ivName)
	inc := "++" + ivName
	if step != nil {
		inc = e.text.join(ivName, " += ", e.value(step))
	}
	if unroll, ok := in.Attrs.Bool(ir.AttrUnroll); ok {
		if unroll {
			e.line("#pragma unroll")
		} else {
			e.line("#pragma unroll 1")
		}
	}
	e.put("for (", e.valueType(iv), " ", ivName, " = ", e.value(from), "; ", ivName, " < ", e.value(to), "; ", inc, ") {")
	e.indent++
	err := e.region(body)
	e.indent--
	e.put("}")
	return err
}

// carried declares one variable per result, initialised from init (or
// uninitialised when init is nil), and names the results after them.
func (e *fn) carried(results, init []*ir.Value) []string {
	names := e.slab.strs.Take(len(results))
	for i, r := range results {
		names[i] = e.fresh(r.Name)
		if init != nil {
			e.put(e.valueType(r), " ", names[i], " = ", e.value(init[i]), ";")
		} else {
			e.put(e.valueType(r), " ", names[i], ";")
		}
		e.names.Set(r, names[i])
	}
	return names
}

func (e *fn) ifElse(in *ir.Inst) error {
	results := e.carried(in.Results, nil)
	e.put("if (", e.value(in.Operands[0]), ") {")
	for i, r := range in.Regions {
		if i == 1 {
			if len(r.Insts) == 0 {
				break
			}
			e.put("} else {")
		}
		e.yields[r] = results
		e.indent++
		err := e.region(r)
		e.indent--
		if err != nil {
			return err
		}
	}
	e.line("}")
	return nil
}

// yield assigns the yielded values through temporaries, so a yield that
// permutes loop-carried values reads every old value first.
func (e *fn) yield(in *ir.Inst) {
	dst := e.yields[in.Parent]
	if len(dst) == 0 {
		return
	}
	tmps := e.slab.strs.Take(len(dst))
	for i, v := range in.Operands {
		tmps[i] = e.fresh("y")
		e.put(e.valueType(v), " ", tmps[i], " = ", e.value(v), ";")
	}
	for i := range dst {
		e.put(dst[i], " = ", tmps[i], ";")
	}
}
