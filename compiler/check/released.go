package check

import "tltune/compiler/ir"

// The rules of the instructions tltune has from the released tinytc
// (docs/language.md, Extensions).

func init() {
	for op, r := range map[ir.Op]rule{
		ir.OpAtomicLoad: (*checker).atomicLoad, ir.OpAtomicStore: (*checker).store,
		ir.OpAtomicUpdate: (*checker).atomicUpdate, ir.OpAssociated: (*checker).associated,
		ir.OpCoopMatrixAtomicLoad: (*checker).coopLoad, ir.OpCoopMatrixAtomicStore: (*checker).coopStore,
		ir.OpCoopMatrixAtomicUpdate: (*checker).coopAtomicUpdate, ir.OpCoopMatrixApply: (*checker).coopApply,
		ir.OpCoopMatrixConstruct: (*checker).coopConstruct, ir.OpCoopMatrixExtract: (*checker).coopExtract,
		ir.OpCoopMatrixInsert: (*checker).coopInsert, ir.OpCoopMatrixPrefetch: (*checker).coopPrefetch,
		ir.OpCoopMatrixReduce: (*checker).coopReduce,
	} {
		rules[op] = r
	}
}

// updateOp checks the operation of an atomic update or reduction: add, or
// max and min on a type that is ordered.
func (c *checker) updateOp(in *ir.Inst, t *ir.Type) {
	switch {
	case in.Arith != ir.Add && in.Arith != ir.Max && in.Arith != ir.Min:
		c.errorf(in.OpPos(), "%s: the operation must be add, max or min", in.Mnemonic())
	case in.Arith != ir.Add && t.IsComplex():
		c.errorf(in.OpPos(), "%s: complex numbers have no order", in.Mnemonic())
	}
}

func (c *checker) atomicLoad(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Operands) < 1 || len(in.Results) != 1 {
		c.count(in, 1, 1)
		return
	}
	if !c.want(in, 0, "a memref", isMemref) {
		return
	}
	m := in.Operands[0].Type
	if idx := len(in.Operands) - 1; idx != m.Order() {
		c.errorf(in.OpPos(), "%s of %s (order %d) needs %d indices, found %d", in.Mnemonic(), name(in.Operands[0]), m.Order(), m.Order(), idx)
	}
	c.indices(in, 1)
	c.resultIs(in, m.Elem())
}

func (c *checker) atomicUpdate(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Operands) < 2 || len(in.Results) != 1 {
		c.count(in, 2, 1)
		return
	}
	if !c.want(in, 1, "a memref", isMemref) || !c.want(in, 0, "a scalar", isScalar) {
		return
	}
	m := in.Operands[1].Type
	if idx := len(in.Operands) - 2; idx != m.Order() {
		c.errorf(in.OpPos(), "%s of %s (order %d) needs %d indices, found %d", in.Mnemonic(), name(in.Operands[1]), m.Order(), m.Order(), idx)
	}
	if v := in.Operands[0].Type; v != m.Elem() {
		c.errorf(in.OperandPos(0), "%s: %s has type %s, but the element type of %s is %s", in.Mnemonic(), name(in.Operands[0]), v, name(in.Operands[1]), m.Elem())
	}
	c.indices(in, 2)
	c.resultIs(in, m.Elem())
	c.updateOp(in, m.Elem())
}

func (c *checker) associated(in *ir.Inst, _ ir.RegionKind) {
	if c.count(in, 1, 1) && c.want(in, 0, "a memref or group", func(t *ir.Type) bool { return isMemref(t) || t.Kind() == ir.KindGroup }) {
		c.resultIs(in, ir.Bool)
	}
}

func (c *checker) coopAtomicUpdate(in *ir.Inst, kind ir.RegionKind) {
	if len(in.Results) != 1 {
		c.count(in, 4, 1)
		return
	}
	c.coopStore(in, kind)
	if len(in.Operands) == 4 && isCoop(in.Operands[0].Type) {
		c.resultIs(in, in.Operands[0].Type)
		c.updateOp(in, in.Operands[0].Type.Elem())
	}
}

// coopResult checks that in returns a well-formed coopmatrix.
func (c *checker) coopResult(in *ir.Inst) (*ir.Type, bool) {
	t := in.Results[0].Type
	if t.Kind() != ir.KindCoopmatrix {
		c.errorf(in.TypePos(), "%s returns a coopmatrix, found %s", in.Mnemonic(), t)
		return nil, false
	}
	return t, c.resultType(in, t)
}

func (c *checker) coopConstruct(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) {
		return
	}
	if t, ok := c.coopResult(in); ok {
		c.want(in, 0, "of the component type "+t.Elem().String(), func(x *ir.Type) bool { return x == t.Elem() })
	}
}

// shareIndex checks the index into a work-item's share of coopmatrix t:
// below rows · cols, and below the share of one lane when the subgroup
// size is fixed.
func (c *checker) shareIndex(in *ir.Inst, t *ir.Type) {
	n := t.Rows() * t.Cols()
	if c.sgs > 0 {
		n = (t.Rows() + c.sgs - 1) / c.sgs * t.Cols()
	}
	if in.Mode < 0 || in.Mode >= n {
		c.errorf(in.Source().ModePos, "%s: index %d is outside the work-item's share of %s (%d components)", in.Mnemonic(), in.Mode, t, n)
	}
}

func (c *checker) coopExtract(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) || !c.want(in, 0, "a coopmatrix", isCoop) {
		return
	}
	t := in.Operands[0].Type
	c.resultIs(in, t.Elem())
	c.shareIndex(in, t)
}

func (c *checker) coopInsert(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 2, 1) || !c.want(in, 1, "a coopmatrix", isCoop) {
		return
	}
	t := in.Operands[1].Type
	c.want(in, 0, "of the component type "+t.Elem().String(), func(x *ir.Type) bool { return x == t.Elem() })
	c.resultIs(in, t)
	c.shareIndex(in, t)
}

func (c *checker) coopPrefetch(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 3, 0) || !c.want(in, 0, "a memref", isMemref) || !c.orderIs(in, 0, 2) {
		return
	}
	c.indices(in, 1)
	if len(in.Static) != 3 || in.Static[0] < 0 || in.Static[1] <= 0 || in.Static[2] <= 0 {
		c.errorf(in.OpPos(), "cooperative_matrix_prefetch needs a cache level of at least 0 and a positive number of rows and columns")
	}
}

func (c *checker) coopReduce(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) || !c.want(in, 0, "a coopmatrix", isCoop) {
		return
	}
	a := in.Operands[0].Type
	c.updateOp(in, a.Elem())
	want := ir.Coopmatrix(a.Elem(), a.Rows(), 1, a.Use())
	if in.Mode == 1 {
		want = ir.Coopmatrix(a.Elem(), 1, a.Cols(), a.Use())
	}
	c.resultIs(in, want)
	if c.sgs > 0 && a.Rows()%c.sgs != 0 {
		c.errorf(in.OperandPos(0), "%s: the rows of %s (%d) must be a multiple of the subgroup size %d", in.Mnemonic(), name(in.Operands[0]), a.Rows(), c.sgs)
	}
}

// coopApply checks the operand and result (the same coopmatrix type), the
// region's arguments (row and column i32, the component) and its body: mixed
// instructions only (it runs once per component, in any work-item), ending
// in a yield of one component.
func (c *checker) coopApply(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) || !c.want(in, 0, "a coopmatrix", isCoop) || !c.regions(in, 1, ir.RegionSPMD) {
		return
	}
	t := in.Operands[0].Type
	c.resultIs(in, t)
	body := in.Body()
	if len(body.Args) != 3 || body.Args[0].Type != ir.I32 || body.Args[1].Type != ir.I32 || body.Args[2].Type != t.Elem() {
		c.errorf(in.OpPos(), "the region of cooperative_matrix_apply takes the row and column (i32) and the component (%s)", t.Elem())
		return
	}
	body.Walk(func(inner *ir.Inst) bool {
		if inner.Class() != ir.Mixed || inner.Op == ir.OpBarrier {
			c.errorf(inner.OpPos(), "%s cannot appear in the region of cooperative_matrix_apply, which runs once per component (mixed instructions only)", inner.Mnemonic())
		}
		return true
	})
	c.region(body, ir.RegionSPMD)
	c.yields(in, body, []*ir.Type{t.Elem()}, true)
}
