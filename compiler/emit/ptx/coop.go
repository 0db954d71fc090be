package ptx

import (
	"slices"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Cooperative matrices on the matrix engine. The writer takes the kernels
// whose every cooperative matrix the OpenCL C writer holds in mma.sync's
// m16n8k16 fragments (opencl.FragmentLayout), with f16 or bf16 inputs
// that are only loaded and multiplied (held packed, two to a 32-bit
// register, as mma.sync and ldmatrix take them) and f32 accumulators that
// are set, multiplied into, carried through loops and ifs, loaded,
// stored, scaled and added up. A matrix is a grid of blocks numbered
// column-major, and each lane holds per elements of every block (lane l:
// g = l/4, t = l mod 4):
//
//	A 16×16 (8 per lane): row g + 8·((i/2) mod 2), column 2t + (i mod 2) + 8·(i/4)
//	B 16×8  (4 per lane): row 2t + (i mod 2) + 8·(i/2), column g
//	C 16×8  (4 per lane): row g + 8·(i/2),         column 2t + (i mod 2)
//
// f32 matrices outside the engine are rows over lanes (rows.go).
// Anything else (f16 rows over lanes, tf32, atomics) is ErrUnsupported:
// the OpenCL C writer's code is then the kernel.

// fragment is the shape of a block of one matrix use and the elements a
// lane holds of it.
type fragment struct{ rows, cols, per int }

var fragments = [ir.MatrixAcc + 1]fragment{
	ir.MatrixA:   {16, 16, 8},
	ir.MatrixB:   {16, 8, 4},
	ir.MatrixAcc: {16, 8, 4},
}

// place is the block-relative position of element i of a block of use u:
// the row and column constants, and whether the lane's part of the row is
// 2t (B) rather than g (A and C); the column's part is then g, else 2t.
func place(u ir.MatrixUse, i int) (row, col int, rowIsT bool) {
	switch u {
	case ir.MatrixA:
		return 8 * ((i >> 1) & 1), (i & 1) + 8*(i>>2), false
	case ir.MatrixB:
		return (i & 1) + 8*(i>>1), 0, true
	}
	return 8 * (i >> 1), i & 1, false
}

func isCoop(v *ir.Value) bool { return v.Type.Kind() == ir.KindCoopmatrix }

// packed reports whether a matrix of type t is held two elements to a
// 32-bit register (the A and B operands).
func packed(t *ir.Type) bool { return t.Use() != ir.MatrixAcc }

// blocks is the number of engine blocks of a matrix of type t.
func blocks(t *ir.Type) int {
	fr := fragments[t.Use()]
	return int(t.Rows()) / fr.rows * int(t.Cols()) / fr.cols
}

// freshCoop returns new registers for this lane's share of matrix v, in
// its layout.
func (e *fn) freshCoop(v *ir.Value) val {
	t := v.Type
	c, n := f32, e.rowsRegisters(v)
	if e.held(v) {
		n = blocks(t) * fragments[t.Use()].per
		if packed(t) {
			c, n = b32, n/2
		}
	}
	regs := e.slab.strs.Take(n)
	for i := range regs {
		regs[i] = e.reg(c)
	}
	return val{cls: c, n: 1, regs: regs}
}

// checkCoop reports whether the writer can write f's cooperative
// matrices: all in the matrix engine's fragments (see above), or all f32
// in rows over lanes (rows.go). It notes that f has some, their layouts
// and how often each is read.
func (e *fn) checkCoop() error {
	insts := e.coopInsts[:0]
	e.f.Body.Walk(func(in *ir.Inst) bool {
		if slices.ContainsFunc(in.Operands, isCoop) || slices.ContainsFunc(in.Results, isCoop) {
			insts = append(insts, in)
		}
		return true
	})
	e.coopInsts = insts
	if len(insts) == 0 {
		return nil
	}
	e.coop = true
	sgs := e.l.SubgroupSize
	held, engine := opencl.FragmentLayout(e.f, e.t, sgs)
	e.held = held
	e.replicated, e.blocked = opencl.RowsLayout(e.f, e.t, sgs)
	inFragments, inRows := false, false
	for _, in := range insts {
		for _, vs := range [...][]*ir.Value{in.Operands, in.Results} {
			for _, v := range vs {
				if isCoop(v) {
					inFragments, inRows = inFragments || held(v), inRows || !held(v)
				}
			}
		}
		for _, v := range in.Operands {
			if isCoop(v) {
				e.coopUses.Set(v, e.uses(v)+1)
			}
		}
	}
	check := checkCoopInst
	switch {
	case inFragments && inRows:
		return unsupported("cooperative matrices in fragments and in rows over lanes")
	case inRows:
		if sgs != 1 && sgs != 16 && sgs != 32 {
			return unsupported("cooperative matrices over %d lanes", sgs)
		}
		check = checkRowsInst
	case engine == nil || engine.Engine != target.EnginePTX || engine.Emulated || engine.In == "f32" ||
		engine.M != 16 || engine.N != 8 || engine.K != 16:
		return unsupported("cooperative matrices without mma.sync.m16n8k16")
	}
	for _, in := range insts {
		if err := check(in); err != nil {
			return err
		}
	}
	return nil
}

// checkCoopInst reports whether the writer can write in, which reads or
// writes a cooperative matrix in fragments: A and B (f16, bf16) are only
// loaded and multiplied, accumulators (f32) are not transformed.
func checkCoopInst(in *ir.Inst) error {
	for _, vs := range [...][]*ir.Value{in.Operands, in.Results} {
		for _, v := range vs {
			if !isCoop(v) {
				continue
			}
			t := v.Type
			k := t.Elem().Kind()
			switch {
			case packed(t) && k != ir.KindF16 && k != ir.KindBF16, !packed(t) && k != ir.KindF32:
				return unsupported("%s", t)
			case packed(t) && in.Op != ir.OpCoopMatrixLoad && in.Op != ir.OpCoopMatrixMulAdd:
				return unsupported("%s of %s", in.Mnemonic(), t)
			}
		}
	}
	switch in.Op {
	case ir.OpCoopMatrixMulAdd:
		if packed(in.Operands[2].Type) || in.Operands[2].Type != in.Result().Type {
			return unsupported("%s into %s", in.Mnemonic(), in.Result().Type)
		}
	case ir.OpCoopMatrixStore:
		if packed(in.Operands[0].Type) {
			return unsupported("%s of %s", in.Mnemonic(), in.Operands[0].Type)
		}
	}
	return checkCoopOp(in)
}

// checkCoopOp reports whether the writer can write in, an instruction on
// cooperative matrices, whatever their layout.
func checkCoopOp(in *ir.Inst) error {
	switch in.Op {
	case ir.OpCoopMatrixLoad, ir.OpFor, ir.OpIf, ir.OpYield, ir.OpConstant, ir.OpCoopMatrixScale, ir.OpCoopMatrixMulAdd:
	case ir.OpArith:
		if _, err := floatOp(in.Arith, ir.F32); err != nil {
			return err
		}
	case ir.OpCoopMatrixStore:
		if in.Atomic != ir.NotAtomic {
			return unsupported("%s", in.Mnemonic())
		}
	default:
		return unsupported("%s", in.Mnemonic())
	}
	return nil
}

// fragLanes computes the lane's parts of fragment positions once, at the
// kernel's top: g, 2t, and the rows and columns ldmatrix lanes address.
func (e *fn) fragLanes() {
	lane := e.lane
	e.laneG = e.def(b32, "shr.u32", lane, "2")
	e.laneT2 = e.def(b32, "shl.b32", e.def(b32, "and.b32", lane, "3"), "1")
	// Lane l gives the address of row l mod 8 of 8×8 matrix j = l/8, at
	// (8·(j mod 2), 8·(j/2)) of the block; along a block's rows the lane's
	// row is a matrix row (l mod 8) else a column.
	half := e.def(b32, "shr.u32", e.def(b32, "and.b32", lane, "16"), "1") // 8·(j/2)
	e.ldAlong = [2]string{e.def(b32, "and.b32", lane, "8"), e.def(b32, "add.s32", half, e.def(b32, "and.b32", lane, "7"))}
	e.ldAcross = [2]string{e.def(b32, "and.b32", lane, "15"), half}
}

// plus is a + reg (32 bits, widened to a's width) + c.
func (e *fn) plus(a affine, reg string, c int64) affine {
	r := e.widen(reg, 32, a.w)
	if a.base != "" {
		r = e.pure(widthClass(a.w), addS.of(a.w), a.base, r)
	}
	return affine{r, a.off + c, a.w}
}

// coopConstant sets every register of an accumulator to the constant.
func (e *fn) coopConstant(in *ir.Inst) error {
	r := in.Result()
	if in.Const.Kind != ir.ConstFloat && in.Const.Kind != ir.ConstInt || in.Const.Imag != 0 {
		return unsupported("constant %s", r.Type)
	}
	x := in.Const.Float
	if in.Const.Kind == ir.ConstInt {
		x = float64(in.Const.Int)
	}
	v := e.freshCoop(r)
	for _, reg := range v.regs {
		e.op("mov.f32", reg, floatBits(x, ir.F32))
	}
	e.vals.Set(r, v)
	return nil
}

// coopElementwise sets every register of accumulator r to op applied to
// the registers of the same slot of xs, a scalar x in place of a matrix.
func (e *fn) coopElementwise(r *ir.Value, op string, xs ...val) {
	v := e.freshCoop(r)
	for i, reg := range v.regs {
		e.begin(op)
		e.arg(reg)
		for _, x := range xs {
			if x.regs != nil {
				e.arg(x.regs[i])
			} else {
				e.arg(x.x())
			}
		}
		e.end()
	}
	e.vals.Set(r, v)
}

// coopScale multiplies an accumulator by a scalar.
func (e *fn) coopScale(in *ir.Inst) {
	e.coopElementwise(in.Result(), "mul.f32", e.value(in.Operands[0]), e.value(in.Operands[1]))
}

// coopArith is arithmetic on accumulators, slot by slot.
func (e *fn) coopArith(in *ir.Inst) error {
	op, err := floatOp(in.Arith, ir.F32)
	if err == nil {
		e.coopElementwise(in.Result(), op, e.value(in.Operands[0]), e.value(in.Operands[1]))
	}
	return err
}

// coopMulAdd writes D = A·B + C as mma.sync on every block of D and every
// block of the depth, D's blocks taking C's first and then themselves.
func (e *fn) coopMulAdd(in *ir.Inst) {
	if !e.held(in.Result()) {
		e.rowsMulAdd(in)
		return
	}
	av, bv, cv := in.Operands[0], in.Operands[1], in.Operands[2]
	a, b, c := e.value(av).regs, e.value(bv).regs, e.value(cv).regs
	bm, bk, bn := int(cv.Type.Rows())/16, int(av.Type.Cols())/16, int(cv.Type.Cols())/8
	d := e.value(cv)
	if !e.ownsLastUse(cv) {
		d = e.freshCoop(in.Result())
	}
	opcode := "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
	if av.Type.Elem().Kind() == ir.KindBF16 {
		opcode = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
	}
	for ni := range bn {
		for mi := range bm {
			acc := c[(mi+ni*bm)*4:][:4]
			dst := d.regs[(mi+ni*bm)*4:][:4]
			for ki := range bk {
				e.begin(opcode)
				e.group(dst...)
				e.group(a[(mi+ki*bm)*4:][:4]...)
				e.group(b[(ki+ni*bk)*2:][:2]...)
				e.group(acc...)
				e.end()
				acc = dst
			}
		}
	}
	e.vals.Set(in.Result(), d)
}

// ownsLastUse reports whether a mul_add may write its result into the
// registers of accumulator v, as NVVM writes the OpenCL C's in-place
// mma: v is read by nothing else, and its registers are its own, not
// shared with another value (an unrolled loop's arguments are its initial
// values' registers).
func (e *fn) ownsLastUse(v *ir.Value) bool {
	if e.uses(v) != 1 {
		return false
	}
	if v.Def != nil {
		return v.Def.Op == ir.OpCoopMatrixMulAdd
	}
	return v.Region != nil && !e.isAliased(v)
}

// coopLoad loads this lane's share of a matrix: A and B with ldmatrix
// where the memory allows, else element by element.
func (e *fn) coopLoad(in *ir.Inst) {
	if !e.held(in.Result()) {
		e.rowsLoad(in)
		return
	}
	v := e.freshCoop(in.Result())
	e.vals.Set(in.Result(), v)
	if packed(in.Result().Type) && e.ldmatrixOK(in) {
		e.ldmatrix(in, v.regs)
		return
	}
	space := e.mem(in.Operands[0]).space()
	var low string // the first of a packed pair, the register's low half
	e.coopElements(in, in.Operands[0], in.Operands[1], in.Operands[2], in.Result().Type, func(k int, addr address, ok string) {
		if !packed(in.Result().Type) {
			e.predicated(ok, "ld", space, addr, v.regs[k], "f32", "0f00000000")
			return
		}
		half := e.reg(b16)
		e.predicated(ok, "ld", space, addr, half, "b16", "0")
		if k%2 == 1 {
			e.begin("mov.b32")
			e.arg(v.regs[k/2])
			e.group(low, half)
			e.end()
		}
		low = half
	})
}

// coopStore stores this lane's share of an accumulator element by element.
func (e *fn) coopStore(in *ir.Inst) {
	if !e.held(in.Operands[0]) {
		e.rowsStore(in)
		return
	}
	x := e.value(in.Operands[0]).regs
	space := e.mem(in.Operands[1]).space()
	e.coopElements(in, in.Operands[1], in.Operands[2], in.Operands[3], in.Operands[0].Type, func(k int, addr address, ok string) {
		e.predicated(ok, "st", space, addr, x[k], "f32", "")
	})
}

// predicated writes a load or store of one element of PTX type typ at
// addr of state space space, guarded by predicate ok where there is one;
// a load it skips leaves zero in reg.
func (e *fn) predicated(ok, kind, space string, addr address, reg, typ, zero string) {
	if ok != "" && kind == "ld" {
		e.begin("mov.", typ)
		e.arg(reg)
		e.arg(zero)
		e.end()
	}
	e.guardedAccess(ok, kind, space, typ, addr, reg)
}

// coopElements calls each for every element k this lane holds of a
// matrix of type t at (x, y) of memref mv, in slot order, with its address
// and the predicate of its bounds checks ("" where unchecked). Its rows
// and columns are the lane's part plus constants, so with static strides
// the elements' addresses are one register and immediate offsets.
func (e *fn) coopElements(in *ir.Inst, mv, xv, yv *ir.Value, t *ir.Type, each func(k int, addr address, ok string)) {
	m := e.mem(mv)
	w := m.addrWidth()
	x, y := e.affineOf(xv, w), e.affineOf(yv, w)
	fr := fragments[t.Use()]
	blocksM := int(t.Rows()) / fr.rows
	trans := in.TransA == ir.Trans
	checked := checksOf(in)
	for blk := range blocks(t) {
		r0, c0 := (blk%blocksM)*fr.rows, (blk/blocksM)*fr.cols
		for i := range fr.per {
			r, c, rowIsT := place(t.Use(), i)
			rowLane, colLane := e.laneG, e.laneT2
			if rowIsT {
				rowLane, colLane = colLane, rowLane
			}
			memRow, memCol := e.plus(x, rowLane, int64(r0+r)), e.plus(y, colLane, int64(c0+c))
			if trans {
				memRow, memCol = e.plus(x, colLane, int64(c0+c)), e.plus(y, rowLane, int64(r0+r))
			}
			ok := e.within("", checked, m, memRow, memCol)
			each(blk*fr.per+i, e.elementAddress(m, []affine{memRow, memCol}, w), ok)
		}
	}
}

// checks is which modes of a memref a matrix load or store checks.
type checks struct{ rows, cols bool }

// checksOf is the modes in checks: its Checked, which names the
// matrix's rows and columns, swapped where it is transposed.
func checksOf(in *ir.Inst) checks {
	c := checks{in.Checked == ir.RowsChecked || in.Checked == ir.BothChecked,
		in.Checked == ir.ColsChecked || in.Checked == ir.BothChecked}
	if in.TransA == ir.Trans {
		c.rows, c.cols = c.cols, c.rows
	}
	return c
}

// within is ok ∧ the checked bounds 0 <= row < m's rows and 0 <= col <
// m's columns, "" where nothing is checked.
func (e *fn) within(ok string, c checks, m *memref, row, col affine) string {
	if c.rows {
		ok = e.and(ok, e.below(row, m.shape[0]))
	}
	if c.cols {
		ok = e.and(ok, e.below(col, m.shape[1]))
	}
	return ok
}

// below is the predicate 0 <= a < n (one unsigned comparison).
func (e *fn) below(a affine, n string) string {
	return e.pure(pred, setpLt.of(a.w), e.materialise(widthClass(a.w), e.operand(a)), e.resize(n, 64, a.w))
}

// and is p ∧ q, either "" for true.
func (e *fn) and(p, q string) string {
	if p == "" {
		return q
	}
	return e.pure(pred, "and.pred", p, q)
}

// ldmatrixOK reports whether packed load in can use ldmatrix, as the
// OpenCL C writer's ldmatrixOK decides: local memory, no bounds checks,
// and 16-byte aligned matrix rows (a memref aligned to 16 bytes, the
// contiguous-mode index a multiple of 8 elements and the other mode's
// stride a multiple of 8 elements).
func (e *fn) ldmatrixOK(in *ir.Inst) bool {
	m := in.Operands[0]
	t := m.Type
	return t.Space() == ir.Local && in.Checked == ir.Unchecked && t.Order() == 2 &&
		t.Stride()[0] == 1 && t.Stride()[1] != ir.Dynamic && t.Stride()[1]%8 == 0 &&
		ir.Alignment(e.f, m)%16 == 0 && ir.Divisible(in.Operands[1], 8)
}

// ldmatrix loads a packed fragment with ldmatrix.x4: one 16×16 A block,
// or two 16×8 B blocks side by side (.x2 for a lone one). Matrix j of an
// instruction sits at (8·(j mod 2), 8·(j/2)) of the first block. A row of
// an 8×8 matrix is read along memory's contiguous mode, transposed (.trans)
// where that mode runs across the fragment's element pairs: for A when
// memory runs along the fragment's rows, for B when it runs along its
// columns.
func (e *fn) ldmatrix(in *ir.Inst, regs []string) {
	t := in.Result().Type
	m := e.mem(in.Operands[0])
	x, y := e.affineOf(in.Operands[1], 32), e.affineOf(in.Operands[2], 32)
	fr := fragments[t.Use()]
	trans := in.TransA == ir.Trans
	isA := t.Use() == ir.MatrixA
	suffix := ""
	if !trans == isA {
		suffix = ".trans"
	}
	lanes := e.ldAlong
	if trans {
		lanes = e.ldAcross
	}
	per := fr.per / 2
	blocksM, blocksN := int(t.Rows())/fr.rows, int(t.Cols())/fr.cols
	for bn := 0; bn < blocksN; {
		n := 1
		if !isA && bn+1 < blocksN {
			n = 2
		}
		for bm := range blocksM {
			b := bm + bn*blocksM
			r, c := int64(bm*fr.rows), int64(bn*fr.cols)
			memRow, memCol := e.plus(x, lanes[0], r), e.plus(y, lanes[1], c)
			if trans {
				memRow, memCol = e.plus(x, lanes[1], c), e.plus(y, lanes[0], r)
			}
			addr := e.elementAddress(m, []affine{memRow, memCol}, 32)
			var buf [8]string
			out := buf[:0]
			blks := [...]int{b, b + blocksM}
			for _, blk := range blks[:n] {
				out = append(out, regs[blk*per:(blk+1)*per]...)
			}
			e.begin("ldmatrix.sync.aligned.m8n8.x", itoa(len(out)), suffix, ".shared.b16")
			e.group(out...)
			e.at(addr)
			e.end()
		}
		bn += n
	}
}

// uses is the number of reads of cooperative matrix v (checkCoop).
func (e *fn) uses(v *ir.Value) int32 {
	n, _ := e.coopUses.Get(v)
	return n
}

// isAliased reports whether v is an argument of an unrolled loop.
func (e *fn) isAliased(v *ir.Value) bool {
	a, _ := e.aliased.Get(v)
	return a
}
