package check

import (
	"strconv"

	"tltune/compiler/ir"
)

func (c *checker) load(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Operands) < 1 || len(in.Results) != 1 {
		c.count(in, 1, 1)
		return
	}
	t := in.Operands[0].Type
	idx := len(in.Operands) - 1
	switch t.Kind() {
	case ir.KindMemref:
		if idx != t.Order() {
			c.errorf(in.OpPos(), "load from %s (order %d) needs %d indices, found %d", name(in.Operands[0]), t.Order(), t.Order(), idx)
		}
		c.resultIs(in, t.Elem())
	case ir.KindGroup:
		if idx != 1 {
			c.errorf(in.OpPos(), "load from group %s needs exactly 1 index, found %d", name(in.Operands[0]), idx)
		}
		c.resultIs(in, t.Elem())
	default:
		c.want(in, 0, "a memref or group", isMemref)
		return
	}
	c.indices(in, 1)
}

func (c *checker) store(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Operands) < 2 || len(in.Results) != 0 {
		c.count(in, 2, 0)
		return
	}
	if !c.want(in, 1, "a memref", isMemref) || !c.want(in, 0, "a scalar", isScalar) {
		return
	}
	m := in.Operands[1].Type
	if idx := len(in.Operands) - 2; idx != m.Order() {
		c.errorf(in.OpPos(), "store into %s (order %d) needs %d indices, found %d", name(in.Operands[1]), m.Order(), m.Order(), idx)
	}
	if v := in.Operands[0].Type; v != m.Elem() {
		c.errorf(in.OperandPos(0), "%s: %s has type %s, but the element type of %s is %s", in.Op, name(in.Operands[0]), v, name(in.Operands[1]), m.Elem())
	}
	c.indices(in, 2)
	c.atomicOrder(in, m.Elem())
}

func (c *checker) vectorLoad(in *ir.Inst, _ ir.RegionKind) {
	if len(in.Operands) < 1 || len(in.Results) < 1 {
		c.count(in, 1, 2)
		return
	}
	if !c.want(in, 0, "a memref", isMemref) {
		return
	}
	m := in.Operands[0]
	c.vectorAccess(in, m, len(in.Operands)-1, len(in.Results))
	for _, r := range in.Results {
		if r.Type != m.Type.Elem() {
			c.errorf(in.TypePos(), "vector_load from %s returns %s, not %s", name(m), m.Type.Elem(), r.Type)
			break
		}
	}
	c.indices(in, 1)
}

func (c *checker) vectorStore(in *ir.Inst, _ ir.RegionKind) {
	xs, m, _ := in.VectorStoreOperands()
	if m == nil || len(in.Results) != 0 {
		c.count(in, 3, 0)
		return
	}
	c.vectorAccess(in, m, len(in.Operands)-len(xs)-1, len(xs))
	for i, x := range xs {
		if x.Type != m.Type.Elem() {
			c.errorf(in.OperandPos(i), "vector_store: %s has type %s, but the element type of %s is %s", name(x), x.Type, name(m), m.Type.Elem())
		}
	}
	c.indices(in, len(xs)+1)
}

// vectorAccess checks what vector_load and vector_store share: one index
// per mode, a valid width and a memref contiguous in mode 0.
func (c *checker) vectorAccess(in *ir.Inst, m *ir.Value, indices, width int) {
	t := m.Type
	if indices != t.Order() {
		c.errorf(in.OpPos(), "%s on %s (order %d) needs %d indices, found %d", in.Op, name(m), t.Order(), t.Order(), indices)
	}
	if err := ir.ValidVectorWidth(width, t.Elem()); err != nil {
		c.errorf(in.OpPos(), "%s: %v", in.Op, err)
	}
	if t.Order() == 0 || t.Stride()[0] != 1 {
		c.errorf(in.OpPos(), "%s needs a memref whose mode 0 has the static stride 1; %s is %s", in.Op, name(m), t)
	}
}

func (c *checker) size(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) {
		return
	}
	c.resultIs(in, ir.Index)
	switch t := in.Operands[0].Type; t.Kind() {
	case ir.KindMemref:
		if in.Mode < 0 || in.Mode >= int64(t.Order()) {
			c.errorf(in.ModePos(), "size: mode %d out of range; %s has modes 0 to %d", in.Mode, name(in.Operands[0]), t.Order()-1)
		}
	case ir.KindGroup:
		if in.Mode != 0 {
			c.errorf(in.ModePos(), "size of a group: the mode must be 0, found %d", in.Mode)
		}
	default:
		c.want(in, 0, "a memref or group", isMemref)
	}
}

// view checks what expand, fuse and subview share: a memref operand and a
// memref result of the same element type and address space. It returns the
// operand and result types, or nil.
func (c *checker) view(in *ir.Inst) (src, dst *ir.Type) {
	if len(in.Operands) < 1 || len(in.Results) != 1 {
		c.count(in, 1, 1)
		return nil, nil
	}
	if !c.want(in, 0, "a memref", isMemref) {
		return nil, nil
	}
	src, dst = in.Operands[0].Type, in.Results[0].Type
	if dst.Kind() != ir.KindMemref {
		c.errorf(in.TypePos(), "%s returns a memref, found %s", in.Op, dst)
		return nil, nil
	}
	if !c.resultType(in, dst) {
		return nil, nil
	}
	if src.Elem() != dst.Elem() || src.Space() != dst.Space() {
		c.errorf(in.TypePos(), "%s keeps element type and address space: %s cannot become %s", in.Op, src, dst)
		return nil, nil
	}
	return src, dst
}

// matchView compares the result type of a view with the shape and strides
// the rules prescribe. Shapes must match exactly; a stride may be written
// '?' instead of a known value, but a stride that cannot be known must be
// '?'.
func (c *checker) matchView(in *ir.Inst, dst *ir.Type, shape, stride []int64) {
	if len(shape) != dst.Order() {
		c.errorf(in.TypePos(), "%s: the result must have order %d, found %s", in.Op, len(shape), dst)
		return
	}
	for i, n := range shape {
		if dst.Shape()[i] != n {
			c.errorf(in.TypePos(), "%s: mode %d of the result must have size %s, found %s", in.Op, i, dimString(n), dst)
			return
		}
	}
	for i, s := range stride {
		got := dst.Stride()[i]
		switch {
		case got == ir.Dynamic || got == s:
		case s == ir.Dynamic:
			c.errorf(in.TypePos(), "%s: stride %d of the result is not known at compile time; write '?' instead of %d", in.Op, i, got)
			return
		default:
			c.errorf(in.TypePos(), "%s: stride %d of the result must be %d (or '?'), found %d", in.Op, i, s, got)
			return
		}
	}
}

func dimString(n int64) string {
	if n == ir.Dynamic {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

// product multiplies sizes; Dynamic if any is dynamic or it overflows.
func product(ns []int64) int64 {
	p := int64(1)
	for _, n := range ns {
		if n == ir.Dynamic {
			return ir.Dynamic
		}
		q, ok := mul(p, n)
		if !ok {
			return ir.Dynamic
		}
		p = q
	}
	return p
}

func (c *checker) expand(in *ir.Inst, _ ir.RegionKind) {
	src, dst := c.view(in)
	if src == nil {
		return
	}
	dynamic := 0
	for _, s := range in.Static {
		if s == ir.Dynamic {
			dynamic++
		}
	}
	if len(in.Operands) != 1+dynamic || len(in.Static) < 2 {
		c.errorf(in.OpPos(), "expand: the expand shape needs at least 2 entries and one operand per dynamic entry")
		return
	}
	c.indices(in, 1)
	m := int(in.Mode)
	if in.Mode < 0 || in.Mode >= int64(src.Order()) {
		c.errorf(in.ModePos(), "expand: mode %d out of range; %s has modes 0 to %d", in.Mode, name(in.Operands[0]), src.Order()-1)
		return
	}
	size := src.Shape()[m]
	var statics []int64
	for i, s := range in.Static {
		switch {
		case s == ir.Dynamic:
		case s < 1:
			c.errorf(in.OpPos(), "expand: entry %d of the expand shape must be positive, found %d", i, s)
			return
		default:
			statics = append(statics, s)
		}
	}
	p := product(statics)
	switch {
	case size == ir.Dynamic || p == ir.Dynamic:
	case dynamic == 0 && p != size:
		c.errorf(in.OpPos(), "expand: the expand shape has %d elements but mode %d of %s has size %d", p, m, name(in.Operands[0]), size)
	case dynamic > 0 && size%p != 0:
		c.errorf(in.OpPos(), "expand: the constant part of the expand shape (%d) does not divide mode %d of %s (size %d)", p, m, name(in.Operands[0]), size)
	}
	shape := append(append(append([]int64{}, src.Shape()[:m]...), in.Static...), src.Shape()[m+1:]...)
	stride := append([]int64{}, src.Stride()[:m]...)
	s := src.Stride()[m]
	for _, e := range in.Static {
		stride = append(stride, s)
		s = product([]int64{s, e})
	}
	stride = append(stride, src.Stride()[m+1:]...)
	c.matchView(in, dst, shape, stride)
}

func (c *checker) fuse(in *ir.Inst, _ ir.RegionKind) {
	src, dst := c.view(in)
	if src == nil {
		return
	}
	if !c.count(in, 1, 1) {
		return
	}
	from, to := in.Mode, in.ModeTo
	if from < 0 || from >= to || to >= int64(src.Order()) {
		c.errorf(in.ModePos(), "fuse: need 0 ≤ from < to < order = %d, found [%d, %d]", src.Order(), from, to)
		return
	}
	sh, st := src.Shape(), src.Stride()
	for k := from; k < to; k++ {
		if sh[k] == ir.Dynamic || st[k] == ir.Dynamic || st[k+1] == ir.Dynamic {
			continue
		}
		if p, ok := mul(st[k], sh[k]); !ok || p != st[k+1] {
			c.errorf(in.ModePos(), "fuse: modes %d and %d of %s cannot be fused: stride×size of mode %d is %d, but the stride of mode %d is %d", k, k+1, name(in.Operands[0]), k, p, k+1, st[k+1])
			return
		}
	}
	shape := append(append(append([]int64{}, sh[:from]...), product(sh[from:to+1])), sh[to+1:]...)
	stride := append(append([]int64{}, st[:from+1]...), st[to+1:]...)
	c.matchView(in, dst, shape, stride)
}

func (c *checker) subview(in *ir.Inst, _ ir.RegionKind) {
	src, dst := c.view(in)
	if src == nil {
		return
	}
	dynamic := 0
	for i := range in.Offsets {
		if in.Offsets[i] == ir.Dynamic {
			dynamic++
		}
		if i < len(in.Sizes) && in.Sizes[i] == ir.Dynamic {
			dynamic++
		}
	}
	if len(in.Sizes) != len(in.Offsets) || len(in.Operands) != 1+dynamic {
		c.errorf(in.OpPos(), "subview: offsets, sizes and dynamic operands do not match")
		return
	}
	if len(in.Offsets) != src.Order() {
		c.errorf(in.OpPos(), "subview of %s (order %d) needs %d slices, found %d", name(in.Operands[0]), src.Order(), src.Order(), len(in.Offsets))
		return
	}
	c.indices(in, 1)
	var shape, stride []int64
	for i := range in.Offsets {
		off, size, n := in.Offsets[i], in.Sizes[i], src.Shape()[i]
		switch {
		case off != ir.Dynamic && off < 0:
			c.errorf(in.OpPos(), "subview: offset %d of mode %d is negative", off, i)
			return
		case size != ir.Dynamic && size < 0:
			c.errorf(in.OpPos(), "subview: size %d of mode %d is negative", size, i)
			return
		case off != ir.Dynamic && size != ir.Dynamic && n != ir.Dynamic && (off+size > n || size == 0 && off >= n):
			c.errorf(in.OpPos(), "subview: slice %d:%d of mode %d is out of bounds (size %d)", off, size, i, n)
			return
		}
		if size == 0 {
			continue // rank reduction
		}
		shape = append(shape, size)
		stride = append(stride, src.Stride()[i])
	}
	c.matchView(in, dst, shape, stride)
}

// ---- SPMD instructions ----

// coopIndexed checks the memref and the two index operands of a
// cooperative matrix load or store (operand m is the memref), and that the
// element type equals the component type comp.
func (c *checker) coopIndexed(in *ir.Inst, m int, comp *ir.Type, pos ir.Pos) {
	if !c.want(in, m, "a memref", isMemref) || !c.orderIs(in, m, 2) {
		return
	}
	c.indices(in, m+1)
	if e := in.Operands[m].Type.Elem(); e != comp {
		c.errorf(pos, "%s: the coopmatrix component type %s must equal the element type %s of %s", in.Mnemonic(), comp, e, name(in.Operands[m]))
	}
}

func (c *checker) coopLoad(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 3, 1) {
		return
	}
	t := in.Results[0].Type
	if t.Kind() != ir.KindCoopmatrix {
		c.errorf(in.TypePos(), "cooperative_matrix_load returns a coopmatrix, found %s", t)
		return
	}
	if c.resultType(in, t) {
		c.coopIndexed(in, 0, t.Elem(), in.TypePos())
	}
	c.notAtomic(in)
}

func (c *checker) notAtomic(in *ir.Inst) {
	if in.Atomic != ir.NotAtomic {
		c.errorf(in.OpPos(), "%s has no atomic form", in.Op)
	}
}

func (c *checker) coopStore(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 4, len(in.Results)) || !c.want(in, 0, "a coopmatrix", isCoop) {
		return
	}
	c.coopIndexed(in, 1, in.Operands[0].Type.Elem(), in.OperandPos(0))
	c.atomicOrder(in, in.Operands[0].Type.Elem())
}

// atomicOrder rejects .atomic_max and .atomic_min on complex numbers.
func (c *checker) atomicOrder(in *ir.Inst, t *ir.Type) {
	if (in.Atomic == ir.AtomicMax || in.Atomic == ir.AtomicMin) && t.IsComplex() {
		c.errorf(in.OpPos(), "%s: complex numbers have no order", in.Mnemonic())
	}
}

func (c *checker) coopMulAdd(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 3, 1) {
		return
	}
	uses := [3]ir.MatrixUse{ir.MatrixA, ir.MatrixB, ir.MatrixAcc}
	for i, u := range uses {
		if !c.want(in, i, "a coopmatrix", isCoop) {
			return
		}
		if got := in.Operands[i].Type.Use(); got != u {
			c.errorf(in.OperandPos(i), "cooperative_matrix_mul_add: operand %d (%s) must have use %s, found %s", i+1, name(in.Operands[i]), u, got)
			return
		}
	}
	a, b, acc, d := in.Operands[0].Type, in.Operands[1].Type, in.Operands[2].Type, in.Results[0].Type
	if d.Kind() != ir.KindCoopmatrix || d.Use() != ir.MatrixAcc {
		c.errorf(in.TypePos(), "cooperative_matrix_mul_add returns a matrix_acc coopmatrix, found %s", d)
		return
	}
	switch {
	case a.Cols() != b.Rows():
		c.errorf(in.OperandPos(1), "cooperative_matrix_mul_add: columns(A) = %d must equal rows(B) = %d", a.Cols(), b.Rows())
	case acc.Rows() != a.Rows() || acc.Cols() != b.Cols():
		c.errorf(in.OperandPos(2), "cooperative_matrix_mul_add: C must be %dx%d (rows(A) x columns(B)), found %dx%d", a.Rows(), b.Cols(), acc.Rows(), acc.Cols())
	case d.Rows() != acc.Rows() || d.Cols() != acc.Cols():
		c.errorf(in.TypePos(), "cooperative_matrix_mul_add: the result must have the shape of C (%dx%d), found %s", acc.Rows(), acc.Cols(), d)
	}
	p := c.promotions.promote(a.Elem(), b.Elem())
	switch {
	case p == nil:
		c.errorf(in.OperandPos(1), "cooperative_matrix_mul_add: component types %s and %s do not promote to a common type", a.Elem(), b.Elem())
	case !c.promotions.promotable(p, acc.Elem()):
		c.errorf(in.OperandPos(2), "cooperative_matrix_mul_add: the product type %s does not promote to the component type %s of C", p, acc.Elem())
	}
	if !castAllowed(acc.Elem(), d.Elem()) {
		c.errorf(in.TypePos(), "cooperative_matrix_mul_add: C's component type %s cannot be cast to the result's %s", acc.Elem(), d.Elem())
	}
}

func (c *checker) coopScale(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 2, 1) || !c.want(in, 0, "a scalar", isScalar) || !c.want(in, 1, "a coopmatrix", isCoop) {
		return
	}
	s, m := in.Operands[0].Type, in.Operands[1].Type
	if s != m.Elem() {
		c.errorf(in.OperandPos(0), "cooperative_matrix_scale: the scalar has type %s but the matrix components are %s", s, m.Elem())
	}
	c.resultIs(in, m)
}

func (c *checker) broadcast(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 2, 1) || !c.want(in, 0, "a scalar", isScalar) {
		return
	}
	c.want(in, 1, "of type i32", func(t *ir.Type) bool { return t == ir.I32 })
	c.resultIs(in, in.Operands[0].Type)
}

func (c *checker) subgroupOp(in *ir.Inst, _ ir.RegionKind) {
	if !c.count(in, 1, 1) || !c.want(in, 0, "a scalar", isScalar) {
		return
	}
	if in.Op != ir.OpSubgroupAdd && in.Operands[0].Type.IsComplex() {
		c.errorf(in.OperandPos(0), "%s is not defined for complex type %s", in.Mnemonic(), in.Operands[0].Type)
	}
	c.resultIs(in, in.Operands[0].Type)
}
