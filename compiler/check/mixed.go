package check

import (
	"math"

	"tltune/compiler/ir"
)

// effective returns the class of a nested region given its declared kind
// and the class of the region around its instruction.
func effective(r *ir.Region, outer ir.RegionKind) ir.RegionKind {
	if r.Kind == ir.RegionInherit {
		return outer
	}
	return r.Kind
}

// regions checks that in has n regions and checks them.
func (c *checker) regions(in *ir.Inst, n int, want ir.RegionKind) bool {
	if len(in.Regions) != n {
		c.errorf(in.OpPos(), "%s needs %d regions, found %d", in.Mnemonic(), n, len(in.Regions))
		return false
	}
	for _, r := range in.Regions {
		if r.Kind != want || r.Parent != in {
			c.errorf(in.OpPos(), "a region of %s has the wrong kind or parent", in.Mnemonic())
			return false
		}
	}
	return true
}

func (c *checker) foreach(in *ir.Inst, kind ir.RegionKind) {
	if !c.regions(in, 1, ir.RegionSPMD) {
		return
	}
	body := in.Body()
	n := len(body.Args)
	if n == 0 || len(in.Operands) != 2*n || len(in.Results) != 0 {
		c.errorf(in.OpPos(), "foreach needs one lower and one upper bound per loop variable (at least one)")
		return
	}
	t := body.Args[0].Type
	if !t.IsInteger() {
		c.errorf(in.TypePos(), "the loop variables of foreach must have integer type, found %s", t)
	}
	for _, a := range body.Args {
		if a.Type != t {
			c.errorf(a.Pos, "all loop variables of foreach must have the same type")
		}
	}
	for i := range in.Operands {
		if in.Operands[i].Type != t {
			c.errorf(in.OperandPos(i), "foreach bound %s has type %s, but the loop variables have type %s", name(in.Operands[i]), in.Operands[i].Type, t)
		}
	}
	c.region(body, ir.RegionSPMD)
}

// foreachTile checks the bounds (an integer type per mode, the same for
// its lower and upper bound), the tile shape (positive; its first entry a
// multiple of the subgroup size when the function fixes one) and the
// region's offsets and sizes (of their mode's type).
func (c *checker) foreachTile(in *ir.Inst, kind ir.RegionKind) {
	if !c.regions(in, 1, ir.RegionSPMD) {
		return
	}
	body := in.Body()
	n := len(in.Static)
	if n == 0 || len(in.Operands) != 2*n || len(body.Args) != 2*n || len(in.Results) != 0 {
		c.errorf(in.OpPos(), "foreach_tile needs a lower and an upper bound, a tile offset, a tile size and a tile shape entry per mode (at least one)")
		return
	}
	from, to := in.ForeachBounds()
	for i := range n {
		t := from[i].Type
		switch {
		case !t.IsInteger():
			c.errorf(in.OperandPos(i), "foreach_tile bound %s must have integer type, found %s", name(from[i]), t)
		case to[i].Type != t:
			c.errorf(in.OperandPos(n+i), "foreach_tile bound %s has type %s, but its lower bound has type %s", name(to[i]), to[i].Type, t)
		}
		for _, a := range []*ir.Value{body.Args[i], body.Args[n+i]} {
			if a.Type != t {
				c.errorf(a.Pos, "%%%s has type %s, but the bounds of its mode have type %s", a.Name, a.Type, t)
			}
		}
		if in.Static[i] <= 0 {
			c.errorf(in.OpPos(), "tile shape entry %d is not positive", in.Static[i])
		}
	}
	if c.sgs > 0 && in.Static[0]%c.sgs != 0 {
		c.errorf(in.OpPos(), "the first tile shape entry %d must be a multiple of the subgroup size %d", in.Static[0], c.sgs)
	}
	c.region(body, ir.RegionSPMD)
}

func (c *checker) parallel(in *ir.Inst, kind ir.RegionKind) {
	if !c.count(in, 0, 0) || !c.regions(in, 1, ir.RegionSPMD) {
		return
	}
	if len(in.Body().Args) != 0 {
		c.errorf(in.OpPos(), "the region of parallel has no arguments")
	}
	c.region(in.Body(), ir.RegionSPMD)
}

// carriedType reports whether t can be yielded, carried or returned by
// for and if: bool, scalar or coopmatrix.
func carriedType(t *ir.Type) bool {
	return t.Kind() == ir.KindBool || t.IsScalar() || t.Kind() == ir.KindCoopmatrix
}

func (c *checker) forLoop(in *ir.Inst, kind ir.RegionKind) {
	if !c.regions(in, 1, ir.RegionInherit) {
		return
	}
	body := in.Body()
	bounds := 2
	if in.HasStep {
		bounds = 3
	}
	carried := len(in.Operands) - bounds
	if carried < 0 || len(body.Args) != carried+1 || len(in.Results) != carried {
		c.errorf(in.OpPos(), "for has %d operands, %d region arguments and %d results; they do not match", len(in.Operands), len(body.Args), len(in.Results))
		return
	}
	iv := body.Args[0].Type
	if !iv.IsInteger() {
		c.errorf(in.TypePos(), "the loop variable of for must have integer type, found %s", iv)
	}
	for i := 0; i < bounds; i++ {
		if in.Operands[i].Type != iv {
			c.errorf(in.OperandPos(i), "for bound %s has type %s, but the loop variable has type %s", name(in.Operands[i]), in.Operands[i].Type, iv)
		}
	}
	for i := range carried {
		init, arg, res := in.Operands[bounds+i], body.Args[i+1], in.Results[i]
		if !carriedType(res.Type) {
			c.errorf(in.TypePos(), "loop-carried value %d has type %s; only bool, scalar and coopmatrix types can be carried", i, res.Type)
		}
		if init.Type != res.Type || arg.Type != res.Type {
			c.errorf(in.OperandPos(bounds+i), "initial value %s has type %s, but the loop-carried value has type %s", name(init), init.Type, res.Type)
		}
	}
	for _, a := range in.Attrs {
		switch a.Name {
		case ir.AttrUnroll:
			if a.Value.Kind != ir.AttrBool {
				c.errorf(attrPos(a, in.OpPos()), "unroll must be true or false, found %s", a.Value)
			}
		case ir.AttrAlignment, ir.AttrShapeGCD, ir.AttrStrideGCD, ir.AttrSubgroupSize, ir.AttrWorkGroupSize:
			c.errorf(attrPos(a, in.OpPos()), "%s is not a for attribute", a.Name)
		}
	}
	c.uniqueNames(in.Attrs)
	c.region(body, effective(body, kind))
	c.yields(in, body, c.typesOf(in.Results), carried > 0)
}

// typesOf returns the types of vs in a buffer of c's, good until the next
// call: for and if take it after verifying their regions (which may hold
// loops of their own). A slice made for every loop's types was the
// verifier's only allocation on a lowered GEMM.
func (c *checker) typesOf(vs []*ir.Value) []*ir.Type {
	c.types = c.types[:0]
	for _, v := range vs {
		c.types = append(c.types, v.Type)
	}
	return c.types
}

// yields checks the terminator of a for or if region against the result
// types; required says whether a yield must be present.
func (c *checker) yields(in *ir.Inst, r *ir.Region, types []*ir.Type, required bool) {
	y := r.Terminator()
	if y == nil {
		if required {
			pos := in.OpPos()
			if n := len(r.Insts); n > 0 {
				pos = r.Insts[n-1].Pos
			}
			c.errorf(pos, "the region of %s must end with a yield of %d values", in.Op, len(types))
		}
		return
	}
	if len(y.Operands) != len(types) {
		c.errorf(y.OpPos(), "yield gives %d values but %s returns %d", len(y.Operands), in.Op, len(types))
		return
	}
	for i, v := range y.Operands {
		if v != nil && v.Type != types[i] {
			c.errorf(y.OperandPos(i), "yielded value %s has type %s, but %s returns %s", name(v), v.Type, in.Op, types[i])
		}
	}
}

func (c *checker) ifElse(in *ir.Inst, kind ir.RegionKind) {
	if len(in.Operands) != 1 || !c.regions(in, 2, ir.RegionInherit) {
		c.count(in, 1, len(in.Results))
		return
	}
	c.want(in, 0, "of type bool", func(t *ir.Type) bool { return t == ir.Bool })
	for _, r := range in.Results {
		if !carriedType(r.Type) {
			c.errorf(in.TypePos(), "if cannot return type %s; only bool, scalar and coopmatrix types", r.Type)
		}
	}
	then, els := in.Regions[0], in.Regions[1]
	c.region(then, effective(then, kind))
	c.region(els, effective(els, kind))
	types := c.typesOf(in.Results)
	c.yields(in, then, types, len(types) > 0)
	if len(types) > 0 && len(els.Insts) == 0 {
		c.errorf(in.OpPos(), "if returns values, so the else region cannot be omitted")
		return
	}
	c.yields(in, els, types, len(types) > 0)
}

func (c *checker) yield(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Results) != 0 {
		c.count(in, len(in.Operands), 0)
	}
	if in.Parent == nil || in.Parent.Parent == nil || (in.Parent.Parent.Op != ir.OpFor && in.Parent.Parent.Op != ir.OpIf && in.Parent.Parent.Op != ir.OpCoopMatrixApply) {
		c.errorf(in.OpPos(), "yield can only end the region of a for, an if or a cooperative_matrix_apply")
	}
}

func (c *checker) barrier(in *ir.Inst, _ ir.RegionKind) { c.count(in, 0, 0) }

func (c *checker) lifetimeStop(in *ir.Inst, _ ir.RegionKind) {
	if c.count(in, 1, 0) {
		c.want(in, 0, "a memref", isMemref)
	}
}

func (c *checker) builtin(in *ir.Inst, _ ir.RegionKind) {
	if c.count(in, 0, 1) {
		c.resultIs(in, in.Builtin.ResultType())
	}
}

// arithAllowed says which types each binary operation accepts.
func arithAllowed(op ir.ArithOp, t *ir.Type) (ok bool, what string) {
	switch op {
	case ir.Add, ir.Sub, ir.Mul, ir.Div:
		return t.IsScalar() || t.Kind() == ir.KindCoopmatrix, "a scalar or coopmatrix type"
	case ir.Rem, ir.Min, ir.Max:
		return t.IsScalar() && !t.IsComplex(), "an integer or floating type"
	case ir.Shl, ir.Shr:
		return t.IsInteger(), "an integer type"
	}
	return t.IsInteger() || t == ir.Bool, "bool or an integer type" // and, or, xor
}

func (c *checker) arith(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 2, 1) {
		return
	}
	t := in.Results[0].Type
	if ok, what := arithAllowed(in.Arith, t); !ok {
		c.errorf(in.TypePos(), "%s needs %s, found %s", in.Mnemonic(), what, t)
		return
	}
	if in.Operands[0].Type != t || in.Operands[1].Type != t { // (the test without a call: arith is most of a lowered kernel)
		c.operandsOfType(in, t)
	}
}

// operandsOfType reports the operands that do not have type t.
func (c *checker) operandsOfType(in *ir.Inst, t *ir.Type) {
	for i, v := range in.Operands {
		if v.Type != t {
			c.errorf(in.OperandPos(i), "%s: operand %s has type %s, but the instruction computes %s (operands and result must have the same type)", in.Mnemonic(), name(v), v.Type, t)
		}
	}
}

func (c *checker) arithUnary(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) {
		return
	}
	x := in.Operands[0].Type
	var ok bool
	var what string
	switch in.Unary {
	case ir.Abs:
		ok, what = x.IsScalar(), "a scalar type"
	case ir.Neg:
		ok, what = x.IsScalar() || x.Kind() == ir.KindCoopmatrix, "a scalar or coopmatrix type"
	case ir.Not:
		ok, what = x.IsInteger() || x == ir.Bool, "bool or an integer type"
	default: // conj, im, re
		ok, what = x.IsComplex(), "a complex type"
	}
	if !ok {
		c.errorf(in.OperandPos(0), "%s needs %s, found %s", in.Mnemonic(), what, x)
		return
	}
	want := x
	if in.Unary == ir.Abs || in.Unary == ir.Im || in.Unary == ir.Re {
		want = x.ComponentType()
	}
	c.resultIs(in, want)
}

func (c *checker) math(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) {
		return
	}
	ok := func(t *ir.Type) bool { return t.IsFloat() }
	what := "a floating type"
	if in.Math.AcceptsComplex() {
		ok = func(t *ir.Type) bool { return t.IsFloat() || t.IsComplex() }
		what = "a floating or complex type"
	}
	if c.want(in, 0, what, ok) {
		c.resultIs(in, in.Operands[0].Type)
	}
}

func (c *checker) cmp(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 2, 1) {
		return
	}
	c.resultIs(in, ir.Bool)
	a, b := in.Operands[0].Type, in.Operands[1].Type
	if !c.want(in, 0, "a scalar", isScalar) {
		return
	}
	if a != b {
		c.errorf(in.OperandPos(1), "%s: both operands must have the same type, found %s and %s", in.Mnemonic(), a, b)
	}
	if a.IsComplex() && in.Cmp != ir.Eq && in.Cmp != ir.Ne {
		c.errorf(in.OpPos(), "%s: complex numbers are unordered; only cmp.eq and cmp.ne accept %s", in.Mnemonic(), a)
	}
}

// castAllowed implements the cast table: anything between integer,
// floating and complex types except from complex to non-complex.
func castAllowed(from, to *ir.Type) bool {
	return from.IsScalar() && to.IsScalar() && (!from.IsComplex() || to.IsComplex())
}

func (c *checker) cast(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) {
		return
	}
	from, to := in.Operands[0].Type, in.Results[0].Type
	switch {
	case from.Kind() == ir.KindCoopmatrix && to.Kind() == ir.KindCoopmatrix:
		if from.Rows() != to.Rows() || from.Cols() != to.Cols() || from.Use() != to.Use() {
			c.errorf(in.TypePos(), "cast of coopmatrices keeps shape and use: %s cannot become %s", from, to)
			return
		}
		from, to = from.Elem(), to.Elem()
	case !from.IsScalar() || !to.IsScalar():
		c.errorf(in.TypePos(), "cast converts scalars or coopmatrices, not %s to %s", from, to)
		return
	}
	if !castAllowed(from, to) {
		c.errorf(in.TypePos(), "cast from complex type %s to non-complex type %s is forbidden (use arith.re, arith.im or arith.abs)", from, to)
	}
}

// floatMax is the largest finite value of each floating kind, by kind (an
// array: a map lookup per floating constant was a fortieth of verifying a
// lowered GEMM).
var floatMax = [...]float64{
	ir.KindBF16: 3.3895313892515355e38, ir.KindF16: 65504, ir.KindF32: math.MaxFloat32, ir.KindF64: math.MaxFloat64,
	ir.KindC32: math.MaxFloat32, ir.KindC64: math.MaxFloat64,
}

func (c *checker) constant(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 0, 1) {
		return
	}
	t := in.Results[0].Type
	if t.Kind() == ir.KindCoopmatrix {
		c.resultType(in, t)
		t = t.Elem()
	}
	k := in.Const
	var want ir.ConstKind
	switch {
	case t == ir.Bool:
		want = ir.ConstBool
	case t.IsInteger():
		want = ir.ConstInt
	case t.IsFloat():
		want = ir.ConstFloat
	case t.IsComplex():
		want = ir.ConstComplex
	default:
		c.errorf(in.TypePos(), "constant must have bool, scalar or coopmatrix type, found %s", t)
		return
	}
	if k.Kind != want {
		c.errorf(in.OpPos(), "constant %s does not match type %s (%s)", k, in.Results[0].Type, constantHint[want])
		return
	}
	switch want {
	case ir.ConstInt:
		if !intFits(k.Int, t) {
			c.errorf(in.OpPos(), "integer constant %d does not fit in %s", k.Int, t)
		}
	case ir.ConstFloat, ir.ConstComplex:
		over := func(f float64) bool { return !math.IsInf(f, 0) && math.Abs(f) > floatMax[t.Kind()] }
		if over(k.Float) || over(k.Imag) {
			c.errorf(in.OpPos(), "floating constant %s overflows %s", k, t)
		}
	}
}

var constantHint = map[ir.ConstKind]string{
	ir.ConstBool:    "write true or false",
	ir.ConstInt:     "write an integer such as 1",
	ir.ConstFloat:   "write a floating constant such as 1.0",
	ir.ConstComplex: "write a complex constant such as [1.0, 0.0]",
}

// intFits reports whether v is representable in the n bits of t, read as
// signed or unsigned (integers are signless): -2^(n-1) ≤ v ≤ 2^n-1.
func intFits(v int64, t *ir.Type) bool {
	bits := t.Bits()
	if bits >= 64 {
		return true
	}
	return v >= -(int64(1)<<(bits-1)) && v <= int64(1)<<bits-1
}
