package lower

import (
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// The staged GEMM lowering (stage_local) is a software pipeline over the
// work-group's blocks of C and their K steps. The work-group's subgroups
// form a grid gx × gy (XeTile's sg_layout) over a block of BM × BN =
// (gx·tm) × (gy·tn) (sg_data: tm × tn per subgroup); a block's K loop steps
// BK = ck·u. The blocks of one batch entry (with a split, the work-group's
// share of them: blocks y, y+split, ... for work-group y of the split) and
// their K steps form one sequence of T = blocks·⌈K/BK⌉ iterations, so the
// pipeline never drains between blocks:
//
//   - the op(A) and op(B) panels of an iteration (BM × BK and BK × BN) are
//     copied into local memory by every work-item, in chunks of up to 16
//     bytes along the stored matrices' contiguous mode (async_copy; zero
//     past the edges of A and B, so the arithmetic needs no bounds checks);
//   - with S stages the copies run S-1 iterations ahead: iteration i waits
//     for its own copies, meets the others at a barrier (after which no one
//     reads the stage iteration i-1 used), issues the copies of iteration
//     i+S-1 into that stage and computes on its own. With one stage the
//     copy and a second barrier bracket the arithmetic instead;
//   - the panels are laid out as A and B are stored (the contiguous mode
//     stays contiguous, so copies are wide), with a leading dimension padded
//     by local_pad elements so that fragment reads of neighbouring rows fall
//     into different banks; or, with local_swizzle, unpadded with the
//     16-byte chunks of each 128-byte row permuted (ir.AttrSwizzle), which
//     keeps those reads apart and also keeps each copy's 128-byte pieces
//     whole, where a padded column starts off a row and its writes straddle
//     two (on an H100 that halved the copies' throughput);
//   - after a block's last K step the subgroups write their tiles (the
//     epilogue: α, β·C, atomics) and start the next block from zero.
//
// With local_epilogue the epilogue goes through local memory: the
// subgroups store one column slice of their accumulators into a staging
// buffer, and all work-items write it out in chunks of up to 16 bytes along
// C's columns (its contiguous mode), reading C there too when β ≠ 0. Wide
// stores along whole columns beat the scattered ones a cooperative matrix
// layout gives.

// panelStage is the local copy of one operand's K panels.
type panelStage struct {
	src        *ir.Value // the stored matrix (A or B of the batch entry)
	trans      bool      // the operand is op(src) = srcᵀ
	rows, cols int64     // a stage in src's coordinates; rows run along src's mode 0
	width      int64     // elements per async_copy
	buf        *ir.Value // the stages: rows × cols × stages, leading dimension padded
	ld         int64     // the padded leading dimension
	swizzled   bool      // buf is laid out swizzled (ir.AttrSwizzle), unpadded
	// srcAt and bufAt are src and buf seen from the work-item's first chunk
	// (hoist), nil where its copies address them whole.
	srcAt, bufAt *ir.Value
}

// newPanelStage allocates the stages of the op(src) panel of opRows ×
// opCols in collective code (cb), padded by pad elements or swizzled, and
// picks the copy width: the widest vector the stored matrix and the panel
// both admit.
func newPanelStage(cb *gen, f *ir.Func, src *ir.Value, trans bool, opRows, opCols, stages int64, pad int, swizzled bool) *panelStage {
	p := &panelStage{src: src, trans: trans, rows: opRows, cols: opCols, swizzled: swizzled}
	if trans {
		p.rows, p.cols = opCols, opRows
	}
	elem := src.Type.Elem()
	p.ld = p.rows + int64(pad)
	p.width = int64(copyWidth(f, src, gcd(p.rows, p.ld)))
	t := ir.Memref(elem, []int64{p.rows, p.cols, stages}, []int64{1, p.ld, p.ld * p.cols}, ir.Local)
	if !swizzled {
		p.buf = cb.alignedAlloca(t, ir.MaxVectorBytes)
		return p
	}
	p.buf = cb.alignedAlloca(t, swizzleRow)
	p.buf.Def.Attrs.Set(ir.AttrSwizzle, ir.IntAttr(swizzleShift(p.ld*elem.Size())))
	return p
}

// swizzleRow is the stretch of local memory a swizzle permutes 16-byte
// chunks in: 128 bytes, a row of the 32 four-byte banks.
const swizzleRow = 128

// swizzleShift picks the offset bits that choose a chunk's permutation
// (ir.AttrSwizzle): those of the column, ld bytes apart, where a column
// fills a row or more, so that the same chunk of 8 neighbouring columns
// (what ldmatrix reads at once) lands in 8 different banks; else those of
// the row, which then holds several short columns whose chunks the XOR
// spreads the same way.
func swizzleShift(ldBytes int64) int64 {
	s := int64(7)
	for int64(1)<<(s+1) <= ldBytes {
		s++
	}
	return s
}

// copyWidth is the widest access (at most 16 bytes) to src whose chunks
// stay aligned on both sides: it divides unit, the number of elements
// between chunk starts in local memory (rows and leading dimension).
func copyWidth(f *ir.Func, src *ir.Value, unit int64) int {
	w := vectorWidth(f, src, ir.MaxVectorBytes/int(src.Type.Elem().Size()))
	for w > 1 && unit%int64(w) != 0 {
		w /= 2
	}
	return w
}

// alignedAlloca emits a local allocation of t aligned to align bytes.
func (g *gen) alignedAlloca(t *ir.Type, align int64) *ir.Value {
	in := g.Arena.NewInst(ir.OpAlloca, nil, t)
	in.Attrs.Set(ir.AttrAlignment, ir.IntAttr(align))
	return g.Insert(in).Result()
}

// stage returns the 2-D view of stage s.
func (p *panelStage) stage(g *gen, s *ir.Value) *ir.Value {
	t := ir.Memref(p.src.Type.Elem(), []int64{p.rows, p.cols}, []int64{1, p.ld}, ir.Local)
	in := g.Arena.NewInst(ir.OpSubview, []*ir.Value{p.buf, s}, t)
	lists := []int64{0, 0, ir.Dynamic, p.rows, p.cols, 0} // one allocation for the two
	in.Offsets, in.Sizes = lists[:3:3], lists[3:]
	return g.Insert(in).Result()
}

// hoist makes the views srcAt and bufAt of the panel's source and stages
// at the work-item's first chunk, where every chunk of the work-item lies
// at constant offsets from it (chunkGrid.origin) and no panel reaches past
// src's edges: each copy then addresses the views at its panel's origin
// plus constants, which the OpenCL compiler folds into the instructions,
// instead of recomputing the work-item's part of every address in the K
// loop. On NVIDIA's compiler that also decided the registers of the f32
// kernels whose multiply-adds are grouped (256³ f32, 4 blocks of 32×16 per
// subgroup, on an H100: 213 registers and 265.0 µs a launch without,
// 166 and 237.0 µs with). A swizzled panel keeps its stages whole, its
// permutation being of absolute offsets.
func (p *panelStage) hoist(g *gen, grid *chunkGrid) {
	row, col, ok := grid.origin(g)
	if !ok || p.crossesEdge(0) || p.crossesEdge(1) {
		return
	}
	p.srcAt = g.viewAt(p.src, row, col)
	if !p.swizzled {
		p.bufAt = g.viewAt(p.buf, row, col)
	}
}

// viewAt is the subview of m from (row, col) on: its first two modes start
// there and run to m's end, any further mode is kept whole.
func (g *gen) viewAt(m *ir.Value, row, col *ir.Value) *ir.Value {
	t := m.Type
	n := len(t.Shape())
	// The offsets and sizes, which the instruction keeps, in one
	// allocation; the shape and the operands, which Memref and NewInst
	// copy, on the stack.
	lists := make([]int64, 2*n)
	offsets, sizes := lists[:n:n], lists[n:]
	copy(sizes, t.Shape())
	var shapeRoom [4]int64
	shape := append(shapeRoom[:0], t.Shape()...)
	var operandsRoom [5]*ir.Value
	operands := append(operandsRoom[:0], m)
	for i, from := range [2]*ir.Value{row, col} {
		offsets[i], sizes[i], shape[i] = ir.Dynamic, ir.Dynamic, ir.Dynamic
		operands = append(operands, from, g.sub(g.size(m, i), from))
	}
	in := g.Arena.NewInst(ir.OpSubview, operands, ir.Memref(t.Elem(), shape, t.Stride(), t.Space()))
	in.Offsets, in.Sizes = offsets, sizes
	return g.Insert(in).Result()
}

// copyTo issues this work-item's share of the copy of the panel whose
// op(src) origin is (opRow, opCol) into stage s: the chunks of width
// elements (rows/width per column, column-major) are distributed by grid.
// Chunks past src's edge copy only their valid elements; a chunk wholly
// outside reads nothing and is aimed at src's first element so that its
// address stays inside the matrix.
func (p *panelStage) copyTo(g *gen, opRow, opCol, s *ir.Value, grid *chunkGrid) {
	r0, c0 := opRow, opCol
	if p.trans {
		r0, c0 = opCol, opRow
	}
	total := grid.perCol * p.cols
	if p.srcAt != nil {
		for i := range grid.perItem(total) {
			p.copyChunk(grid.guard(g, i, total), r0, c0, s, grid, i)
		}
		return
	}
	rowLimit, colLimit := g.size(p.src, 0), g.size(p.src, 1)
	checkRows, checkCols := p.crossesEdge(0), p.crossesEdge(1)
	// A chunk's row in src and how much of it lies inside are computed
	// once for the chunks that share its row (grid returns the same row).
	var row, gr, rowValid *ir.Value
	for i := int64(0); i < grid.perItem(total); i++ {
		r, col := grid.at(g, i)
		if r != row {
			row, gr, rowValid = r, g.add(r0, r), g.index(p.width)
			if checkRows {
				rowValid = g.clampIndex(g.sub(rowLimit, gr), p.width)
			}
		}
		gc := g.add(c0, col)
		gi := grid.guard(g, i, total)
		dst := []*ir.Value{row, col, s}
		if !checkRows && !checkCols {
			gi.AsyncCopy(int(p.width), p.src, []*ir.Value{gr, gc}, p.buf, dst, gi.index(p.width))
			continue
		}
		valid := rowValid
		if checkCols {
			valid = gi.mul(valid, gi.clampIndex(gi.sub(colLimit, gc), 1))
		}
		any := gi.clampIndex(valid, 1)
		gi.AsyncCopy(int(p.width), p.src, []*ir.Value{gi.mul(gr, any), gi.mul(gc, any)}, p.buf, dst, valid)
	}
}

// copyChunk issues the copy of work-item chunk i through the hoisted views
// (hoist): at the panel origin (r0, c0) in src plus the chunk's constant
// offset from the work-item's first.
func (p *panelStage) copyChunk(g *gen, r0, c0, s *ir.Value, grid *chunkGrid, i int64) {
	dr, dc := grid.offset(i)
	src := []*ir.Value{g.offset(r0, dr), g.offset(c0, dc)}
	if p.bufAt == nil {
		row, col := grid.at(g, i)
		g.AsyncCopy(int(p.width), p.srcAt, src, p.buf, []*ir.Value{row, col, s}, g.index(p.width))
		return
	}
	g.AsyncCopy(int(p.width), p.srcAt, src, p.bufAt, []*ir.Value{g.index(dr), g.index(dc), s}, g.index(p.width))
}

// chunkGrid distributes the chunks of a staged panel or slice over the
// work-group: perCol chunks of width elements down each column, column
// after column, chunk c = lin + i·threads being work-item lin's i-th
// (lin, the work-item's linear id, is below threads). Its element row is
// (c mod perCol)·width and its column c / perCol. When threads or perCol
// divides the other, the division and the remainder depend on lin alone
// and are computed once, before any chunk, so that each chunk costs an
// addition at most: a 3-stage pipeline unrolls dozens of chunks per
// work-item, and their index arithmetic was a third of its lowered code.
type chunkGrid struct {
	lin                    *ir.Value
	threads, perCol, width int64
	row, col               *ir.Value // of chunk lin, where computed once (col: threads a multiple of perCol)
}

// newChunkGrid returns the grid of perCol chunks of width elements per
// column for the threads work-items, computing what it can once with g
// (which must come before every use).
func newChunkGrid(g *gen, lin *ir.Value, threads, perCol, width int64) *chunkGrid {
	cg := &chunkGrid{lin: lin, threads: threads, perCol: perCol, width: width}
	switch {
	case perCol%threads == 0:
		// lin < threads <= perCol: chunk lin is row lin of column 0.
		cg.row = g.mul(lin, g.index(width))
	case threads%perCol == 0:
		n := g.index(perCol)
		cg.row, cg.col = g.mul(g.rem(lin, n), g.index(width)), g.div(lin, n)
	}
	return cg
}

// perItem is the number of chunks per work-item when there are total.
func (cg *chunkGrid) perItem(total int64) int64 { return (total + cg.threads - 1) / cg.threads }

// partial reports whether some work-items have no i-th chunk among total.
func (cg *chunkGrid) partial(i, total int64) bool { return (i+1)*cg.threads > total }

// guard returns where work-item lin's i-th chunk among total is copied:
// g itself, or an if of g that only work-items having that chunk enter.
func (cg *chunkGrid) guard(g *gen, i, total int64) *gen {
	if !cg.partial(i, total) {
		return g
	}
	sel := g.If(g.Cmp(ir.Lt, cg.chunk(g, i), g.index(total)))
	return g.at(sel.Regions[0])
}

// chunk is the index of work-item lin's i-th chunk.
func (cg *chunkGrid) chunk(g *gen, i int64) *ir.Value { return g.add(cg.lin, g.index(i*cg.threads)) }

// origin returns the element row and the column of work-item lin's first
// chunk where every other lies at constant offsets from it (offset).
func (cg *chunkGrid) origin(g *gen) (row, col *ir.Value, ok bool) {
	switch {
	case cg.perCol%cg.threads == 0:
		return cg.row, g.index(0), true
	case cg.col != nil:
		return cg.row, cg.col, true
	}
	return nil, nil, false
}

// offset returns the rows and columns between work-item lin's i-th chunk
// and its first, where origin found them constant.
func (cg *chunkGrid) offset(i int64) (rows, cols int64) {
	k := i * cg.threads
	if cg.perCol%cg.threads == 0 {
		return k % cg.perCol * cg.width, k / cg.perCol
	}
	return 0, k / cg.perCol
}

// at returns the element row and the column of work-item lin's i-th chunk.
func (cg *chunkGrid) at(g *gen, i int64) (row, col *ir.Value) {
	k := i * cg.threads
	switch {
	case cg.perCol%cg.threads == 0:
		// k mod perCol is a multiple of threads below perCol, so adding
		// lin < threads carries nothing into the column.
		return g.offset(cg.row, k%cg.perCol*cg.width), g.index(k / cg.perCol)
	case cg.col != nil:
		// k is a multiple of perCol: lin's row, k/perCol columns on.
		return cg.row, g.offset(cg.col, k/cg.perCol)
	}
	c, n := cg.chunk(g, i), g.index(cg.perCol)
	return g.mul(g.rem(c, n), g.index(cg.width)), g.div(c, n)
}

// atRound is at for a round given as an index value, as a loop over the
// rounds has it; a constant round folds as at does.
func (cg *chunkGrid) atRound(g *gen, i *ir.Value) (row, col *ir.Value) {
	if c, ok := constantOf(i); ok {
		return cg.at(g, c.Int)
	}
	switch {
	case cg.perCol == cg.threads:
		// Round i is column i.
		return cg.row, i
	case cg.perCol%cg.threads == 0:
		// q rounds fill a column, each threads chunks further down.
		q := g.index(cg.perCol / cg.threads)
		return g.add(cg.row, g.mul(g.rem(i, q), g.index(cg.threads*cg.width))), g.div(i, q)
	case cg.col != nil:
		// Each round is threads/perCol columns further on.
		return cg.row, g.add(cg.col, g.mul(i, g.index(cg.threads/cg.perCol)))
	}
	c, n := cg.roundChunk(g, i), g.index(cg.perCol)
	return g.mul(g.rem(c, n), g.index(cg.width)), g.div(c, n)
}

// roundChunk is chunk for a round given as an index value.
func (cg *chunkGrid) roundChunk(g *gen, i *ir.Value) *ir.Value {
	if c, ok := constantOf(i); ok {
		return cg.chunk(g, c.Int)
	}
	return g.add(cg.lin, g.mul(i, g.index(cg.threads)))
}

// offset is x + k for an index x and a constant k (x itself for 0).
func (g *gen) offset(x *ir.Value, k int64) *ir.Value {
	if k == 0 {
		return x
	}
	return g.add(x, g.index(k))
}

// crossesEdge reports whether a panel may reach past the end of mode i of
// the stored matrix: panels start at multiples of their extent, so only a
// dynamic size or one that is no multiple of the extent makes them ragged.
func (p *panelStage) crossesEdge(i int) bool {
	n, extent := p.src.Type.Shape()[i], []int64{p.rows, p.cols}[i]
	return n == ir.Dynamic || n%extent != 0
}

// clampIndex is min(max(x, 0), hi).
func (g *gen) clampIndex(x *ir.Value, hi int64) *ir.Value {
	return g.Arith(ir.Min, g.Arith(ir.Max, x, g.index(0)), g.index(hi))
}

// emitPipelined emits the staged lowering described above.
func (pl *gemmPlan) emitPipelined(g *gen, f *ir.Func) {
	bm, bn, bk := pl.gx*pl.tm, pl.gy*pl.tn, pl.ck*pl.u
	stages := int64(max(pl.p.Stages, 1))
	threads := int64(pl.p.WorkGroupSize[0] * pl.p.WorkGroupSize[1])
	// Local memory is allocated in collective code, before the parallel region.
	par := g.Region.Parent
	cb := g.at(par.Parent)
	cb.At = par.Parent.IndexOf(par)
	pa := newPanelStage(cb, f, pl.a, pl.ta, bm, bk, stages, pl.p.LocalPad, pl.p.LocalSwizzle)
	pb := newPanelStage(cb, f, pl.b, pl.tb, bk, bn, stages, pl.p.LocalPad, pl.p.LocalSwizzle)
	var out *epilogueStage
	if pl.p.LocalEpilogue && !pl.atomic {
		out = newEpilogueStage(cb, f, pl)
	}

	sx, sy, M, N, K := pl.prologue(g)
	pl.checkM = pl.checkM || pl.c.Type.Shape()[0]%bm != 0
	pl.checkN = pl.checkN || pl.c.Type.Shape()[1]%bn != 0
	lin := g.linearID(pl.p.SubgroupSize)
	blocksM, blocksN := ceilDivIndex(g, M, bm), ceilDivIndex(g, N, bn)
	steps := ceilDivIndex(g, K, bk)
	share := pl.blockShare(g, g.mul(blocksM, blocksN))
	total := g.mul(share.count, steps)
	// origin returns the block origin (m, n) and K offset of iteration it.
	origin := func(g *gen, it *ir.Value) (m, n, k *ir.Value) {
		blk := share.block(g, g.div(it, steps))
		m = g.mul(g.rem(blk, blocksM), g.index(bm))
		n = g.mul(g.div(blk, blocksM), g.index(bn))
		return m, n, g.mul(g.rem(it, steps), g.index(bk))
	}
	gridA := newChunkGrid(g, lin, threads, pa.rows/pa.width, pa.width)
	gridB := newChunkGrid(g, lin, threads, pb.rows/pb.width, pb.width)
	pa.hoist(g, gridA)
	pb.hoist(g, gridB)
	var gridC *chunkGrid
	if out != nil {
		gridC = out.grid(g, pl, lin)
	}
	issue := func(g *gen, it *ir.Value) {
		m, n, k := origin(g, it)
		s := g.rem(it, g.index(stages))
		pa.copyTo(g, m, k, s, gridA)
		pb.copyTo(g, k, n, s, gridB)
	}
	for s := int64(0); s < stages-1; s++ {
		it := g.index(s)
		sel := g.If(g.Cmp(ir.Lt, it, total))
		issue(g.at(sel.Regions[0]), it)
		g.AsyncCommit()
	}

	// The blocks, and inside each its K steps: iteration it = blk·steps + k.
	// The epilogue follows the K loop, outside any if, so its barriers
	// stand in uniform control flow that every OpenCL compiler places
	// (PoCL mishandles barriers inside ifs inside loops).
	rowA, colB := g.mul(sx, g.index(pl.tm)), g.mul(sy, g.index(pl.tn))
	blocks, gb := g.forLoop(g.index(0), share.count, g.index(1))
	blk := blocks.Body().Args[0]
	kLoop, gl := gb.forLoop(gb.index(0), steps, gb.index(1), pl.zeroAccs(gb)...)
	it := gl.add(gl.mul(blk, steps), kLoop.Body().Args[0])
	if stages == 1 {
		issue(gl, it)
		gl.AsyncCommit()
		gl.AsyncWait(0)
		gl.Barrier(ir.FenceLocal)
	} else {
		gl.AsyncWait(int(stages - 2))
		gl.Barrier(ir.FenceLocal)
		next := gl.add(it, gl.index(stages-1))
		sel := gl.If(gl.Cmp(ir.Lt, next, total))
		issue(gl.at(sel.Regions[0]), next)
		gl.AsyncCommit()
	}
	s := gl.rem(it, gl.index(stages))
	viewA, viewB := pa.stage(gl, s), pb.stage(gl, s)
	load := func(g *gen, isA bool, idx int64, kk *ir.Value, _ bool) *ir.Value {
		if isA {
			return pl.load(g, viewA, pl.aT, pl.ta, g.add(rowA, g.index(idx*pl.cm)), kk, false, false)
		}
		return pl.load(g, viewB, pl.bT, pl.tb, kk, g.add(colB, g.index(idx*pl.cn)), false, false)
	}
	acc := kLoop.Body().Args[1:]
	for uu := int64(0); uu < pl.u; uu++ {
		acc = pl.mulAdd(gl, gl.index(uu*pl.ck), false, acc, load)
	}
	if stages == 1 {
		gl.Barrier(ir.FenceLocal) // the next iteration overwrites the only stage
	}
	gl.Yield(acc...)

	m, n, _ := origin(gb, gb.mul(blk, steps))
	if out != nil {
		out.write(gb, pl, m, n, sx, sy, gridC, kLoop.Results)
		return
	}
	pl.epilogue(gb, gb.add(m, rowA), gb.add(n, colB), kLoop.Results)
}

// blockShare is the work-group's share of the blocks of its batch entry:
// all of them, or with p.Split work-groups sharing the entry, blocks
// first, first+split, ... (first: the work-group's place in the split).
type blockShare struct {
	first, split *ir.Value // nil without a split
	count        *ir.Value // the number of blocks in the share
}

// blockShare returns the work-group's share of the entry's blocks.
func (pl *gemmPlan) blockShare(g *gen, blocks *ir.Value) blockShare {
	split := int64(pl.p.Split)
	if split <= 1 {
		return blockShare{count: blocks}
	}
	// first < split, so blocks-first+split-1 is never negative: a
	// work-group past the last block gets none.
	first := g.splitPart()
	count := g.div(g.add(g.sub(blocks, first), g.index(split-1)), g.index(split))
	return blockShare{first: first, split: g.index(split), count: count}
}

// block is the entry's block number of the share's j-th block.
func (s blockShare) block(g *gen, j *ir.Value) *ir.Value {
	if s.split == nil {
		return j
	}
	return g.add(s.first, g.mul(j, s.split))
}

// epilogueStage is the staging buffer of the local epilogue: one column
// slice (cn columns per subgroup column) of the block's accumulators.
type epilogueStage struct {
	buf   *ir.Value // bm × (gy·cn) accumulator elements
	rows  int64     // bm
	cols  int64     // gy·cn
	width int64     // elements per vector access of C and of buf
}

// newEpilogueStage allocates the staging buffer (its leading dimension
// padded, see epiloguePad).
func newEpilogueStage(cb *gen, f *ir.Func, pl *gemmPlan) *epilogueStage {
	et := pl.accT.Elem()
	o := &epilogueStage{rows: pl.gx * pl.tm, cols: pl.gy * pl.cn}
	ld := o.rows + epiloguePad(et.Size())
	o.width = int64(copyWidth(f, pl.c, gcd(o.rows, ld)))
	o.buf = cb.alignedAlloca(ir.Memref(et, []int64{o.rows, o.cols}, []int64{1, ld}, ir.Local), ir.MaxVectorBytes)
	return o
}

// grid is the distribution of the staging buffer's chunks (newChunkGrid
// with g).
func (o *epilogueStage) grid(g *gen, pl *gemmPlan, lin *ir.Value) *chunkGrid {
	threads := int64(pl.p.WorkGroupSize[0] * pl.p.WorkGroupSize[1])
	return newChunkGrid(g, lin, threads, o.rows/o.width, o.width)
}

// write is the epilogue of the block at (m, n) through the staging buffer:
// per slice j of cn columns, every subgroup stores its α-scaled
// accumulators of that slice, and after a barrier all work-items write the
// slice to C in vectors along its columns.
func (o *epilogueStage) write(g *gen, pl *gemmPlan, m, n, sx, sy *ir.Value, grid *chunkGrid, acc []*ir.Value) {
	ni, nj := pl.tm/pl.cm, pl.tn/pl.cn
	alpha := g.convert(pl.alpha, pl.accT.Elem())
	row0, col := g.mul(sx, g.index(pl.tm)), g.mul(sy, g.index(pl.cn)) // the subgroup's tile in the buffer
	for j := int64(0); j < nj; j++ {
		if j > 0 {
			g.Barrier(ir.FenceLocal) // everyone has written out the previous slice
		}
		for i := int64(0); i < ni; i++ {
			val := acc[j*ni+i]
			if !isConstant(pl.alpha, 1) {
				val = g.coopOp(ir.OpCoopMatrixScale, pl.accT, alpha, val).Result()
			}
			g.Insert(g.Arena.NewInst(ir.OpCoopMatrixStore, []*ir.Value{val, o.buf, g.offset(row0, i*pl.cm), col}))
		}
		g.Barrier(ir.FenceLocal)
		o.writeSlice(g, pl, m, g.add(n, g.index(j*pl.cn)), grid)
	}
}

// writeSlice writes the staged slice to C, its chunks distributed by
// grid: the slice's columns start at n, its rows at m. The work-item's
// rounds (grid.perItem) run in a loop whose body finds the round's chunk
// from the induction variable. Unrolled, each round repeated the chunk's
// index arithmetic and, on a ragged C, its vector and element paths: the
// local epilogue doubled the C of nvidia-pipeline in BenchmarkCompileGemm
// (47 KB; 25 KB with the loop). The loop holds no barrier, so work-items
// may leave it apart. From two rounds on the loop is the smaller (17.0
// against 18.1 KB of C for intel-pipeline in BenchmarkGemmSourceToSPIRV);
// a single round is written without it, its chunk folded to the grid's
// constants (in a loop of one round it was 4 % more C). Inputs of 4 bytes
// or more, intel-pipeline's f32 among them, keep the unrolled rounds all
// the same (see unrolledRounds).
func (o *epilogueStage) writeSlice(g *gen, pl *gemmPlan, m, n *ir.Value, grid *chunkGrid) {
	w := &sliceWrite{pl: pl, grid: grid, m: m, n: n, M: g.size(pl.c, 0), N: g.size(pl.c, 1), total: grid.perCol * o.cols,
		unrolled: unrolledRounds(pl)}
	rounds := grid.perItem(w.total)
	if w.unrolled || rounds == 1 {
		for i := range rounds {
			o.writeRound(g, w, g.index(i), grid.partial(i, w.total))
		}
		return
	}
	loop, gl := g.forLoop(g.index(0), g.index(rounds), nil)
	o.writeRound(gl, w, loop.Body().Args[0], grid.partial(rounds-1, w.total))
}

// unrolledRounds reports whether the local epilogue writes a slice's
// rounds unrolled, in the form it had before the loop: each round's chunk
// position and column in C computed ahead of the guard of a partial round,
// the column's (sc/cn)·tn + sc mod cn never folded to sc, and the row in C
// shared by the rounds of one row. That is so for inputs of 4 bytes or
// more (f32 measured; f64 and complex, never timed with the loop, keep the
// old form too). On an H100 the driver made different f32
// kernels of the loop: 64×64×32 f32, all 32 local-epilogue configurations
// of the H100's space, took 1.013 times as long (geometric mean; 0.979 to
// 1.117 each, reproducibly) and 64×64×64 f32 staged 1.001 (0.927 to
// 1.083); unrolling the loop again with its rewritten index arithmetic
// did not bring the old times back, so the old arithmetic comes with the
// old rounds. f16 kernels, whose accumulators are matrix-engine fragments,
// ran as fast with the loop and keep its smaller code (bf16 with them).
func unrolledRounds(pl *gemmPlan) bool { return pl.a.Type.Elem().Size() >= 4 }

// sliceWrite is what the rounds of a slice's write share.
type sliceWrite struct {
	pl       *gemmPlan
	grid     *chunkGrid
	m, n     *ir.Value // the slice's origin in C
	M, N     *ir.Value // C's extents
	total    int64     // the slice's chunks
	unrolled bool      // unrolledRounds
	row, cr  *ir.Value // the last round's row in the slice and in C
}

// writeRound writes work-item lin's chunk of round i (an index value:
// the loop's induction variable, or a constant where unrolled); guarded,
// only if the work-item has one (round i may be partial). A chunk wholly
// inside C is written as a vector, one on its edge (where C may be
// ragged) element by element.
func (o *epilogueStage) writeRound(g *gen, w *sliceWrite, i *ir.Value, guarded bool) {
	if guarded && !w.unrolled {
		g = w.guard(g, i)
	}
	row, sc := w.grid.atRound(g, i)
	cr, cc := w.rowInC(g, row), g.add(w.n, o.column(g, w, sc))
	if guarded && w.unrolled {
		g = w.guard(g, i)
	}
	if !w.pl.checkM && !w.pl.checkN {
		o.writeChunk(g, w.pl, row, sc, cr, cc)
		return
	}
	inside := g.Arith(ir.And, g.Cmp(ir.Le, g.add(cr, g.index(o.width)), w.M), g.Cmp(ir.Lt, cc, w.N))
	sel := g.If(inside)
	o.writeChunk(g.at(sel.Regions[0]), w.pl, row, sc, cr, cc)
	ge := g.at(sel.Regions[1])
	for e := int64(0); e < o.width; e++ {
		r := ge.add(cr, ge.index(e))
		in := ge.Arith(ir.And, ge.Cmp(ir.Lt, r, w.M), ge.Cmp(ir.Lt, cc, w.N))
		se := ge.If(in)
		gs := ge.at(se.Regions[0])
		x := gs.Load(o.buf, gs.add(row, gs.index(e)), sc)
		scalarUpdate(gs, w.pl.beta, false, x, w.pl.c, []*ir.Value{r, cc})
	}
}

// guard returns where the work-item writes its chunk of round i: an if
// of g that only work-items having one enter.
func (w *sliceWrite) guard(g *gen, i *ir.Value) *gen {
	sel := g.If(g.Cmp(ir.Lt, w.grid.roundChunk(g, i), g.index(w.total)))
	return g.at(sel.Regions[0])
}

// rowInC is C's row of the slice's row, computed once for the unrolled
// rounds that share it (the grid's row where its columns advance by
// whole rounds), ahead of their guards.
func (w *sliceWrite) rowInC(g *gen, row *ir.Value) *ir.Value {
	if row != w.row {
		w.row, w.cr = row, g.add(w.m, row)
	}
	return w.cr
}

// column is the column of the slice that staged column sc holds:
// (sc/cn)·tn + sc mod cn, which is sc itself where the slice has one
// subgroup column's (gy = 1) or the subgroups' tiles are one slice wide
// (not folded where the rounds are unrolled: see unrolledRounds).
func (o *epilogueStage) column(g *gen, w *sliceWrite, sc *ir.Value) *ir.Value {
	pl := w.pl
	if c, ok := constantOf(sc); ok {
		return g.index(c.Int/pl.cn*pl.tn + c.Int%pl.cn)
	}
	if !w.unrolled && (o.cols == pl.cn || pl.tn == pl.cn) {
		return sc
	}
	cn := g.index(pl.cn)
	return g.add(g.mul(g.div(sc, cn), g.index(pl.tn)), g.rem(sc, cn))
}

// writeChunk writes width staged elements from (row, sc) to C at (cr, cc)
// with one vector load (and one of C when β may be non-zero) and one
// vector store.
func (o *epilogueStage) writeChunk(g *gen, pl *gemmPlan, row, sc, cr, cc *ir.Value) {
	w := int(o.width)
	if w == 1 {
		scalarUpdate(g, pl.beta, false, g.Load(o.buf, row, sc), pl.c, []*ir.Value{cr, cc})
		return
	}
	xs := g.VectorLoad(w, o.buf, row, sc)
	writeUpdates(g, pl.beta, xs,
		func(g *gen, vs []*ir.Value) { g.VectorStore(vs, pl.c, cr, cc) },
		func(g *gen) []*ir.Value { return g.VectorLoad(w, pl.c, cr, cc) })
}

// epiloguePad is the padding of the staging buffer's leading dimension, in
// elements: 16 bytes, so that the lanes of a matrix-engine fragment, which
// store pairs of neighbouring columns, do not meet in one bank as a
// leading dimension of a multiple of 32 banks would make them.
func epiloguePad(elemSize int64) int64 { return max(1, int64(ir.MaxVectorBytes)/elemSize) }

// GemmOperands is what the local-memory size of a GEMM configuration
// depends on besides the configuration: element sizes in bytes and the
// instruction's modifiers.
type GemmOperands struct {
	SizeA, SizeB, SizeC int
	TransA, TransB      bool
	Atomic              bool
}

// GemmLocalBytes is the local memory a GEMM configuration allocates: the
// stages of the A and B panels, stored as A and B are (so a transposed
// operand's panel has its K extent along the padded mode), and, with
// LocalEpilogue and no atomic update, the staging buffer of C. Each
// allocation counts rounded up to the bytes it is aligned to (16, and 128
// for swizzled panels, which come first). The
// compiler's Validate and the tuner's pruner both use it, so nothing is
// compiled that does not fit.
func GemmLocalBytes(p tuning.Params, o GemmOperands) int {
	if p.SubgroupSize == 0 {
		return 0
	}
	bm := p.WorkGroupSize[0] / p.SubgroupSize * p.Tile[0]
	bn := p.WorkGroupSize[1] * p.Tile[1]
	bk := p.Coopmatrix[2] * max(p.Unroll, 1)
	total := 0
	if p.StageLocal {
		stages := max(p.Stages, 1)
		align := ir.MaxVectorBytes
		if p.LocalSwizzle {
			align = swizzleRow
		}
		panel := func(rows, cols int, trans bool, size int) int {
			if trans {
				rows, cols = cols, rows
			}
			return roundUp((rows+p.LocalPad)*cols*stages*size, align)
		}
		total += panel(bm, bk, o.TransA, o.SizeA) + panel(bk, bn, o.TransB, o.SizeB)
	}
	if p.LocalEpilogue && !o.Atomic {
		cols := p.WorkGroupSize[1] * p.Coopmatrix[1]
		total += roundUp((bm+int(epiloguePad(int64(o.SizeC))))*cols*o.SizeC, ir.MaxVectorBytes)
	}
	return total
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
