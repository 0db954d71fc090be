package spirv

import (
	"fmt"
	"math"

	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Cooperative matrices: a matrix of R rows and C columns is spread over the
// lanes of a subgroup of size sgs row by row, lane l holding rows l, l+sgs,
// ...; element k = i*C + c of a lane is row l + i*sgs, column c. Each
// element is its own SSA value.

// perLane is the number of elements a lane holds of coopmatrix value v.
func (e *fn) perLane(v *ir.Value) int {
	t := v.Type
	if e.inFragments(v) {
		fr := dpasFragment(t.Use(), e.launch.SubgroupSize)
		return int(t.Rows()) / fr.Rows * int(t.Cols()) / fr.Cols * fr.Per
	}
	return ceilDiv(int(t.Rows()), e.launch.SubgroupSize) * int(t.Cols())
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (e *fn) coop(v *ir.Value) []spv.ID {
	if ids, ok := e.coops[v]; ok {
		return ids
	}
	panic(fmt.Sprintf("spirv: coopmatrix %%%s used before it was written", v.Name))
}

// coopElementwise defines v element by element from the elements of srcs.
func (e *fn) coopElementwise(v *ir.Value, f func(x []spv.ID) (spv.ID, error), srcs ...*ir.Value) error {
	out := e.idLists.take(e.perLane(v))
	x := e.idLists.take(len(srcs))
	var room [4][]spv.ID // the sources' elements, looked up once, not per element
	elems := room[:0]
	for _, s := range srcs {
		elems = append(elems, e.coop(s))
	}
	for k := range out {
		for i, s := range elems {
			x[i] = s[k]
		}
		id, err := f(x)
		if err != nil {
			return err
		}
		out[k] = id
	}
	e.coops[v] = out
	return nil
}

func (e *fn) coopScale(in *ir.Inst) {
	s := e.value(in.Operands[0])
	t := in.Result().Type.Elem()
	mul := e.binaryOf(ir.Mul, t)
	_ = e.coopElementwise(in.Result(), func(x []spv.ID) (spv.ID, error) {
		return e.apply(mul, s, x[0])
	}, in.Operands[1])
}

// row returns the i-th row this lane holds as an index dim, and whether
// the lane may hold none (rows not a multiple of the subgroup size).
func (e *fn) row(i int, rows int) (r *dim, partial spv.ID) {
	sgs := e.launch.SubgroupSize
	if sgs == 1 {
		return constDim(int64(i)), 0
	}
	lane := e.newDim(e.op(spv.OpSConvert, e.u.intT(64), e.lane))
	r = e.add(lane, constDim(int64(i*sgs)))
	if (i+1)*sgs > rows {
		partial = e.op(spv.OpSLessThan, e.u.boolT(), r.id, e.u.i64(int64(rows)))
	}
	return r, partial
}

// accessor computes the element offsets and the bounds conditions of a
// cooperative-matrix access to m at (x, y), transposed or not, checked as
// asked. The elements of a row slot share its part, those of a column
// theirs: each part (the row or column in m, its term of the offset, its
// bounds check) is computed once, so that an unrolled element costs one
// addition and a conjunction per condition it combines. (A generic
// module repeated every part for every element: a third of its
// instructions.)
type accessor struct {
	e                  *fn
	m                  *memref
	x, y               *dim
	trans              bool
	checkRow, checkCol bool         // m's modes to check
	xs, ys             []accessPart // by the element rows' and columns' numbers (eachElement's ri, ci)
}

// accessPart is a row's or column's part of the elements' offsets in m.
type accessPart struct {
	term *dim   // (x + row)·stride[0] or (y + column)·stride[1]; nil until computed
	cond spv.ID // its bounds check (0: unchecked)
}

// newAccessor returns the accessor for the elements of coopmatrix value v.
func (e *fn) newAccessor(m *memref, x, y *dim, v *ir.Value, trans bool, checked ir.Checked) accessor {
	a := accessor{e: e, m: m, x: x, y: y, trans: trans,
		checkRow: checked == ir.RowsChecked || checked == ir.BothChecked,
		checkCol: checked == ir.ColsChecked || checked == ir.BothChecked}
	rows, cols := int(v.Type.Rows()), int(v.Type.Cols())
	if !e.inFragments(v) {
		rows = ceilDiv(rows, e.launch.SubgroupSize) // the lane's row slots
	}
	a.xs, a.ys = e.parts.take(rows), e.parts.take(cols)
	if trans {
		a.xs, a.ys = a.ys, a.xs
		a.checkRow, a.checkCol = a.checkCol, a.checkRow
	}
	return a
}

// at returns the element offset of the element at matrix row r and
// column c, numbered ri and ci (eachElement's), and its bounds condition
// (0: none), which includes partial (the lane may hold no row r).
func (a *accessor) at(ri, ci int, r, c *dim, partial spv.ID) (*dim, spv.ID) {
	xi, xd, yi, yd := ri, r, ci, c // indices and dims of the parts along m's rows and columns
	if a.trans {
		xi, xd, yi, yd = ci, c, ri, r
	}
	row := a.part(&a.xs[xi], a.x, xd, 0, a.checkRow)
	col := a.part(&a.ys[yi], a.y, yd, 1, a.checkCol)
	cond := partial
	for _, c := range [2]spv.ID{row.cond, col.cond} {
		switch {
		case c == 0:
		case cond == 0:
			cond = c
		default:
			cond = a.e.op(spv.OpLogicalAnd, a.e.u.boolT(), cond, c)
		}
	}
	return a.e.add(row.term, col.term), cond
}

// part returns *p, computing it first if need be: base + d along mode of
// m.
func (a *accessor) part(p *accessPart, base, d *dim, mode int, check bool) *accessPart {
	if p.term == nil {
		pos := a.e.add(base, d)
		if check {
			p.cond = a.e.inRange(pos, a.m.shape[mode])
		}
		p.term = a.e.mul(pos, a.m.stride[mode])
	}
	return p
}

// inRange is 0 <= i < n (one unsigned comparison).
func (e *fn) inRange(i, n *dim) spv.ID {
	return e.op(spv.OpULessThan, e.u.boolT(), e.dimID(i), e.dimID(n))
}

// guarded runs body only when cond holds (cond 0: always) and returns its
// value, or otherwise when it has one (body returning 0 has none).
func (e *fn) guarded(cond spv.ID, t, otherwise spv.ID, body func() spv.ID) spv.ID {
	if cond == 0 {
		return body()
	}
	then, merge := e.b.NewID(), e.b.NewID()
	from := e.block
	e.b.Emit(spv.OpSelectionMerge, 0, uint32(merge), uint32(spv.SelectionControlNone))
	e.b.Emit(spv.OpBranchConditional, 0, uint32(cond), uint32(then), uint32(merge))
	e.label(then)
	v := body()
	end := e.block
	e.branch(merge)
	e.label(merge)
	if v == 0 {
		return 0
	}
	return e.b.Emit(spv.OpPhi, t, uint32(v), uint32(end), uint32(otherwise), uint32(from))
}

// eachElement calls f for every element k this lane holds of coopmatrix
// value v: at matrix row r and column c, which ri and ci number among the
// lane's rows and columns (for the accessor's parts), partial the
// condition that the lane holds row r at all (0: it does).
func (e *fn) eachElement(v *ir.Value, f func(k, ri, ci int, r, c *dim, partial spv.ID)) {
	t := v.Type
	if e.inFragments(v) {
		e.eachFragmentElement(t, f)
		return
	}
	rows, cols := int(t.Rows()), int(t.Cols())
	for i := range ceilDiv(rows, e.launch.SubgroupSize) {
		r, partial := e.row(i, rows)
		for c := range cols {
			f(i*cols+c, i, c, r, constDim(int64(c)), partial)
		}
	}
}

func (e *fn) coopLoad(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	x, y := e.index(in.Operands[1]), e.index(in.Operands[2])
	res := in.Result()
	et := res.Type.Elem()
	block := in.TransA == ir.NoTrans && !e.inFragments(res) && e.blockIO(m, in.Checked)
	out := e.idLists.take(e.perLane(res))
	acc := e.newAccessor(m, x, y, res, in.TransA == ir.Trans, in.Checked)
	e.eachElement(res, func(k, ri, ci int, r, c *dim, partial spv.ID) {
		if block && partial == 0 {
			out[k] = e.convert(e.blockRead(m, x, y, ri, c, in.Checked), m.typ.Elem(), et)
			return
		}
		off, cond := acc.at(ri, ci, r, c, partial)
		v := e.guarded(cond, e.u.reg(et), e.u.zero(et), func() spv.ID { return e.loadElem(m, off) })
		out[k] = e.convert(v, m.typ.Elem(), et)
	})
	e.coops[res] = out
}

func (e *fn) coopStore(in *ir.Inst) {
	a := e.coop(in.Operands[0])
	m := e.memref(in.Operands[1])
	x, y := e.index(in.Operands[2]), e.index(in.Operands[3])
	val := in.Operands[0]
	from := val.Type
	block := in.Atomic == ir.NotAtomic && in.TransA == ir.NoTrans && !e.inFragments(val) && e.blockIO(m, in.Checked)
	acc := e.newAccessor(m, x, y, val, in.TransA == ir.Trans, in.Checked)
	e.eachElement(val, func(k, ri, ci int, r, c *dim, partial spv.ID) {
		v := e.convert(a[k], from.Elem(), m.typ.Elem())
		if block && partial == 0 {
			e.blockWrite(m, x, y, ri, c, in.Checked, v)
			return
		}
		off, cond := acc.at(ri, ci, r, c, partial)
		e.guarded(cond, 0, 0, func() spv.ID {
			e.storeElem(m, off, v, in.Atomic)
			return 0
		})
	})
}

// blockIO reports whether a cooperative-matrix access to m may use the
// SPV_INTEL_subgroups block reads and writes: lanes hold consecutive rows
// of a column, so a column slice of sgs rows is one block when the rows are
// contiguous (unit row stride), the elements are 32-bit (the extension's
// block unit, which their natural alignment guarantees), m is in global
// memory, and any bounds check is on columns only, uniform over the
// subgroup (block I/O must be reached by every lane).
func (e *fn) blockIO(m *memref, checked ir.Checked) bool {
	return e.u.target.Shuffle == target.ShuffleIntel && e.launch.SubgroupSize > 1 && !e.u.opts.NoBlockIO &&
		m.sc == spv.StorageClassCrossWorkgroup && m.typ.Elem().Size() == 4 && !m.typ.Elem().IsComplex() &&
		m.stride[0].id == 0 && m.stride[0].c == 1 &&
		(checked == ir.Unchecked || checked == ir.ColsChecked)
}

// blockAddr is the address of the first row of block i (rows x + i*sgs ...)
// in column c, and the column check when asked.
func (e *fn) blockAddr(m *memref, x, y *dim, i int, c *dim, checked ir.Checked) (ptr, cond spv.ID) {
	row := e.add(x, constDim(int64(i*e.launch.SubgroupSize)))
	col := e.add(y, c)
	if checked == ir.ColsChecked {
		cond = e.inRange(col, m.shape[1])
	}
	ptr = e.elemPtr(m, e.add(row, e.mul(col, m.stride[1])))
	if m.blockPtrT == 0 { // asked for every block: the type lookup hashes
		m.blockPtrT = e.u.ptr(m.sc, e.u.intT(32))
	}
	return e.op(spv.OpBitcast, m.blockPtrT, ptr), cond
}

func (e *fn) blockRead(m *memref, x, y *dim, i int, c *dim, checked ir.Checked) spv.ID {
	u := e.u
	ptr, cond := e.blockAddr(m, x, y, i, c, checked)
	bits := e.guarded(cond, u.intT(32), u.i32(0), func() spv.ID {
		return e.op(spv.OpSubgroupBlockReadINTEL, u.intT(32), ptr)
	})
	return e.op(spv.OpBitcast, u.mem(m.typ.Elem()), bits)
}

func (e *fn) blockWrite(m *memref, x, y *dim, i int, c *dim, checked ir.Checked, v spv.ID) {
	ptr, cond := e.blockAddr(m, x, y, i, c, checked)
	e.guarded(cond, 0, 0, func() spv.ID {
		e.b.Emit(spv.OpSubgroupBlockWriteINTEL, 0, uint32(ptr), uint32(e.op(spv.OpBitcast, e.u.intT(32), v)))
		return 0
	})
}

// coopMulAdd computes A·B + C as outer products over the depth: element
// (kk, c) of B is broadcast from the lane holding row kk.
func (e *fn) coopMulAdd(in *ir.Inst) {
	if e.inFragments(in.Result()) {
		e.dpasMulAdd(in)
		return
	}
	av, bv, cv := in.Operands[0], in.Operands[1], in.Operands[2]
	a, b := e.coop(av), e.coop(bv)
	ct := cv.Type.Elem()
	sgs := e.launch.SubgroupSize
	rows, cols, depth := int(cv.Type.Rows()), int(cv.Type.Cols()), int(av.Type.Cols())
	acc := append(e.idLists.take(len(e.coop(cv)))[:0], e.coop(cv)...)
	mul, add := e.binaryOf(ir.Mul, ct), e.binaryOf(ir.Add, ct)
	for kk := range depth {
		for c := range cols {
			bElem := e.broadcast(b[(kk/sgs)*cols+c], bv.Type.Elem(), e.u.i32(int64(kk%sgs)))
			bElem = e.convert(bElem, bv.Type.Elem(), ct)
			for i := range ceilDiv(rows, sgs) {
				aElem := e.convert(a[i*depth+kk], av.Type.Elem(), ct)
				prod, _ := e.apply(mul, aElem, bElem)
				acc[i*cols+c], _ = e.apply(add, acc[i*cols+c], prod)
			}
		}
	}
	d := in.Result()
	for k := range acc {
		acc[k] = e.convert(acc[k], ct, d.Type.Elem())
	}
	e.coops[d] = acc
}

// broadcast returns x (register value of type t) from lane `lane` (an i32)
// of the subgroup.
func (e *fn) broadcast(x spv.ID, t *ir.Type, lane spv.ID) spv.ID {
	if e.launch.SubgroupSize == 1 {
		return x
	}
	u := e.u
	lane = e.op(spv.OpBitcast, u.intT(32), lane)
	switch {
	case t.Kind() == ir.KindBool: // shuffles move numbers, not booleans
		i := e.op(spv.OpSelect, u.intT(32), x, u.i32(1), u.i32(0))
		return e.op(spv.OpINotEqual, u.boolT(), e.op(spv.OpSubgroupShuffleINTEL, u.intT(32), i, lane), u.i32(0))
	case t.Size() < 4 && u.reg(t) != u.floatT(32):
		// 8- and 16-bit values travel as 32-bit integers: the shuffles
		// of cl_intel_subgroups for char, short and half are extensions
		// (cl_intel_subgroups_char/short, cl_khr_fp16) a device may lack.
		it := u.intT(t.Bits())
		bits := x
		if t.IsFloat() {
			bits = e.op(spv.OpBitcast, it, x)
		}
		moved := e.op(spv.OpSubgroupShuffleINTEL, u.intT(32), e.op(spv.OpUConvert, u.intT(32), bits), lane)
		back := e.op(spv.OpUConvert, it, moved)
		if t.IsFloat() {
			back = e.op(spv.OpBitcast, u.reg(t), back)
		}
		return back
	case t.IsComplex(): // component by component, as the OpenCL C back end
		ct := t.ComponentType()
		rt := u.reg(ct)
		re := e.op(spv.OpSubgroupShuffleINTEL, rt, e.extract(rt, x, 0), lane)
		im := e.op(spv.OpSubgroupShuffleINTEL, rt, e.extract(rt, x, 1), lane)
		return e.complex(u.reg(t), re, im)
	}
	return e.op(spv.OpSubgroupShuffleINTEL, u.reg(t), x, lane)
}

var groupOps = map[ir.Op][2]spv.Op{ // integer, float
	ir.OpSubgroupAdd: {spv.OpGroupIAdd, spv.OpGroupFAdd},
	ir.OpSubgroupMax: {spv.OpGroupSMax, spv.OpGroupFMax},
	ir.OpSubgroupMin: {spv.OpGroupSMin, spv.OpGroupFMin},
}

var groupOperation = map[ir.ScanKind]spv.GroupOperation{
	ir.Reduce: spv.GroupOperationReduce, ir.InclusiveScan: spv.GroupOperationInclusiveScan, ir.ExclusiveScan: spv.GroupOperationExclusiveScan,
}

// subgroupOp writes a subgroup reduction or scan: trivial with one lane,
// OpGroup* over the subgroup on intel (complex add component-wise).
func (e *fn) subgroupOp(in *ir.Inst) error {
	t := in.Result().Type
	x := e.value(in.Operands[0])
	if e.launch.SubgroupSize == 1 {
		if in.Scan == ir.ExclusiveScan {
			id, err := e.identity(in.Op, t)
			e.vals.Set(in.Result(), id)
			return err
		}
		e.vals.Set(in.Result(), x)
		return nil
	}
	if e.u.target.Shuffle != target.ShuffleIntel {
		return fmt.Errorf("spirv: subgroup size %d on target %s", e.launch.SubgroupSize, e.u.target.Name)
	}
	if t.IsComplex() {
		if in.Op != ir.OpSubgroupAdd {
			return fmt.Errorf("spirv: subgroup min/max of complex %s", t)
		}
		ct := t.ComponentType()
		rt := e.u.reg(ct)
		re := e.groupOp(in, ct, e.extract(rt, x, 0))
		im := e.groupOp(in, ct, e.extract(rt, x, 1))
		e.vals.Set(in.Result(), e.complex(e.u.reg(t), re, im))
		return nil
	}
	e.vals.Set(in.Result(), e.groupOp(in, t, x))
	return nil
}

// groupOp is one OpGroup* instruction at subgroup scope; 8- and 16-bit
// integers go through i32, as the OpenCL builtins do.
func (e *fn) groupOp(in *ir.Inst, t *ir.Type, x spv.ID) spv.ID {
	u := e.u
	ops := groupOps[in.Op]
	scope := u.i32(int64(spv.ScopeSubgroup))
	opn := uint32(groupOperation[in.Scan])
	if t.IsFloat() {
		return e.b.Emit(ops[1], u.reg(t), uint32(scope), opn, uint32(x))
	}
	wide := e.convertInt(x, t.Bits(), max(t.Bits(), 32))
	r := e.b.Emit(ops[0], u.intT(max(t.Bits(), 32)), uint32(scope), opn, uint32(wide))
	return e.convertInt(r, max(t.Bits(), 32), t.Bits())
}

// identity is the neutral element of a subgroup operation.
func (e *fn) identity(op ir.Op, t *ir.Type) (spv.ID, error) {
	switch {
	case op == ir.OpSubgroupAdd:
		return e.u.zero(t), nil
	case t.IsComplex():
		return 0, fmt.Errorf("spirv: subgroup min/max of complex %s", t)
	case t.IsFloat():
		sign := 1 // min starts at +inf
		if op == ir.OpSubgroupMax {
			sign = -1
		}
		return e.u.constFloat(t, math.Inf(sign)), nil
	}
	lim := int64(1)<<(t.Bits()-1) - 1 // max for min
	if op == ir.OpSubgroupMax {
		lim = -lim - 1
	}
	return e.u.constInt(t.Bits(), lim), nil
}
