package lower

import (
	"fmt"

	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// gemmPlan is the GEMM lowering of DESIGN.md §4 for one instruction: the
// work-group's subgroups form a grid gx × gy; subgroup (sx, sy) owns the C
// tiles (tm × tn) at tile coordinates (sx + i·gx, sy + j·gy), wrapping
// around when C is larger than the grid; inside a tile, (tm/cm)·(tn/cn)
// accumulators of cm × cn are updated by a K loop stepping ck·u.
type gemmPlan struct {
	p              tuning.Params
	gx, gy         int64
	tm, tn         int64
	cm, cn, ck     int64
	u              int64
	ta, tb         bool
	alpha, beta    *ir.Value
	a, b, c        *ir.Value
	atomic         bool
	accT, aT, bT   *ir.Type // coopmatrix types
	checkM, checkN bool     // C's rows / columns may end inside a tile
	stage          bool
}

func newGemmPlan(in *ir.Inst, p tuning.Params) (*gemmPlan, error) {
	alpha, ins, beta, c := in.BLASOperands()
	pl := &gemmPlan{p: p,
		gx: int64(p.WorkGroupSize[0] / p.SubgroupSize), gy: int64(p.WorkGroupSize[1]),
		tm: int64(p.Tile[0]), tn: int64(p.Tile[1]),
		cm: int64(p.Coopmatrix[0]), cn: int64(p.Coopmatrix[1]), ck: int64(p.Coopmatrix[2]),
		u:  int64(max(p.Unroll, 1)),
		ta: in.TransA == ir.Trans, tb: in.TransB == ir.Trans,
		alpha: alpha, beta: beta, a: ins[0], b: ins[1], c: c,
		atomic: in.Atomic != ir.NotAtomic,
		stage:  p.StageLocal,
	}
	if pl.tm%pl.cm != 0 || pl.tn%pl.cn != 0 || pl.ck < 1 {
		return nil, fmt.Errorf("lower: tile %dx%d is not a multiple of coopmatrix %dx%dx%d", pl.tm, pl.tn, pl.cm, pl.cn, pl.ck)
	}
	ct := c.Type.Elem()
	pl.accT = ir.Coopmatrix(ct, pl.cm, pl.cn, ir.MatrixAcc)
	pl.aT = ir.Coopmatrix(pl.a.Type.Elem(), pl.cm, pl.ck, ir.MatrixA)
	pl.bT = ir.Coopmatrix(pl.b.Type.Elem(), pl.ck, pl.cn, ir.MatrixB)
	m, n := c.Type.Shape()[0], c.Type.Shape()[1]
	pl.checkM = m == ir.Dynamic || m%pl.tm != 0
	pl.checkN = n == ir.Dynamic || n%pl.tn != 0
	return pl, nil
}

func lowerGemm(g *gen, f *ir.Func, in *ir.Inst, p tuning.Params) error {
	pl, err := newGemmPlan(in, p)
	if err != nil {
		return err
	}
	if pl.stage {
		pl.emitPipelined(g, f)
		return nil
	}
	var out *epilogueStage
	if p.LocalEpilogue && !pl.atomic {
		par := g.Region.Parent
		cb := g.at(par.Parent)
		cb.At = par.Parent.IndexOf(par)
		out = newEpilogueStage(cb, f, pl)
	}
	sx, sy, M, N, K := pl.prologue(g)
	// mul_add shuffles between lanes when subgroups have several, and the
	// local epilogue meets at barriers: both need uniform loops.
	gn, bm, bn, m0, n0 := pl.tileLoops(g, sx, sy, M, N, pl.p.SubgroupSize > 1 || out != nil)
	acc := pl.zeroAccs(gn)
	acc = pl.kLoops(gn, gn.index(0), K, acc, pl.loadGlobal(m0, n0))
	if out != nil {
		out.write(gn, pl, bm, bn, sx, sy, out.grid(gn, pl, gn.linearID(pl.p.SubgroupSize)), acc)
		// The next tile's epilogue overwrites the staging buffer.
		gn.Barrier(ir.FenceLocal)
		return nil
	}
	pl.epilogue(gn, m0, n0, acc)
	return nil
}

// tileLoops opens the loops over the C tiles of subgroup (sx, sy) and
// returns the generator inside them, the origin (bm, bn) of the
// work-group's block of (gx·tm) × (gy·tn) and the subgroup's tile origin
// (m0, n0) = (bm + sx·tm, bn + sy·tn).
//
// uniform: the block loops start at 0 for every subgroup, so the whole
// work-group takes the same trip count, and tiles past C's edge are masked
// by the bounds checks (loads read zeros, stores are skipped). Cross-lane
// operations in the loops need that: barriers everywhere, and shuffles and
// subgroup reductions on PoCL, which implements them with work-group
// barriers. Otherwise each subgroup starts at its own tile and stops at
// the edge, with no masked tiles.
func (pl *gemmPlan) tileLoops(g *gen, sx, sy, M, N *ir.Value, uniform bool) (gn *gen, bm, bn, m0, n0 *ir.Value) {
	pm, pn := pl.gx*pl.tm, pl.gy*pl.tn
	offM, offN := g.mul(sx, g.index(pl.tm)), g.mul(sy, g.index(pl.tn))
	if pl.p.Split > 1 {
		return pl.sharedBlocks(g, offM, offN, M, N)
	}
	fromM, fromN := offM, offN
	if uniform {
		fromM, fromN = g.index(0), g.index(0)
		m, n := pl.c.Type.Shape()[0], pl.c.Type.Shape()[1]
		pl.checkM = pl.checkM || m%pm != 0
		pl.checkN = pl.checkN || n%pn != 0
	}
	mLoop, gm := g.forLoop(fromM, M, g.index(pm))
	nLoop, gn := gm.forLoop(fromN, N, gm.index(pn))
	bm, bn = mLoop.Body().Args[0], nLoop.Body().Args[0]
	if !uniform {
		return gn, bm, bn, bm, bn
	}
	return gn, bm, bn, gn.add(bm, offM), gn.add(bn, offN)
}

// sharedBlocks is tileLoops when p.Split work-groups share the batch
// entry: its blocks of C, numbered down C's columns of blocks, are dealt
// out round-robin (work-group y of the split takes blocks y, y+split, ...),
// in one uniform loop whose blocks past C's edge are masked.
func (pl *gemmPlan) sharedBlocks(g *gen, offM, offN, M, N *ir.Value) (gn *gen, bm, bn, m0, n0 *ir.Value) {
	pm, pn := pl.gx*pl.tm, pl.gy*pl.tn
	pl.checkM = pl.checkM || pl.c.Type.Shape()[0]%pm != 0
	pl.checkN = pl.checkN || pl.c.Type.Shape()[1]%pn != 0
	blocksM, blocksN := ceilDivIndex(g, M, pm), ceilDivIndex(g, N, pn)
	loop, gn := g.forLoop(g.splitPart(), g.mul(blocksM, blocksN), g.index(int64(pl.p.Split)))
	blk := loop.Body().Args[0]
	bm = gn.mul(gn.rem(blk, blocksM), gn.index(pm))
	bn = gn.mul(gn.div(blk, blocksM), gn.index(pn))
	return gn, bm, bn, gn.add(bm, offM), gn.add(bn, offN)
}

// ceilDivIndex is ⌈x / d⌉ for an index x and a positive constant d.
func ceilDivIndex(g *gen, x *ir.Value, d int64) *ir.Value {
	return g.div(g.add(x, g.index(d-1)), g.index(d))
}

// prologue emits the subgroup's grid position (sx, sy) and the sizes M, N
// and K.
func (pl *gemmPlan) prologue(g *gen) (sx, sy, M, N, K *ir.Value) {
	sg := g.Cast(g.Builtin(ir.SubgroupID), ir.Index)
	sx = g.rem(sg, g.index(pl.gx))
	sy = g.div(sg, g.index(pl.gx))
	M, N = g.size(pl.c, 0), g.size(pl.c, 1)
	K = g.size(pl.a, pl.kMode())
	return sx, sy, M, N, K
}

// kMode is the mode of A that runs along K.
func (pl *gemmPlan) kMode() int {
	if pl.ta {
		return 0
	}
	return 1
}

func (pl *gemmPlan) nAcc() int { return int(pl.tm/pl.cm) * int(pl.tn/pl.cn) }

func (pl *gemmPlan) zeroAccs(g *gen) []*ir.Value {
	zero := g.zero(pl.accT.Elem())
	acc := make([]*ir.Value, pl.nAcc())
	for i := range acc {
		acc[i] = g.Constant(zero.Def.Const, pl.accT)
	}
	return acc
}

// pieceLoader loads the A piece for tile row i or the B piece for tile
// column j at K offset k; kChecked asks for bounds checks along K.
type pieceLoader func(g *gen, isA bool, idx int64, k *ir.Value, kChecked bool) *ir.Value

// loadGlobal loads pieces straight from A and B.
func (pl *gemmPlan) loadGlobal(m0, n0 *ir.Value) pieceLoader {
	return func(g *gen, isA bool, idx int64, k *ir.Value, kChecked bool) *ir.Value {
		if isA {
			row := g.add(m0, g.index(idx*pl.cm))
			return pl.load(g, pl.a, pl.aT, pl.ta, row, k, pl.checkM, kChecked)
		}
		col := g.add(n0, g.index(idx*pl.cn))
		return pl.load(g, pl.b, pl.bT, pl.tb, k, col, kChecked, pl.checkN)
	}
}

// load emits a coopmatrix load of type t at coopmatrix position (row, col)
// of op(M); checkRows/checkCols ask for bounds checks on the coopmatrix's
// rows/columns (the flags of cooperative_matrix_load are relative to the
// loaded matrix, so a transposed load keeps them).
func (pl *gemmPlan) load(g *gen, m *ir.Value, t *ir.Type, trans bool, row, col *ir.Value, checkRows, checkCols bool) *ir.Value {
	x, y := row, col
	if trans {
		x, y = col, row
	}
	in := g.coopOp(ir.OpCoopMatrixLoad, t, m, x, y)
	if trans {
		in.TransA = ir.Trans
	}
	in.Checked = checkedFlag(checkRows, checkCols)
	return in.Result()
}

func checkedFlag(rows, cols bool) ir.Checked {
	switch {
	case rows && cols:
		return ir.BothChecked
	case rows:
		return ir.RowsChecked
	case cols:
		return ir.ColsChecked
	}
	return ir.Unchecked
}

// kLoops emits the unrolled main K loop over [from, from + ⌊(to-from)/(ck·u)⌋·ck·u)
// and the checked remainder loop stepping ck, and returns the accumulators.
func (pl *gemmPlan) kLoops(g *gen, from, to *ir.Value, acc []*ir.Value, load pieceLoader) []*ir.Value {
	step := pl.ck * pl.u
	span := g.sub(to, from)
	mainEnd := g.add(from, g.sub(span, g.rem(span, g.index(step))))
	// The body is replicated u times here, so the loop itself carries no
	// unroll request (unrolling it again would only bloat the kernel).
	main, gb := g.forLoop(from, mainEnd, g.index(step), acc...)
	k0 := main.Body().Args[0]
	cur := main.Body().Args[1:]
	for uu := int64(0); uu < pl.u; uu++ {
		k := k0
		if uu > 0 {
			k = gb.add(k0, gb.index(uu*pl.ck))
		}
		cur = pl.mulAdd(gb, k, false, cur, load)
	}
	gb.Yield(cur...)
	rest, gr := g.forLoop(mainEnd, to, g.index(pl.ck), main.Results...)
	out := pl.mulAdd(gr, rest.Body().Args[0], true, rest.Body().Args[1:], load)
	gr.Yield(out...)
	return rest.Results
}

// mulAdd loads the pieces of one ck-step and updates every accumulator.
func (pl *gemmPlan) mulAdd(g *gen, k *ir.Value, kChecked bool, acc []*ir.Value, load pieceLoader) []*ir.Value {
	ni, nj := int(pl.tm/pl.cm), int(pl.tn/pl.cn)
	var asRoom [8]*ir.Value // the A pieces, on the stack unless many
	as := asRoom[:0]
	for i := range ni {
		as = append(as, load(g, true, int64(i), k, kChecked))
	}
	out := make([]*ir.Value, len(acc))
	for j := 0; j < nj; j++ {
		b := load(g, false, int64(j), k, kChecked)
		for i := 0; i < ni; i++ {
			out[j*ni+i] = g.coopOp(ir.OpCoopMatrixMulAdd, pl.accT, as[i], b, acc[j*ni+i]).Result()
		}
	}
	return out
}

// epilogue scales by alpha, adds beta·C (never reading C when beta is 0)
// and stores or atomically updates C.
func (pl *gemmPlan) epilogue(g *gen, m0, n0 *ir.Value, acc []*ir.Value) {
	ct := pl.accT.Elem()
	alpha := g.convert(pl.alpha, ct)
	ni := int(pl.tm / pl.cm)
	check := checkedFlag(pl.checkM, pl.checkN)
	for idx, a := range acc {
		i, j := int64(idx%ni), int64(idx/ni)
		row := g.add(m0, g.index(i*pl.cm))
		col := g.add(n0, g.index(j*pl.cn))
		val := a
		if !isConstant(pl.alpha, 1) {
			val = g.coopOp(ir.OpCoopMatrixScale, pl.accT, alpha, a).Result()
		}
		store := func(g *gen, v *ir.Value, mode ir.AtomicMode) {
			st := g.Insert(g.Arena.NewInst(ir.OpCoopMatrixStore, []*ir.Value{v, pl.c, row, col}))
			st.Checked, st.Atomic = check, mode
		}
		loadC := func(g *gen) *ir.Value {
			return pl.load(g, pl.c, pl.accT, false, row, col, pl.checkM, pl.checkN)
		}
		addBeta := func(g *gen, old *ir.Value, beta *ir.Value) *ir.Value {
			scaled := old
			if beta != nil {
				scaled = g.coopOp(ir.OpCoopMatrixScale, pl.accT, beta, old).Result()
			}
			return g.Arith(ir.Add, val, scaled)
		}
		writeUpdate(g, pl.beta, pl.atomic, val, store, loadC, addBeta)
	}
}

// writeUpdate is the β-specialised write shared by the coopmatrix and the
// scalar epilogues: store val, or store val + β·old where old is read only
// when β may be non-zero. addBeta gets a nil beta when β is 1.
func writeUpdate(g *gen, beta *ir.Value, atomic bool, val *ir.Value,
	store func(*gen, *ir.Value, ir.AtomicMode),
	load func(*gen) *ir.Value,
	addBeta func(g *gen, old, beta *ir.Value) *ir.Value) {
	switch {
	case atomic && isConstant(beta, 0):
		store(g, val, ir.Atomic)
	case atomic:
		store(g, val, ir.AtomicAdd) // the verifier admits only β ∈ {0, 1} with .atomic
	default:
		updateValues(g, beta, []*ir.Value{val},
			func(g *gen, vs []*ir.Value) { store(g, vs[0], ir.NotAtomic) },
			func(g *gen) []*ir.Value { return []*ir.Value{load(g)} },
			func(g *gen, _ int, old, beta *ir.Value) *ir.Value { return addBeta(g, old, beta) })
	}
}

// writeUpdates writes the scalars xs, or xs + β·old, with one store of all
// of them (a vector store) and, when β may be non-zero, one load of old.
func writeUpdates(g *gen, beta *ir.Value, xs []*ir.Value,
	store func(*gen, []*ir.Value), load func(*gen) []*ir.Value) {
	updateValues(g, beta, xs, store, load, func(g *gen, i int, old, beta *ir.Value) *ir.Value {
		if beta != nil {
			old = g.mul(beta, old)
		}
		return g.add(xs[i], old)
	})
}

// updateValues is the non-atomic core of writeUpdate and writeUpdates:
// store vals when β is 0, else vals combined with the old values by
// addBeta (β nil when it is 1); a β known only at run time is tested, so
// that old is not read when β is 0.
func updateValues(g *gen, beta *ir.Value, vals []*ir.Value,
	store func(*gen, []*ir.Value), load func(*gen) []*ir.Value,
	addBeta func(g *gen, i int, old, beta *ir.Value) *ir.Value) {
	combine := func(g *gen, beta *ir.Value) []*ir.Value {
		olds := load(g)
		out := make([]*ir.Value, len(vals))
		for i, old := range olds {
			out[i] = addBeta(g, i, old, beta)
		}
		return out
	}
	switch {
	case isConstant(beta, 0):
		store(g, vals)
	case isConstant(beta, 1):
		store(g, combine(g, nil))
	case isLiteral(beta):
		store(g, combine(g, g.convert(beta, vals[0].Type.ScalarOf())))
	default:
		et := vals[0].Type.ScalarOf()
		b := g.convert(beta, et)
		isZero := g.Cmp(ir.Eq, b, g.zero(et))
		types := make([]*ir.Type, len(vals))
		for i, v := range vals {
			types[i] = v.Type
		}
		sel := g.If(isZero, types...)
		gt, ge := g.at(sel.Regions[0]), g.at(sel.Regions[1])
		gt.Yield(vals...)
		ge.Yield(combine(ge, b)...)
		store(g, sel.Results)
	}
}
