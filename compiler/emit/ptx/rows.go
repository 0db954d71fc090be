package ptx

import (
	"slices"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/ir"
)

// Cooperative matrices in rows over lanes, as the OpenCL C writer holds
// f32 matrices (its coop.go): a matrix of X rows and Y columns gives each
// lane R = ceil(X/sgs) rows, slot i of lane l being row l·R + i where the
// rows are blocked (the nvidia target's layout), l + i·sgs where they are
// interleaved; register i·Y + j holds column j of slot i. A B operand
// that every lane holds whole (opencl.RowsLayout's replicated) has X·Y
// registers, row-major. The writer takes f32 matrices only.

// checkRowsInst reports whether the writer can write in, which reads or
// writes a cooperative matrix in rows over lanes: f32 only.
func checkRowsInst(in *ir.Inst) error {
	for _, v := range in.Operands {
		if isCoop(v) && v.Type.Elem().Kind() != ir.KindF32 {
			return unsupported("%s in rows over lanes", v.Type)
		}
	}
	for _, v := range in.Results {
		if isCoop(v) && v.Type.Elem().Kind() != ir.KindF32 {
			return unsupported("%s in rows over lanes", v.Type)
		}
	}
	return checkCoopOp(in)
}

// slots is R, the rows of a matrix of `rows` rows each lane holds.
func (e *fn) slots(rows int) int { return (rows + e.l.SubgroupSize - 1) / e.l.SubgroupSize }

// rowsRegisters is the number of registers of this lane's share of
// matrix v outside the fragments.
func (e *fn) rowsRegisters(v *ir.Value) int {
	rows, cols := int(v.Type.Rows()), int(v.Type.Cols())
	if e.replicated(v) {
		return rows * cols
	}
	return e.slots(rows) * cols
}

// slotRow is the row of slot i of this lane, of a matrix of `rows` rows:
// a 32-bit register part (none for a subgroup of one) plus a constant.
func (e *fn) slotRow(rows, i int) (lane string, c int64) {
	sgs, r := e.l.SubgroupSize, e.slots(rows)
	switch {
	case sgs == 1:
		return "", int64(i)
	case !e.blocked:
		return e.lane, int64(i * sgs)
	case r == 1:
		return e.lane, 0
	}
	return e.pure(b32, "mul.lo.s32", e.lane, itoa(r)), int64(i)
}

// laneOfRow is the lane holding row `row` of a matrix of `rows` rows and
// its slot there.
func (e *fn) laneOfRow(rows, row int) (lane, slot int) {
	sgs := e.l.SubgroupSize
	if !e.blocked {
		return row % sgs, row / sgs
	}
	if r := e.slots(rows); r > 1 {
		return row / r, row % r
	}
	return row, 0
}

// plusLane is a + lane (32 bits, none for "") + c.
func (e *fn) plusLane(a affine, lane string, c int64) affine {
	if lane == "" {
		return affine{a.base, a.off + c, a.w}
	}
	return e.plus(a, lane, c)
}

// rowsLoad loads this lane's share of a matrix in rows over lanes: whole
// for a replicated B, as vectors where each lane's blocked rows lie next
// to each other in memory, else element by element. A matrix that only
// mul_adds read, with nothing between that writes memory or waits
// (deferrable), is loaded piece by piece where they first read it
// (coopReg), as NVVM places the OpenCL C's loads: loaded whole, a
// subgroup's A and replicated B of a 128×8×32 block are 384 registers
// and ptxas spilled them (256³ f32, 632 µs against NVVM's 226 µs).
func (e *fn) rowsLoad(in *ir.Inst) {
	r := in.Result()
	v := e.freshCoop(r)
	e.vals.Set(r, v)
	var units []*loadUnit
	switch w := e.blockedWidth(in, in.Operands[0], in.Operands[1], r); {
	case e.replicated(r):
		units = e.replicatedLoad(in, v.regs)
	case w > 1:
		units = e.blockedVectors("ld", in.Operands[0], in.Operands[1], in.Operands[2], r.Type, w, v.regs)
	default:
		space := e.mem(in.Operands[0]).space()
		e.rowsElements(in, in.Operands[0], in.Operands[1], in.Operands[2], r.Type, func(k int, at func() (address, string)) {
			units = append(units, &loadUnit{regs: []int{k}, emit: func() {
				addr, ok := at()
				e.predicated(ok, "ld", space, addr, v.regs[k], "f32", "0f00000000")
			}})
		})
	}
	if !e.deferrable(in) {
		for _, u := range units {
			u.emit()
		}
		return
	}
	lz := &lazyLoad{byReg: make([]*loadUnit, len(v.regs))}
	for _, u := range units {
		for _, k := range u.regs {
			lz.byReg[k] = u
		}
	}
	e.lazy.Set(r, lz)
}

// A loadUnit is one load instruction of a matrix's registers regs (by
// index); a lazyLoad is a matrix loaded unit by unit where first read.
type loadUnit struct {
	regs []int
	emit func()
	done bool
}

type lazyLoad struct{ byReg []*loadUnit }

// coopReg is register k of matrix v, loaded first where v is loaded
// lazily and this is the first read of it.
func (e *fn) coopReg(v *ir.Value, k int) string {
	if lz, _ := e.lazy.Get(v); lz != nil {
		if u := lz.byReg[k]; u != nil && !u.done {
			u.done = true
			u.emit()
		}
	}
	return e.value(v).regs[k]
}

// deferrable reports whether the result of load in may be loaded where
// first read: every read is an A or B operand of a mul_add later in the
// same region, and no instruction from the load to the last of them
// writes memory, waits or branches.
func (e *fn) deferrable(in *ir.Inst) bool {
	r := in.Result()
	left := e.uses(r)
	insts := in.Parent.Insts
	at := slices.Index(insts, in)
	for _, next := range insts[at+1:] {
		if left == 0 {
			return true
		}
		for i, v := range next.Operands {
			if v == r {
				if next.Op != ir.OpCoopMatrixMulAdd || i > 1 {
					return false
				}
				left--
			}
		}
		switch next.Op {
		case ir.OpCoopMatrixLoad, ir.OpCoopMatrixMulAdd, ir.OpCoopMatrixScale, ir.OpArith, ir.OpArithUnary,
			ir.OpCast, ir.OpCmp, ir.OpConstant, ir.OpBuiltin, ir.OpSubview, ir.OpLoad, ir.OpVectorLoad, ir.OpSize:
		default:
			return false
		}
	}
	return left == 0
}

// rowsStore stores this lane's share of a matrix in rows over lanes.
func (e *fn) rowsStore(in *ir.Inst) {
	x := e.value(in.Operands[0]).regs
	mv := in.Operands[1]
	if w := e.blockedWidth(in, mv, in.Operands[2], in.Operands[0]); w > 1 {
		for _, u := range e.blockedVectors("st", mv, in.Operands[2], in.Operands[3], in.Operands[0].Type, w, x) {
			u.emit()
		}
		return
	}
	space := e.mem(mv).space()
	e.rowsElements(in, mv, in.Operands[2], in.Operands[3], in.Operands[0].Type, func(k int, at func() (address, string)) {
		addr, ok := at()
		e.predicated(ok, "st", space, addr, x[k], "f32", "")
	})
}

// rowsElements calls each for every element k this lane holds of a
// matrix of type t at (x, y) of memref mv, with what writes its address
// and the predicate of its bounds checks and of its row being one of the
// matrix's ("" where neither applies).
func (e *fn) rowsElements(in *ir.Inst, mv, xv, yv *ir.Value, t *ir.Type, each func(k int, at func() (addr address, ok string))) {
	m := e.mem(mv)
	w := m.addrWidth()
	x, y := e.affineOf(xv, w), e.affineOf(yv, w)
	rows, cols := int(t.Rows()), int(t.Cols())
	trans := in.TransA == ir.Trans
	checked := checksOf(in)
	for i := range e.slots(rows) {
		for j := range cols {
			each(i*cols+j, func() (address, string) {
				lane, c := e.slotRow(rows, i)
				var ok string
				if rows%e.l.SubgroupSize != 0 {
					ok = e.below(e.plusLane(affine{w: 32}, lane, c), itoa(rows))
				}
				memRow, memCol := e.plusLane(x, lane, c), affine{y.base, y.off + int64(j), w}
				if trans {
					memRow, memCol = affine{x.base, x.off + int64(j), w}, e.plusLane(y, lane, c)
				}
				ok = e.within(ok, checked, m, memRow, memCol)
				// Untransposed, the memref's column is y plus a constant.
				var colAligned func(int64) bool
				if !trans {
					colAligned = alignedBase(yv, y)
				}
				return e.pieceAddress(m, memRow, memCol, colAligned, w), ok
			})
		}
	}
}

// pieceAddress is the address of element (row, col) of m (w bits): by
// the column map where m is a view it applies to and col's register part
// is aligned for it (colAligned, nil where nothing is known), else by the
// general one.
func (e *fn) pieceAddress(m *memref, row, col affine, colAligned func(int64) bool, w int) address {
	if addr, ok := e.columnAddress(m, row, col, colAligned); ok {
		return addr
	}
	return e.elementAddress(m, []affine{row, col}, w)
}

// pick is regs[i] for each i of idx: a load unit's registers.
func pick(regs []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = regs[i]
	}
	return out
}

// blockedWidth is the width of the vectors a load or store of matrix v
// at row x of memref mv may move, as the OpenCL C writer's blockedWidth
// decides: R where each lane's R blocked rows lie next to each other in
// memory, aligned for R elements, else 1.
func (e *fn) blockedWidth(in *ir.Inst, mv, x, v *ir.Value) int {
	t := v.Type
	sgs, rows := e.l.SubgroupSize, int(t.Rows())
	r := e.slots(rows)
	if !e.blocked || sgs == 1 || r == 1 || rows != r*sgs || in.TransA == ir.Trans || in.Checked != ir.Unchecked {
		return 1
	}
	mt, w := mv.Type, int64(r)
	if !ir.VectorWidthOK(r, mt) || mt.Order() != 2 || mt.Stride()[1] == ir.Dynamic || mt.Stride()[1]%w != 0 ||
		!ir.Divisible(x, w) || ir.Alignment(e.f, mv)%(w*mt.Elem().Size()) != 0 {
		return 1
	}
	return r
}

// blockedVectors loads (kind ld) or stores (st) a matrix of type t at (x,
// y) of memref mv whose blocked rows are vectors of w elements in memory:
// one vector a column, regs in the matrix's slot order.
func (e *fn) blockedVectors(kind string, mv, xv, yv *ir.Value, t *ir.Type, w int, regs []string) []*loadUnit {
	m := e.mem(mv)
	aw := m.addrWidth()
	x, y := e.affineOf(xv, aw), e.affineOf(yv, aw)
	cols := int(t.Cols())
	units := make([]*loadUnit, cols)
	for j := range cols {
		u := &loadUnit{}
		for k := range w {
			u.regs = append(u.regs, k*cols+j)
		}
		u.emit = func() {
			row := e.plus(x, e.pure(b32, "mul.lo.s32", e.lane, itoa(w)), 0)
			addr := e.pieceAddress(m, row, affine{y.base, y.off + int64(j), aw}, alignedBase(yv, y), aw)
			e.access(kind, m.space(), addr, t.Elem(), pick(regs, u.regs))
		}
		units[j] = u
	}
	return units
}

// replicatedLoad is the loads of a replicated B whole into regs
// (row-major), in vectors along memory's contiguous mode where
// opencl.ReplicatedWidth allows.
func (e *fn) replicatedLoad(in *ir.Inst, regs []string) []*loadUnit {
	mv := in.Operands[0]
	m := e.mem(mv)
	t := in.Result().Type
	w := opencl.ReplicatedWidth(in, func(v *ir.Value) int64 { return ir.Alignment(e.f, v) })
	aw := m.addrWidth()
	x, y := e.affineOf(in.Operands[1], aw), e.affineOf(in.Operands[2], aw)
	rows, cols := int(t.Rows()), int(t.Cols())
	trans := in.TransA == ir.Trans
	checked := checksOf(in)
	var units []*loadUnit
	for r := range rows {
		for c := range cols {
			// A vector starts at each multiple of w along the contiguous
			// direction: the piece's rows, or its columns when transposed.
			if w > 1 && (!trans && r%w != 0 || trans && c%w != 0) {
				continue
			}
			u := &loadUnit{}
			for k := range w {
				if trans {
					u.regs = append(u.regs, r*cols+c+k)
				} else {
					u.regs = append(u.regs, (r+k)*cols+c)
				}
			}
			memRow, memCol := r, c
			if trans {
				memRow, memCol = c, r
			}
			u.emit = func() {
				row, col := affine{x.base, x.off + int64(memRow), aw}, affine{y.base, y.off + int64(memCol), aw}
				addr := e.pieceAddress(m, row, col, alignedBase(in.Operands[2], y), aw)
				if w > 1 {
					e.access("ld", m.space(), addr, t.Elem(), pick(regs, u.regs))
					return
				}
				ok := e.within("", checked, m, row, col)
				e.predicated(ok, "ld", m.space(), addr, regs[u.regs[0]], "f32", "0f00000000")
			}
			units = append(units, u)
		}
	}
	return units
}

// rowsMulAdd writes D = A·B + C for in and the mul_adds after it in its
// region that share its B (mulAddGroup), as the OpenCL C writer's
// coopMulAdds: each element of B, read or received from the lane holding
// its row once, updates every accumulator of the group before the next.
// The group's other members are marked done.
func (e *fn) rowsMulAdd(in *ir.Inst) {
	group := e.mulAddGroup(in)
	bv := in.Operands[1]
	rows, cols, depth := int(in.Operands[2].Type.Rows()), int(in.Operands[2].Type.Cols()), int(in.Operands[0].Type.Cols())
	accs := make([][]string, len(group))
	for g, m := range group {
		cv := m.Operands[2]
		d := e.value(cv)
		if !e.ownsLastUse(cv) {
			fresh := e.freshCoop(m.Result())
			e.assign(fresh, d)
			d = fresh
		}
		accs[g] = d.regs
		e.vals.Set(m.Result(), d)
	}
	for kk := range depth {
		for c := range cols {
			var bElem string
			if e.replicated(bv) {
				bElem = e.coopReg(bv, kk*cols+c)
			} else {
				lane, slot := e.laneOfRow(depth, kk)
				bElem = e.shuffle(one(f32, e.coopReg(bv, slot*cols+c)), itoa(lane)).x()
			}
			for i := range e.slots(rows) {
				for g, m := range group {
					a := e.coopReg(m.Operands[0], i*depth+kk)
					acc := accs[g][i*cols+c]
					e.op("fma.rn.f32", acc, a, bElem, acc)
				}
			}
		}
	}
}

// rowsFMAs is the number of FMAs a mul_add in rows over lanes is
// written as.
func (e *fn) rowsFMAs(in *ir.Inst) int64 {
	c := in.Operands[2].Type
	return int64(e.slots(int(c.Rows()))) * c.Cols() * in.Operands[0].Type.Cols()
}

// mulAddGroup is in and the mul_adds that follow it in its region and
// share its B and types, up to the first that reads an earlier one's
// result; the others are marked done for region to pass over.
func (e *fn) mulAddGroup(in *ir.Inst) []*ir.Inst {
	group := []*ir.Inst{in}
	insts := in.Parent.Insts
	at := 0
	for at < len(insts) && insts[at] != in {
		at++
	}
	for _, next := range insts[at+1:] {
		if next.Op != ir.OpCoopMatrixMulAdd || next.Operands[1] != in.Operands[1] ||
			next.Operands[0].Type != in.Operands[0].Type || next.Operands[2].Type != in.Operands[2].Type ||
			readsResultOf(next, group) {
			break
		}
		group = append(group, next)
		e.done[next] = true
	}
	return group
}

// readsResultOf reports whether in reads a result of one of before.
func readsResultOf(in *ir.Inst, before []*ir.Inst) bool {
	for _, b := range before {
		for _, v := range in.Operands {
			if v == b.Result() {
				return true
			}
		}
	}
	return false
}
