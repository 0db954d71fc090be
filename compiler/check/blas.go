package check

import (
	"tltune/compiler/ir"
)

// rule checks the instruction-specific restrictions of one opcode; kind is
// the effective class of the enclosing region.
type rule func(c *checker, in *ir.Inst, kind ir.RegionKind)

// rules holds each opcode's rule, indexed by the opcode (a byte): the
// verifier looks one up per instruction, and a map lookup was a fifth of
// its time on a lowered GEMM.
var rules [1 << 8]rule

func init() {
	for op, r := range map[ir.Op]rule{
		ir.OpAlloca: (*checker).alloca, ir.OpAxpby: (*checker).axpby, ir.OpCumsum: (*checker).cumsum,
		ir.OpForeach: (*checker).foreach, ir.OpForeachTile: (*checker).foreachTile, ir.OpGemm: (*checker).gemm, ir.OpGemv: (*checker).gemv,
		ir.OpGer: (*checker).ger, ir.OpHadamardProduct: (*checker).hadamard, ir.OpParallel: (*checker).parallel,
		ir.OpSum:   (*checker).sum,
		ir.OpArith: (*checker).arith, ir.OpArithUnary: (*checker).arithUnary, ir.OpBarrier: (*checker).barrier,
		ir.OpBuiltin: (*checker).builtin, ir.OpCast: (*checker).cast, ir.OpCmp: (*checker).cmp,
		ir.OpConstant: (*checker).constant, ir.OpExpand: (*checker).expand, ir.OpFor: (*checker).forLoop,
		ir.OpFuse: (*checker).fuse, ir.OpIf: (*checker).ifElse, ir.OpLifetimeStop: (*checker).lifetimeStop,
		ir.OpLoad: (*checker).load, ir.OpMath: (*checker).math, ir.OpSize: (*checker).size,
		ir.OpStore: (*checker).store, ir.OpSubview: (*checker).subview, ir.OpYield: (*checker).yield,
		ir.OpVectorLoad: (*checker).vectorLoad, ir.OpVectorStore: (*checker).vectorStore,
		ir.OpCoopMatrixLoad: (*checker).coopLoad, ir.OpCoopMatrixMulAdd: (*checker).coopMulAdd,
		ir.OpCoopMatrixScale: (*checker).coopScale, ir.OpCoopMatrixStore: (*checker).coopStore,
		ir.OpSubgroupBroadcast: (*checker).broadcast, ir.OpSubgroupAdd: (*checker).subgroupOp,
		ir.OpSubgroupMax: (*checker).subgroupOp, ir.OpSubgroupMin: (*checker).subgroupOp,
		ir.OpSubgroupShuffleXor: (*checker).broadcast,
		ir.OpAsyncCopy:          (*checker).asyncCopy, ir.OpAsyncCommit: (*checker).asyncCommit,
		ir.OpAsyncWait: (*checker).asyncWait,
	} {
		rules[op] = r
	}
}

// blas checks what all BLAS instructions share: operand count, scalar
// alpha and beta, memref tensors, the atomic beta rule, and the promotion
// chain type(α) ⪯ compute type ⪯ element_type(out), type(β) ⪯
// element_type(out). inputs is the number of tensor inputs; compute is the
// type the inputs combine to (nil when the inputs do not promote).
// It returns false when the operands are unusable for shape checks.
func (c *checker) blas(in *ir.Inst, inputs int) bool {
	if !c.count(in, inputs+3, 0) {
		return false
	}
	n := len(in.Operands)
	ok := c.want(in, 0, "a scalar (alpha)", isScalar)
	ok = c.want(in, n-2, "a scalar (beta)", isScalar) && ok
	for i := 1; i <= inputs; i++ {
		ok = c.want(in, i, "a memref", isMemref) && ok
	}
	ok = c.want(in, n-1, "a memref", isMemref) && ok
	if !ok {
		return false
	}
	alpha, beta, out := in.Operands[0], in.Operands[n-2], in.Operands[n-1]
	compute := in.Operands[1].Type.Elem()
	what := role{"the element type of ", in.Operands[1]}
	if inputs == 2 {
		b := in.Operands[2].Type.Elem()
		if p := c.promotions.promote(compute, b); p != nil {
			compute = p
			what = role{text: "the promoted input type"}
		} else {
			c.errorf(in.OperandPos(2), "%s: the element types of %s (%s) and %s (%s) do not promote to a common type", in.Mnemonic(), name(in.Operands[1]), compute, name(in.Operands[2]), b)
			compute = nil
		}
	}
	outElem := role{"the element type of ", out}
	c.promotes(in, in.OperandPos(0), alpha.Type, compute, role{text: "alpha"}, what)
	c.promotes(in, in.OperandPos(n-1), compute, out.Type.Elem(), what, outElem)
	c.promotes(in, in.OperandPos(n-2), beta.Type, out.Type.Elem(), role{text: "beta"}, outElem)
	if in.Atomic > ir.Atomic {
		c.errorf(in.OpPos(), "%s accepts .atomic, not .%s", in.Op, in.Atomic)
	}
	if in.Atomic != ir.NotAtomic {
		c.atomicBeta(in, n-2)
	}
	return true
}

func name(v *ir.Value) string { return "%" + v.Name }

// atomicBeta checks that beta is a constant 0 or 1.
func (c *checker) atomicBeta(in *ir.Inst, i int) {
	beta := in.Operands[i]
	if beta.Def == nil || beta.Def.Op != ir.OpConstant {
		c.errorf(in.OperandPos(i), "%s: with .atomic, beta (%s) must be a constant 0 or 1", in.Mnemonic(), name(beta))
		return
	}
	k := beta.Def.Const
	var zero, one bool
	switch k.Kind {
	case ir.ConstInt:
		zero, one = k.Int == 0, k.Int == 1
	case ir.ConstFloat:
		zero, one = k.Float == 0, k.Float == 1
	case ir.ConstComplex:
		zero, one = k.Float == 0 && k.Imag == 0, k.Float == 1 && k.Imag == 0
	}
	if !zero && !one {
		c.errorf(in.OperandPos(i), "%s: with .atomic, beta must be 0 or 1, found %s", in.Mnemonic(), k)
	}
}

// orderIs checks the order of memref operand i.
func (c *checker) orderIs(in *ir.Inst, i int, orders ...int) bool {
	t := in.Operands[i].Type
	for _, o := range orders {
		if t.Order() == o {
			return true
		}
	}
	want := ""
	for j, o := range orders {
		if j > 0 {
			want += " or "
		}
		want += string(rune('0' + o))
	}
	c.errorf(in.OperandPos(i), "%s: %s must have order %s, found %s of order %d", in.Mnemonic(), name(in.Operands[i]), want, t, t.Order())
	return false
}

// sizes reports each size rule of the collective in that its static
// shapes break (ir.Misfits), once the orders of its operands are checked.
func (c *checker) sizes(in *ir.Inst) {
	_, inputs, _, out := in.BLASOperands()
	var room [2][]int64 // the most inputs a BLAS instruction has, on the stack
	shapes := room[:0]
	for _, v := range inputs {
		shapes = append(shapes, v.Type.Shape())
	}
	for _, m := range ir.Misfits(in.Op, in.TransA, in.TransB, shapes, out.Type.Shape()) {
		c.misfit(in, m)
	}
}

// misfit reports a broken size rule. A shape names its operand as the
// program does and gives its type's dimensions; op(A) has no name there.
func (c *checker) misfit(in *ir.Inst, m ir.Misfit) {
	pos := in.OperandPos(m.At)
	if !m.Shapes {
		c.errorf(pos, "%s: %s", in.Mnemonic(), m)
		return
	}
	t := in.Operands[m.At].Type
	want := m.WantWhat
	if !m.View {
		want = name(in.Operands[1])
	}
	w := ir.Memref(t.Elem(), m.Want, nil, ir.Global)
	c.errorf(pos, "%s: the shape of %s %s must equal the shape of %s %s", in.Mnemonic(), name(in.Operands[m.At]), dims(t), want, dims(w))
}

func (c *checker) axpby(in *ir.Inst, _ ir.RegionKind) {
	if !c.blas(in, 1) || !c.orderIs(in, 3, 0, 1, 2) {
		return
	}
	c.sizes(in)
}

func (c *checker) cumsum(in *ir.Inst, _ ir.RegionKind) {
	if !c.blas(in, 1) {
		return
	}
	a := in.Operands[1].Type
	if a.Order() < 1 {
		c.errorf(in.OperandPos(1), "cumsum: %s must have order at least 1", name(in.Operands[1]))
		return
	}
	if in.Mode < 0 || in.Mode >= int64(a.Order()) {
		c.errorf(in.ModePos(), "cumsum: mode %d out of range; modes of %s are numbered 0 to %d", in.Mode, name(in.Operands[1]), a.Order()-1)
	}
	c.sizes(in)
}

func (c *checker) gemm(in *ir.Inst, _ ir.RegionKind) { c.matrices(in, 2, 2, 2) }
func (c *checker) gemv(in *ir.Inst, _ ir.RegionKind) { c.matrices(in, 2, 1, 1) }
func (c *checker) ger(in *ir.Inst, _ ir.RegionKind)  { c.matrices(in, 1, 1, 2) }

// matrices checks gemm, gemv and ger, whose two inputs and output each
// have one order: the size rules index their modes, so they wait until
// all three orders are right.
func (c *checker) matrices(in *ir.Inst, orderA, orderB, orderC int) {
	if !c.blas(in, 2) {
		return
	}
	okA, okB, okC := c.orderIs(in, 1, orderA), c.orderIs(in, 2, orderB), c.orderIs(in, 4, orderC)
	if okA && okB && okC {
		c.sizes(in)
	}
}

func (c *checker) hadamard(in *ir.Inst, _ ir.RegionKind) {
	if !c.blas(in, 2) || !c.orderIs(in, 1, 1, 2) {
		return
	}
	c.sizes(in)
}

func (c *checker) sum(in *ir.Inst, _ ir.RegionKind) {
	if !c.blas(in, 1) {
		return
	}
	a, b := in.Operands[1].Type, in.Operands[3].Type
	if !c.orderIs(in, 3, 0, 1) {
		return
	}
	if a.Order() != b.Order()+1 {
		c.errorf(in.OperandPos(1), "sum: order(A) must be order(b)+1 = %d, found %d", b.Order()+1, a.Order())
		return
	}
	c.sizes(in)
}

func (c *checker) alloca(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 0, 1) {
		return
	}
	t := in.Results[0].Type
	pos := in.TypePos()
	if t.Kind() != ir.KindMemref {
		c.errorf(pos, "alloca returns a memref, found %s", t)
		return
	}
	c.typ(t, pos)
	if t.Space() != ir.Local {
		c.errorf(pos, "alloca allocates local memory: write %s with \", local\"", t)
	}
	if t.HasDynamicShape() || slicesHasDynamic(t.Stride()) {
		c.errorf(pos, "the size of an alloca must be known at compile time, found %s", t)
		return
	}
	c.uniqueNames(in.Attrs)
	for _, a := range in.Attrs {
		switch a.Name {
		case ir.AttrAlignment:
			c.alignment(a.Value, t.Elem(), attrPos(a, in.OpPos()))
		case ir.AttrShapeGCD, ir.AttrStrideGCD, ir.AttrSubgroupSize, ir.AttrUnroll, ir.AttrWorkGroupSize:
			c.errorf(attrPos(a, in.OpPos()), "%s is not an alloca attribute", a.Name)
		}
	}
	c.localBytes += footprint(t)
}

// footprint is the number of bytes a static memref spans.
func footprint(t *ir.Type) int64 {
	span := int64(1)
	for i, n := range t.Shape() {
		if n == 0 {
			return 0
		}
		span += (n - 1) * t.Stride()[i]
	}
	return span * t.Elem().Size()
}

func slicesHasDynamic(s []int64) bool {
	for _, v := range s {
		if v == ir.Dynamic {
			return true
		}
	}
	return false
}
