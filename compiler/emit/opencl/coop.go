package opencl

import (
	"slices"

	"tltune/compiler/ir"
)

// Cooperative matrices: a matrix of X rows and Y columns is spread over the
// sgs lanes of a subgroup by rows, R = ceil(X/sgs) rows a lane, in a struct
// member v[R·Y], row slot i at v[i·Y + j]. Lane l holds rows l·R, l·R+1,
// ..., l·R+R-1 where the target blocks rows (target.BlockedRows), so that
// a lane's rows of a column-major matrix are one vector in memory: 128
// rows of f32 over 32 lanes load from local memory as one 128-bit access
// per column instead of four 32-bit ones. Elsewhere, and in functions that
// read or write a work-item's components by number (extract and insert,
// whose numbering docs/language.md defines), lane l holds rows l, l+sgs,
// l+2·sgs, ... (interleaved). Every loop below has constant bounds so the
// OpenCL compiler unrolls it and keeps the matrix in registers.

// coopLoop opens "for (int NAME = 0; NAME < n; ++NAME) {" over loop
// variable v, marked for unrolling.
func (e *fn) coopLoop(v loopVar, n int) {
	e.put("#pragma unroll")
	e.put(v.head, decimal(n), v.tail)
	e.indent++
}

// loopVar is the variable of a loop coopLoop opens: its loop's head
// before the bound and after it, spelled once (a GEMM kernel opens a few
// dozen such loops).
type loopVar struct{ head, tail string }

func loopOver(name string) loopVar {
	return loopVar{"for (int " + name + " = 0; " + name + " < ", "; ++" + name + ") {"}
}

// The loop variables of coopmatrix loops: elements, row slots, columns,
// the depth of a product, fragment blocks and rows.
var (
	loopE, loopI, loopC   = loopOver("tl_e"), loopOver("tl_i"), loopOver("tl_c")
	loopKK, loopBL, loopR = loopOver("tl_kk"), loopOver("tl_bl"), loopOver("tl_r")
)

func (e *fn) closeLoop() {
	e.indent--
	e.put("}")
}

// slotsPerLane is R, the rows of a matrix of `rows` rows each lane holds.
func (e *fn) slotsPerLane(rows int) int { return ceilDiv(rows, e.launch.SubgroupSize) }

// laneRow is the C expression of the row of a matrix of `rows` rows held
// in row slot `slot`.
func (e *fn) laneRow(rows int, slot string) string {
	sgs := e.launch.SubgroupSize
	switch r := e.slotsPerLane(rows); {
	case sgs == 1:
		return slot
	case !e.blocked:
		return e.text.join("(tl_lane + ", slot, " * ", decimal(sgs), ")")
	case r == 1:
		return "tl_lane"
	default:
		return e.text.join("(tl_lane * ", decimal(r), " + ", slot, ")")
	}
}

// slotRow is laneRow(rows, "tl_i"), which every coopmatrix access writes:
// spelled once per row count.
func (e *fn) slotRow(rows int) string {
	r := e.slotsPerLane(rows)
	if s, ok := e.slotRows[r]; ok {
		return s
	}
	s := e.laneRow(rows, "tl_i")
	e.slotRows[r] = s
	return s
}

// laneOfRow returns the C expressions of the lane holding row `row` (a C
// expression) of a matrix of `rows` rows and of its slot there.
func (e *fn) laneOfRow(rows int, row string) (lane, slot string) {
	sgs := decimal(e.launch.SubgroupSize)
	if !e.blocked {
		return e.text.join("(int)(", row, " % ", sgs, ")"), e.text.join("(", row, " / ", sgs, ")")
	}
	if r := e.slotsPerLane(rows); r > 1 {
		rs := decimal(r)
		return e.text.join("(int)(", row, " / ", rs, ")"), e.text.join("(", row, " % ", rs, ")")
	}
	return e.text.join("(int)(", row, ")"), "0"
}

// coopType returns the C struct holding this lane's share of coopmatrix
// value v in its layout, and the number of elements in it.
func (e *fn) coopType(v *ir.Value) (name string, perLane int) {
	t := v.Type
	n := ceilDiv(int(t.Rows()), e.launch.SubgroupSize) * int(t.Cols())
	if e.frag.has(v) {
		fr := e.frags[t.Use()]
		n = int(t.Rows()) / fr.br * int(t.Cols()) / fr.bc * fr.per
	}
	if e.packed.has(v) {
		return e.u.packedStruct(n / 2), n
	}
	if e.replicated.has(v) {
		n = int(t.Rows()) * int(t.Cols())
	}
	return e.u.coopStruct(t.Elem(), n), n
}

// coopDecl declares the variable for coopmatrix result v.
func (e *fn) coopDecl(v *ir.Value) (name string, perLane int) {
	typ, n := e.coopType(v)
	name = e.fresh(v.Name)
	e.put(typ, " ", name, ";")
	e.names.Set(v, name)
	return name, n
}

// coopElementwise declares result v and sets every element with
// expr(element of each source), the sources having v's layout.
func (e *fn) coopElementwise(v *ir.Value, expr func(src []string) string, srcs ...string) {
	name, n := e.coopDecl(v)
	e.coopLoop(loopE, n)
	elems := e.slab.strs.Take(len(srcs))
	for i, s := range srcs {
		elems[i] = e.text.join(s, ".v[tl_e]")
	}
	e.put(name, ".v[tl_e] = ", expr(elems), ";")
	e.closeLoop()
}

func (e *fn) coopFill(v *ir.Value, lit string) {
	e.coopElementwise(v, func([]string) string { return lit })
}

func (e *fn) coopScale(in *ir.Inst) {
	s := e.value(in.Operands[0])
	t := in.Result().Type.Elem()
	e.coopElementwise(in.Result(), func(x []string) string {
		expr, _ := e.binary(ir.Mul, t, s, x[0])
		return expr
	}, e.value(in.Operands[1]))
}

func (e *fn) coopArith(in *ir.Inst) error {
	t := in.Result().Type.Elem()
	if _, err := e.binary(in.Arith, t, "a", "b"); err != nil {
		return err
	}
	e.coopElementwise(in.Result(), func(x []string) string {
		expr, _ := e.binary(in.Arith, t, x[0], x[1])
		return expr
	}, e.value(in.Operands[0]), e.value(in.Operands[1]))
	return nil
}

func (e *fn) coopUnary(in *ir.Inst) error {
	t := in.Operands[0].Type.Elem()
	if _, err := e.unaryExpr(in.Unary, t, "a"); err != nil {
		return err
	}
	e.coopElementwise(in.Result(), func(x []string) string {
		expr, _ := e.unaryExpr(in.Unary, t, x[0])
		return expr
	}, e.value(in.Operands[0]))
	return nil
}

func (e *fn) coopCast(in *ir.Inst) {
	from, to := in.Operands[0].Type.Elem(), in.Result().Type.Elem()
	e.coopElementwise(in.Result(), func(x []string) string {
		return e.convert(x[0], from, to)
	}, e.value(in.Operands[0]))
}

// coopAccess describes the memory element behind coopmatrix element (r, j)
// of a load or store: its memref row and column and the bounds checks.
func (e *fn) coopAccess(m *memref, x, y string, trans bool, checked ir.Checked) (off, cond string) {
	memRow, memCol := coopPlace(e, x, y, trans)
	checkRow := checked == ir.RowsChecked || checked == ir.BothChecked
	checkCol := checked == ir.ColsChecked || checked == ir.BothChecked
	if trans {
		checkRow, checkCol = checkCol, checkRow
	}
	off = e.add(e.mul(memRow, m.stride[0]), e.mul(memCol, m.stride[1]))
	// Each check parenthesized, joined by &&.
	switch {
	case checkRow && checkCol:
		cond = e.text.join("(0 <= ", memRow, " && ", memRow, " < ", m.shape[0], ") && (0 <= ", memCol, " && ", memCol, " < ", m.shape[1], ")")
	case checkRow:
		cond = e.text.join("(0 <= ", memRow, " && ", memRow, " < ", m.shape[0], ")")
	case checkCol:
		cond = e.text.join("(0 <= ", memCol, " && ", memCol, " < ", m.shape[1], ")")
	}
	return off, cond
}

// coopElems opens the loops over the elements this lane holds of
// coopmatrix value v and defines tl_r, tl_c (the element's row and column)
// and tl_k (its slot), skipping padding rows.
func (e *fn) coopElems(v *ir.Value) {
	t := v.Type
	if e.frag.has(v) {
		fr := e.frags[t.Use()]
		blocksM := int(t.Rows()) / fr.br
		e.coopLoop(loopBL, blocksM*int(t.Cols())/fr.bc)
		e.coopLoop(loopI, fr.per)
		bm := decimal(blocksM)
		e.put("const long tl_r = (tl_bl % ", bm, ") * ", decimal(fr.br), " + ", fr.row, ";")
		e.put("const long tl_c = (tl_bl / ", bm, ") * ", decimal(fr.bc), " + ", fr.col, ";")
		e.put("const int tl_k = tl_bl * ", decimal(fr.per), " + tl_i;")
		return
	}
	sgs := e.launch.SubgroupSize
	rows, cols := int(t.Rows()), int(t.Cols())
	e.coopLoop(loopI, ceilDiv(rows, sgs))
	e.put("const long tl_r = ", e.slotRow(rows), ";")
	e.coopLoop(loopC, cols)
	e.put("const int tl_k = tl_i * ", decimal(cols), " + tl_c;")
	if rows%sgs != 0 {
		e.put("if (tl_r >= ", e.text.itoa(int64(rows)), ") continue;")
	}
}

func (e *fn) closeElems() {
	e.closeLoop()
	e.closeLoop()
}

// coopPlace is the memref row and column of coopmatrix element (tl_r,
// tl_c) of a piece at (x, y).
func coopPlace(e *fn, x, y string, trans bool) (row, col string) {
	if trans {
		return e.add(x, "tl_c"), e.add(y, "tl_r")
	}
	return e.add(x, "tl_r"), e.add(y, "tl_c")
}

func (e *fn) coopLoad(in *ir.Inst) {
	if e.packed.has(in.Result()) {
		e.packedLoad(in)
		return
	}
	if e.replicated.has(in.Result()) {
		e.replicatedLoad(in)
		return
	}
	if w := e.blockedWidth(in, in.Operands[0], in.Operands[1], in.Result()); w > 1 {
		e.blockedVectorLoad(in, w)
		return
	}
	m := e.memref(in.Operands[0])
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	t := in.Result().Type
	name, _ := e.coopDecl(in.Result())
	e.coopElems(in.Result())
	off, cond := e.coopAccess(m, x, y, in.TransA == ir.Trans, in.Checked)
	var load string
	if addr, ok := e.columnAddr(m, in.TransA == ir.Trans, x, y); ok && cond == "" {
		load = e.loadElem(&memref{typ: m.typ, ptr: addr, space: m.space}, "0")
	} else {
		load = e.loadElem(m, off)
	}
	if cond != "" {
		e.put(name, ".v[tl_k] = ", cond, " ? ", load, " : ", e.zero(t.Elem()), ";")
	} else {
		e.put(name, ".v[tl_k] = ", load, ";")
	}
	e.closeElems()
}

func (e *fn) coopStore(in *ir.Inst) error {
	a := e.value(in.Operands[0])
	m := e.memref(in.Operands[1])
	x, y := e.value(in.Operands[2]), e.value(in.Operands[3])
	if in.Atomic == ir.NotAtomic {
		if w := e.blockedWidth(in, in.Operands[1], in.Operands[2], in.Operands[0]); w > 1 {
			e.blockedVectorStore(a, m, x, y, w, int(in.Operands[0].Type.Cols()))
			return nil
		}
	}
	e.coopElems(in.Operands[0])
	off, cond := e.coopAccess(m, x, y, in.TransA == ir.Trans, in.Checked)
	if cond != "" {
		e.put("if (!(", cond, ")) continue;")
	}
	err := e.storeElem(m, off, e.text.join(a, ".v[tl_k]"), in.Atomic)
	e.closeElems()
	return err
}

// blockedWidth is the width of the vectors a load or store of coopmatrix
// piece v at row x of memref mv may move: R where each lane's R blocked
// rows lie next to each other in memory, aligned for R elements (mode 0 of
// stride 1, neither transposed nor checked, no padding rows, the leading
// dimension, x and the memref's start multiples of R), else 1. A piece in
// a matrix engine's fragment layout is not in rows over lanes at all (a
// DPAS B fragment at 8 lanes has 16 rows, two a lane by count, but lane l
// holds column l), so it is always moved element by element.
func (e *fn) blockedWidth(in *ir.Inst, mv, x, v *ir.Value) int {
	t := v.Type
	sgs, rows := e.launch.SubgroupSize, int(t.Rows())
	r := e.slotsPerLane(rows)
	if !e.blocked || e.frag.has(v) || sgs == 1 || r == 1 || rows != r*sgs || in.TransA == ir.Trans || in.Checked != ir.Unchecked {
		return 1
	}
	mt, w := mv.Type, int64(r)
	if !ir.VectorWidthOK(r, mt) || mt.Order() != 2 || mt.Stride()[1] == ir.Dynamic || mt.Stride()[1]%w != 0 ||
		!ir.Divisible(x, w) || e.alignment(mv)%(w*mt.Elem().Size()) != 0 {
		return 1
	}
	return r
}

// blockedVectorLoad loads a coopmatrix piece whose blocked rows are
// vectors of w elements in memory (blockedWidth): one vector a column.
func (e *fn) blockedVectorLoad(in *ir.Inst, w int) {
	m := e.memref(in.Operands[0])
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	cols := decimal(int(in.Result().Type.Cols()))
	name, _ := e.coopDecl(in.Result())
	e.coopLoop(loopC, int(in.Result().Type.Cols()))
	v := e.loadVectorBits(m, e.blockedOffset(m, x, y, w), w)
	for k := range w {
		head, tail := v.elem(e, k)
		e.put(name, ".v[", decimal(k), " * ", cols, " + tl_c] = ", head, tail, ";")
	}
	e.closeLoop()
}

// blockedVectorStore stores coopmatrix a of `cols` columns at (x, y) of m,
// its blocked rows vectors of w elements in memory (blockedWidth).
func (e *fn) blockedVectorStore(a string, m *memref, x, y string, w, cols int) {
	e.coopLoop(loopC, cols)
	vals := make([]string, w)
	for k := range vals {
		vals[k] = e.text.join(a, ".v[", decimal(k), " * ", decimal(cols), " + tl_c]")
	}
	e.storeVector(m, e.blockedOffset(m, x, y, w), vals)
	e.closeLoop()
}

// blockedOffset is the element offset in m of this lane's first row, in
// column tl_c, of a piece at (x, y) with w rows a lane.
func (e *fn) blockedOffset(m *memref, x, y string, w int) string {
	row := e.add(x, e.text.join("tl_lane * ", decimal(w)))
	return e.add(e.mul(row, m.stride[0]), e.mul(e.add(y, "tl_c"), m.stride[1]))
}

// coopMulAdd writes D = A·B + C. Row slot i of A and C live in this lane;
// B(k, j) lives in another (laneOfRow), and is broadcast.
func (e *fn) coopMulAdd(in *ir.Inst) {
	if e.frag.has(in.Result()) {
		e.mmaMulAdd(in)
		return
	}
	e.coopMulAdds([]*ir.Inst{in})
}

// mulAddGroup is the length of the run of mul_adds at the head of ins that
// one loop nest can write (coopMulAdds): consecutive rows-over-lanes
// mul_adds of one B operand, none reading another's result. A GEMM
// lowering emits one per accumulator block, the blocks of a tile column
// sharing their B piece.
func (e *fn) mulAddGroup(ins []*ir.Inst) int {
	head := ins[0]
	if head.Op != ir.OpCoopMatrixMulAdd || e.frag.has(head.Result()) {
		return 0
	}
	n := 1
	for ; n < len(ins); n++ {
		in := ins[n]
		if in.Op != ir.OpCoopMatrixMulAdd || e.frag.has(in.Result()) || in.Operands[1] != head.Operands[1] ||
			in.Operands[0].Type != head.Operands[0].Type || in.Operands[2].Type != head.Operands[2].Type ||
			readsResultOf(in, ins[:n]) {
			break
		}
	}
	return n
}

// readsResultOf reports whether in reads a result of one of before.
func readsResultOf(in *ir.Inst, before []*ir.Inst) bool {
	for _, b := range before {
		if slices.Contains(in.Operands, b.Result()) {
			return true
		}
	}
	return false
}

// coopMulAdds writes D = A·B + C for a group of mul_adds sharing B
// (mulAddGroup) in one loop nest: each element of B, read or broadcast
// once, updates every accumulator before the next. Written one
// instruction after the other, NVIDIA's compiler ran each accumulator's
// updates as chains of dependent FMAs (256³ f32, four 32×16 blocks per
// subgroup, on an H100: 246.2 µs a launch one by one, 237.0 µs grouped
// with the copies' addresses hoisted, lower's panelStage.hoist; grouped
// without that, the compiler gave it 213 registers instead of 166 and it
// took 265.0 µs).
func (e *fn) coopMulAdds(group []*ir.Inst) {
	head := group[0]
	bv, cv := head.Operands[1], head.Operands[2]
	b := e.value(bv)
	ct := cv.Type.Elem()
	sgs := e.launch.SubgroupSize
	rows, cols, depth := int(cv.Type.Rows()), int(cv.Type.Cols()), int(head.Operands[0].Type.Cols())
	accType, _ := e.coopType(cv)
	accs := e.slab.strs.Take(len(group))
	for g, in := range group {
		accs[g] = e.fresh("acc")
		e.put(accType, " ", accs[g], " = ", e.value(in.Operands[2]), ";")
	}
	e.coopLoop(loopKK, depth)
	e.coopLoop(loopC, cols)
	var bElem string
	switch {
	case sgs == 1 || e.replicated.has(bv):
		bElem = e.text.join(b, ".v[tl_kk * ", decimal(cols), " + tl_c]")
	default:
		lane, slot := e.laneOfRow(depth, "tl_kk")
		bElem = e.text.join(b, ".v[", slot, " * ", decimal(cols), " + tl_c]")
		bElem = e.broadcast(bElem, bv.Type.Elem(), lane)
	}
	e.put("const ", e.regType(ct), " tl_b = ", e.convert(bElem, bv.Type.Elem(), ct), ";")
	e.coopLoop(loopI, ceilDiv(rows, sgs))
	for g, in := range group {
		av := in.Operands[0]
		aElem := e.convert(e.text.join(e.value(av), ".v[tl_i * ", decimal(depth), " + tl_kk]"), av.Type.Elem(), ct)
		dst := e.text.join(accs[g], ".v[tl_i * ", decimal(cols), " + tl_c]")
		prod, _ := e.binary(ir.Mul, ct, aElem, "tl_b")
		sum, _ := e.binary(ir.Add, ct, dst, prod)
		e.put(dst, " = ", sum, ";")
	}
	e.closeLoop()
	e.closeLoop()
	e.closeLoop()
	for g, in := range group {
		d := in.Result()
		if d.Type == cv.Type {
			e.names.Set(d, accs[g])
			continue
		}
		e.coopElementwise(d, func(x []string) string { return e.convert(x[0], ct, d.Type.Elem()) }, accs[g])
	}
}

// replicatedLoad loads a replicated B operand: every lane reads every
// element, row-major (element (r, c) at slot r·cols + c), so lanes reading
// the same address meet in one broadcast access.
func (e *fn) replicatedLoad(in *ir.Inst) {
	if w := ReplicatedWidth(in, e.alignment); w > 1 {
		e.replicatedVectorLoad(in, w)
		return
	}
	m := e.memref(in.Operands[0])
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	t := in.Result().Type
	name, _ := e.coopDecl(in.Result())
	zero := e.zero(t.Elem())
	e.coopLoop(loopR, int(t.Rows()))
	e.coopLoop(loopC, int(t.Cols()))
	off, cond := e.coopAccess(m, x, y, in.TransA == ir.Trans, in.Checked)
	load := e.loadElem(m, off)
	if cond != "" {
		load = cond + " ? " + load + " : " + zero
	}
	e.put(name, ".v[tl_r * ", decimal(int(t.Cols())), " + tl_c] = ", load, ";")
	e.closeLoop()
	e.closeLoop()
}

// ReplicatedWidth is the vector width a replicated load in (every lane
// holding the whole piece) may use: the widest (up to 16 bytes) that
// divides the piece along the memory's contiguous mode, whose start and
// leading dimension keep every vector aligned (alignment: a memref's
// proven alignment in bytes); 1 for a checked load or where nothing is
// proven. The PTX writer loads the same vectors.
func ReplicatedWidth(in *ir.Inst, alignment func(*ir.Value) int64) int {
	mv := in.Operands[0]
	t, rt := mv.Type, in.Result().Type
	along := rt.Rows() // memory mode 0 runs along the piece's rows unless transposed
	if in.TransA == ir.Trans {
		along = rt.Cols()
	}
	if in.Checked != ir.Unchecked || t.Order() != 2 || t.Stride()[0] != 1 || t.Stride()[1] == ir.Dynamic {
		return 1
	}
	size := t.Elem().Size()
	for w := int64(ir.MaxVectorBytes) / size; w > 1; w /= 2 {
		if ir.ValidVectorWidth(int(w), t.Elem()) == nil && along%w == 0 && t.Stride()[1]%w == 0 &&
			ir.Divisible(in.Operands[1], w) && alignment(mv)%(w*size) == 0 {
			return int(w)
		}
	}
	return 1
}

// replicatedVectorLoad loads a replicated piece in vectors of w elements
// along the memory's contiguous mode.
func (e *fn) replicatedVectorLoad(in *ir.Inst, w int) {
	m := e.memref(in.Operands[0])
	t := in.Result().Type
	name, _ := e.coopDecl(in.Result())
	rows, cols := int(t.Rows()), int(t.Cols())
	trans := in.TransA == ir.Trans
	// The vectors' rows in memory and their columns' terms of the offset,
	// each spelled once for the vectors that share it.
	x, y := e.value(in.Operands[1]), e.value(in.Operands[2])
	var room [2 * 16]string // up to 16 rows and columns: no allocation
	memRows, colTerms := room[:16], room[16:]
	if n := max(rows, cols); n > 16 {
		terms := e.slab.strs.Take(2 * n)
		memRows, colTerms = terms[:n], terms[n:]
	}
	reader, dst := e.vectorReader(m, w), e.text.join(name, ".v[")
	// The vectors start at each multiple of w along the contiguous
	// direction: rows when memory runs along them, else columns.
	rowStep, colStep := w, 1
	if trans {
		rowStep, colStep = 1, w
	}
	for r := 0; r < rows; r += rowStep {
		for c := 0; c < cols; c += colStep {
			memRow, memCol := r, c
			if trans {
				memRow, memCol = memCol, memRow
			}
			if memRows[memRow] == "" {
				memRows[memRow] = e.add(x, decimal(memRow))
			}
			if colTerms[memCol] == "" {
				colTerms[memCol] = e.mul(e.add(y, decimal(memCol)), m.stride[1])
			}
			var off [3]string
			v := reader.load(e, addParts(off[:0], memRows[memRow], colTerms[memCol])...)
			assigned := v.assigned(e)
			for k := range w {
				rr, cc := r+k, c
				if trans {
					rr, cc = r, c+k
				}
				v.assign(e, dst, decimal(rr*cols+cc), assigned, k)
			}
		}
	}
}

// zero is the C zero of scalar type t.
func (e *fn) zero(t *ir.Type) string {
	return e.literal(ir.Constant{Kind: ir.ConstInt}, t)
}
