package lower

import "tltune/compiler/ir"

// emitStaged is the GEMM lowering with A and B staged in local memory
// (XeTile's cooperative load): the work-group walks C in blocks of
// (gx·tm) × (gy·tn); per K block of ck·u it copies the op(A) and op(B)
// panels into local memory with coalesced loads (zero-padded at the
// edges, so the K loop needs no remainder), waits at a barrier, and every
// subgroup reads its cooperative matrices from the panels. Every loop
// bound is uniform across the work-group, as the barriers require.
func (pl *gemmPlan) emitStaged(g *gen, in *ir.Inst) {
	pm, pn, kb := pl.gx*pl.tm, pl.gy*pl.tn, pl.ck*pl.u
	// Local memory is allocated in collective code, before the parallel region.
	par := g.Region.Parent
	cb := newGen(par.Parent)
	cb.At = par.Parent.IndexOf(par)
	panelA := cb.alloca(ir.Memref(pl.a.Type.Elem(), []int64{pm, kb}, nil, ir.Local))
	panelB := cb.alloca(ir.Memref(pl.b.Type.Elem(), []int64{kb, pn}, nil, ir.Local))

	sx, sy, M, N, K := pl.prologue(g)
	lin := g.linearID(pl.p.SubgroupSize)
	threads := g.index(int64(pl.p.WorkGroupSize[0] * pl.p.WorkGroupSize[1]))
	gn, bm, bn, m0, n0 := pl.tileLoops(g, sx, sy, M, N, true)

	kLoop, gk := gn.forLoop(gn.index(0), K, gn.index(kb), pl.zeroAccs(gn)...)
	k := kLoop.Body().Args[0]
	copyPanel(gk, pl.a, pl.ta, bm, k, pm, kb, M, K, panelA, lin, threads)
	copyPanel(gk, pl.b, pl.tb, k, bn, kb, pn, K, N, panelB, lin, threads)
	gk.Barrier(ir.FenceLocal)
	rowA := gk.mul(sx, gk.index(pl.tm))
	colB := gk.mul(sy, gk.index(pl.tn))
	load := func(g *gen, isA bool, idx int64, kk *ir.Value, _ bool) *ir.Value {
		if isA {
			return pl.load(g, panelA, pl.aT, false, g.add(rowA, g.index(idx*pl.cm)), kk, false, false)
		}
		return pl.load(g, panelB, pl.bT, false, kk, g.add(colB, g.index(idx*pl.cn)), false, false)
	}
	acc := kLoop.Body().Args[1:]
	for uu := int64(0); uu < pl.u; uu++ {
		acc = pl.mulAdd(gk, gk.index(uu*pl.ck), false, acc, load)
	}
	gk.Barrier(ir.FenceLocal) // the next K block overwrites the panels
	gk.Yield(acc...)
	pl.epilogue(gn, m0, n0, kLoop.Results)
}

// alloca emits a local-memory allocation of memref type t.
func (g *gen) alloca(t *ir.Type) *ir.Value {
	return g.Insert(ir.NewInst(ir.OpAlloca, nil, t)).Result()
}

// copyPanel copies the rows × cols block of op(src) at (r0, c0) into dst,
// work-item lin of threads taking every threads-th element in column-major
// order (consecutive work-items read consecutive rows: coalesced for
// untransposed sources). Elements outside [0, rowLimit) × [0, colLimit)
// are stored as zero.
func copyPanel(g *gen, src *ir.Value, trans bool, r0, c0 *ir.Value, rows, cols int64,
	rowLimit, colLimit, dst, lin, threads *ir.Value) {
	loop, gl := g.forLoop(lin, g.index(rows*cols), threads)
	t := loop.Body().Args[0]
	r := gl.rem(t, gl.index(rows))
	c := gl.div(t, gl.index(rows))
	gr, gc := gl.add(r0, r), gl.add(c0, c)
	inside := gl.Arith(ir.And, gl.Cmp(ir.Lt, gr, rowLimit), gl.Cmp(ir.Lt, gc, colLimit))
	et := src.Type.Elem()
	sel := gl.If(inside, et)
	gt, ge := gl.at(sel.Regions[0]), gl.at(sel.Regions[1])
	if trans {
		gt.Yield(gt.Load(src, gc, gr))
	} else {
		gt.Yield(gt.Load(src, gr, gc))
	}
	ge.Yield(ge.zero(et))
	gl.Store(ir.NotAtomic, sel.Result(), dst, r, c)
}
