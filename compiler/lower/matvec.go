package lower

import (
	"fmt"
	"slices"

	"tltune/compiler/ir"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
)

// gemv and ger are memory-bound: their matrix (A of gemv, C of ger) must
// stream at the copy bandwidth. The lowering is built around that matrix
// as it lies in memory. Mode 0 (its rows) is contiguous, so lanes access it
// in vectors of w consecutive rows (vector_load/vector_store: 128 bits where
// the alignment is proven, tuning.Params.VectorWidth caps w), and a subgroup
// covers a tile of rows × cols of it per trip (tuning.Params.Tile):
//
//   - l0 lanes lie along the rows and l1 = sgs/l0 along the columns; lane
//     (r, c) = (lane mod l0, lane div l0) takes the vectors r, r+l0, ... (n0
//     of them) of the columns c, c+l1, ... (n1 of them), so neighbouring
//     lanes touch neighbouring 16-byte pieces and every lane has n0·n1
//     independent accesses in flight;
//   - ger: the subgroup grid [wx/sgs, wy] walks the tiles of C, wrapping
//     around; each vector of C is written (read first when β may be
//     non-zero) from a vector of a and one element of b;
//   - gemv.n (A is M×N; the result runs along A's rows): the subgroups take
//     row tiles round-robin and loop over all columns, cols per trip; the
//     partial sums of the l1 lanes sharing rows are added by a butterfly of
//     subgroup_shuffle_xor over the lane bits of the column position;
//   - gemv.t (A is N×M; the reduction runs along A's rows): the subgroups
//     take column tiles (results) round-robin and loop over the rows, rows
//     per trip; the l0 lanes of a column are added by a butterfly over the
//     low lane bits.
//
// gemv's tile loop starts at 0 for every subgroup and masks tiles past the
// end, so the whole work-group meets the shuffles equally often (PoCL
// implements them with work-group barriers). A vector that crosses the end
// of the rows falls back to scalar accesses of the elements inside, columns
// past the end are skipped; both checks are left out where the static shape
// proves them unnecessary.

// maxPerLane bounds the vectors and columns one lane takes per trip: the
// lowering unrolls them, and a stray tile must not explode the kernel.
const maxPerLane = 16

// tiling is how the lanes of a subgroup cover one tile of the matrix.
type tiling struct {
	sgs    int
	w      int // vector width in elements (1: scalar)
	l0, l1 int // lanes along the rows and along the columns; l0·l1 = sgs
	n0, n1 int // vectors and columns per lane per trip
}

func (t tiling) rows() int64 { return int64(t.n0 * t.l0 * t.w) }
func (t tiling) cols() int64 { return int64(t.n1 * t.l1) }

// newTiling fits tile to a subgroup of sgs lanes and vectors of w: at least
// one vector and one column per lane, rows a multiple of w·l0, columns of
// l1. Lanes split between rows and columns in powers of two (every
// target's subgroup sizes are), so butterflies can combine them.
func newTiling(sgs, w int, tile [2]int) tiling {
	vecs := ceilDivInt(max(tile[0], w), w)
	l0 := sgs
	if sgs&(sgs-1) == 0 {
		l0 = min(sgs, floorPow2(vecs))
	}
	l1 := sgs / l0
	return tiling{sgs: sgs, w: w, l0: l0, l1: l1,
		n0: min(ceilDivInt(vecs, l0), maxPerLane),
		n1: min(ceilDivInt(max(tile[1], 1), l1), maxPerLane)}
}

func ceilDivInt(a, b int) int { return (a + b - 1) / b }

// MatvecTile is the tile [rows, cols] the gemv/ger lowering covers per
// subgroup and trip for tile at subgroup size sgs and vector width vw (the
// width the lowering proved; tuner/prune checks that a configuration's
// width is provable and its tile is already this one, so no two points of
// a search space compile the same kernel).
func MatvecTile(sgs, vw int, tile [2]int) [2]int {
	tl := newTiling(sgs, max(vw, 1), tile)
	return [2]int{int(tl.rows()), int(tl.cols())}
}

// needsCheck reports whether a mode of static or dynamic size n may end
// inside a tile of size step (n Dynamic: it may).
func needsCheck(n, step int64) bool { return n == ir.Dynamic || n%step != 0 }

// limitIf is size when check, else nil: the bound of checked accesses.
func limitIf(check bool, size *ir.Value) *ir.Value {
	if check {
		return size
	}
	return nil
}

// matvec is what the gemv and ger lowerings share for one instruction.
type matvec struct {
	p           tuning.Params
	f           *ir.Func
	tl          tiling
	t           *ir.Type // the output's element type: all arithmetic happens in it
	alpha, beta *ir.Value
	atomic      bool
	m           *ir.Value // the streamed matrix (A, C)
	// the lane's position in the subgroup: row lane r, column lane c
	lane, r, c *ir.Value
	sg         *ir.Value // subgroup id (index)
}

func newMatvec(g *gen, f *ir.Func, in *ir.Inst, p tuning.Params, m *ir.Value) *matvec {
	alpha, _, beta, out := in.BLASOperands()
	w := vectorWidth(f, m, max(p.VectorWidth, 1))
	if in.Atomic != ir.NotAtomic && m == out {
		w = 1 // atomic updates are scalar
	}
	mv := &matvec{p: p, f: f, tl: newTiling(p.SubgroupSize, w, p.Tile), t: out.Type.Elem(),
		alpha: alpha, beta: beta, atomic: in.Atomic != ir.NotAtomic, m: m}
	mv.sg = g.Cast(g.Builtin(ir.SubgroupID), ir.Index)
	mv.lane = g.Cast(g.Builtin(ir.SubgroupLocalID), ir.Index)
	mv.r = g.rem(mv.lane, g.index(int64(mv.tl.l0)))
	mv.c = g.div(mv.lane, g.index(int64(mv.tl.l0)))
	return mv
}

// rows returns the first row of each of the lane's vectors in the tile at
// row origin r0.
func (mv *matvec) rows(g *gen, r0 *ir.Value) []*ir.Value {
	first := g.add(r0, g.mul(mv.r, g.index(int64(mv.tl.w))))
	out := make([]*ir.Value, mv.tl.n0)
	for a := range out {
		out[a] = g.add(first, g.index(int64(mv.tl.l0*mv.tl.w*a)))
	}
	return out
}

// cols returns the lane's columns in the tile at column origin c0: n1
// neighbours, so that the vector elements they take (gemv.n's x, ger's b)
// are one run in memory.
func (mv *matvec) cols(g *gen, c0 *ir.Value) []*ir.Value {
	first := g.add(c0, g.mul(mv.c, g.index(int64(mv.tl.n1))))
	out := make([]*ir.Value, mv.tl.n1)
	for b := range out {
		out[b] = g.add(first, g.index(int64(b)))
	}
	return out
}

// at returns idx with its mode-0 index advanced by k.
func at(g *gen, idx []*ir.Value, k int) []*ir.Value {
	if k == 0 {
		return idx
	}
	out := append([]*ir.Value{g.add(idx[0], g.index(int64(k)))}, idx[1:]...)
	return out
}

// loadRun loads n consecutive elements of m along mode 0 from idx (idx[0]
// a multiple of vw) in vectors of vw elements, converted to t.
func (g *gen) loadRun(m *ir.Value, idx []*ir.Value, n, vw int, t *ir.Type) []*ir.Value {
	out := make([]*ir.Value, 0, n)
	for k := 0; k < n; k += vw {
		if vw == 1 {
			out = append(out, g.Load(m, at(g, idx, k)...))
		} else {
			out = append(out, g.VectorLoad(vw, m, at(g, idx, k)...)...)
		}
	}
	for i, x := range out {
		out[i] = g.convert(x, t)
	}
	return out
}

// storeRun stores xs into consecutive elements of m along mode 0 from idx
// in vectors of vw elements.
func (g *gen) storeRun(xs []*ir.Value, m *ir.Value, idx []*ir.Value, vw int) {
	for k := 0; k < len(xs); k += vw {
		if vw == 1 {
			g.Store(ir.NotAtomic, xs[k], m, at(g, idx, k)...)
		} else {
			g.VectorStore(xs[k:k+vw], m, at(g, idx, k)...)
		}
	}
}

// loadChecked is loadRun for a run that may cross limit (the size of mode
// 0; nil: it does not): elements at or past it read as zero, and a run
// inside it takes the vector path.
func (g *gen) loadChecked(m *ir.Value, idx []*ir.Value, n, vw int, t *ir.Type, limit *ir.Value) []*ir.Value {
	if limit == nil {
		return g.loadRun(m, idx, n, vw, t)
	}
	types := slices.Repeat([]*ir.Type{t}, n)
	full := g.Cmp(ir.Le, g.add(idx[0], g.index(int64(n))), limit)
	sel := g.If(full, types...)
	gt, ge := g.at(sel.Regions[0]), g.at(sel.Regions[1])
	gt.Yield(gt.loadRun(m, idx, n, vw, t)...)
	edge := make([]*ir.Value, n)
	for k := range edge {
		e := at(ge, idx, k)
		in := ge.If(ge.Cmp(ir.Lt, e[0], limit), t)
		gi, gz := ge.at(in.Regions[0]), ge.at(in.Regions[1])
		gi.Yield(gi.convert(gi.Load(m, e...), t))
		gz.Yield(gz.zero(t))
		edge[k] = in.Result()
	}
	ge.Yield(edge...)
	return slices.Clone(sel.Results)
}

// update writes vals (consecutive elements of out along mode 0 from idx):
// out := vals + β·out, reading out only where β may be non-zero, in vectors
// of vw (atomic updates are scalar). Elements at or past limit (the size of
// mode 0; nil: the run ends before it) are left alone.
func (mv *matvec) update(g *gen, vals []*ir.Value, out *ir.Value, idx []*ir.Value, vw int, limit *ir.Value) {
	if limit != nil {
		full := g.If(g.Cmp(ir.Le, g.add(idx[0], g.index(int64(len(vals)))), limit))
		mv.update(g.at(full.Regions[0]), vals, out, idx, vw, nil)
		ge := g.at(full.Regions[1])
		for k, v := range vals {
			e := at(ge, idx, k)
			in := ge.If(ge.Cmp(ir.Lt, e[0], limit))
			scalarUpdate(ge.at(in.Regions[0]), mv.beta, mv.atomic, v, out, e)
		}
		return
	}
	if vw == 1 || mv.atomic {
		for k, v := range vals {
			scalarUpdate(g, mv.beta, mv.atomic, v, out, at(g, idx, k))
		}
		return
	}
	withBeta := func(g *gen, beta *ir.Value) []*ir.Value {
		old := g.loadRun(out, idx, len(vals), vw, mv.t)
		sum := make([]*ir.Value, len(vals))
		for k, v := range vals {
			if beta != nil {
				old[k] = g.mul(beta, old[k])
			}
			sum[k] = g.add(v, old[k])
		}
		return sum
	}
	switch b := mv.beta; {
	case isConstant(b, 0):
		g.storeRun(vals, out, idx, vw)
	case isConstant(b, 1):
		g.storeRun(withBeta(g, nil), out, idx, vw)
	case isLiteral(b):
		g.storeRun(withBeta(g, g.convert(b, mv.t)), out, idx, vw)
	default:
		beta := g.convert(b, mv.t)
		sel := g.If(g.Cmp(ir.Eq, beta, g.zero(mv.t)), slices.Repeat([]*ir.Type{mv.t}, len(vals))...)
		g.at(sel.Regions[0]).Yield(vals...)
		ge := g.at(sel.Regions[1])
		ge.Yield(withBeta(ge, beta)...)
		g.storeRun(sel.Results, out, idx, vw)
	}
}

// butterfly adds up xs over the lanes that differ in the lane bits of the
// masks from, 2·from, ... below to.
func butterfly(g *gen, xs []*ir.Value, from, to int) []*ir.Value {
	for mask := from; mask < to; mask *= 2 {
		m := g.IntConst(int64(mask), ir.I32)
		next := make([]*ir.Value, len(xs))
		for i, x := range xs {
			next[i] = g.add(x, g.ShuffleXor(x, m))
		}
		xs = next
	}
	return xs
}

func typesOf(vs []*ir.Value) []*ir.Type {
	out := make([]*ir.Type, len(vs))
	for i, v := range vs {
		out[i] = v.Type
	}
	return out
}

func (g *gen) zeros(t *ir.Type, n int) []*ir.Value {
	out := make([]*ir.Value, n)
	for i := range out {
		out[i] = g.zero(t)
	}
	return out
}

func lowerGer(g *gen, f *ir.Func, in *ir.Inst, p tuning.Params) {
	_, ins, _, c := in.BLASOperands()
	x, y := ins[0], ins[1]
	mv := newMatvec(g, f, in, p, c)
	tl := mv.tl
	gx := int64(p.WorkGroupSize[0] / p.SubgroupSize)
	sx, sy := g.rem(mv.sg, g.index(gx)), g.div(mv.sg, g.index(gx))
	M, N := g.size(c, 0), g.size(c, 1)
	rowLoop, gr := g.forLoop(g.mul(sx, g.index(tl.rows())), M, g.index(gx*tl.rows()))
	colFrom, colStep := gr.mul(sy, gr.index(tl.cols())), int64(p.WorkGroupSize[1])*tl.cols()
	if split := int64(p.Split); split > 1 {
		// The work-groups sharing the entry deal out its rounds of column
		// tiles: work-group y takes rounds y, y+split, ...
		colFrom = gr.add(colFrom, gr.mul(gr.splitPart(), gr.index(colStep)))
		colStep *= split
	}
	colLoop, gc := gr.forLoop(colFrom, N, gr.index(colStep))
	t := gerTile{mv: mv, c: c, N: N,
		rows: mv.rows(gc, rowLoop.Body().Args[0]), cols: mv.cols(gc, colLoop.Body().Args[0]),
		limitM: limitIf(needsCheck(c.Type.Shape()[0], tl.rows()), M),
		checkN: needsCheck(c.Type.Shape()[1], tl.cols())}
	t.update(gc, t.products(gc, x, y))
}

// gerTile is a lane's part of one tile of ger's C: its vectors of rows
// (n0 of w rows each) in each of its columns.
type gerTile struct {
	mv         *matvec
	c, N       *ir.Value
	rows, cols []*ir.Value
	limitM     *ir.Value // C's rows where they may end inside the tile; else nil
	checkN     bool      // the columns may end inside the tile
}

// products returns α·a[i]·b[j] for the tile's elements, column by column,
// a vector of rows each. The lane's run of b is read at once, before any
// store: a load after a store to C could alias it as far as the device
// compiler knows, so it would wait for the one before it.
func (t *gerTile) products(g *gen, x, y *ir.Value) []*ir.Value {
	mv, tl := t.mv, t.mv.tl
	ax := make([][]*ir.Value, tl.n0)
	wx := vectorWidth(mv.f, x, tl.w)
	for a := range ax {
		ax[a] = g.loadChecked(x, []*ir.Value{t.rows[a]}, tl.w, wx, mv.t, t.limitM)
		for e, v := range ax[a] {
			ax[a][e] = g.scaled(mv.alpha, v, mv.t)
		}
	}
	ys := g.loadChecked(y, t.cols[:1], len(t.cols), vectorWidth(mv.f, y, tl.n1&-tl.n1), mv.t, limitIf(t.checkN, t.N))
	prods := make([]*ir.Value, 0, len(t.cols)*tl.n0*tl.w)
	for _, yj := range ys {
		for a := range tl.n0 {
			for _, v := range ax[a] {
				prods = append(prods, g.mul(v, yj))
			}
		}
	}
	return prods
}

// update writes C := prods + β·C over the tile. Where β may be non-zero,
// the tile's old values are all read before any store, for the reason b
// is (products).
func (t *gerTile) update(g *gen, prods []*ir.Value) {
	if t.mv.atomic { // atomic updates read nothing
		t.each(g, prods, t.mv.update)
		return
	}
	stored := *t.mv
	stored.beta = g.zero(t.mv.t) // the values are final: stored as they are
	writeUpdates(g, t.mv.beta, prods,
		func(g *gen, vals []*ir.Value) { t.each(g, vals, stored.update) },
		t.old)
}

// each calls write for the tile's vectors, vals holding them in the
// order of products; columns past the end are skipped.
func (t *gerTile) each(g *gen, vals []*ir.Value,
	write func(g *gen, vals []*ir.Value, out *ir.Value, idx []*ir.Value, vw int, limit *ir.Value)) {
	w := t.mv.tl.w
	for _, j := range t.cols {
		gj := g
		if t.checkN {
			inside := g.If(g.Cmp(ir.Lt, j, t.N))
			gj = g.at(inside.Regions[0])
		}
		for _, i := range t.rows {
			write(gj, vals[:w], t.c, []*ir.Value{i, j}, w, t.limitM)
			vals = vals[w:]
		}
	}
}

// old reads the tile's values of C in the order of products: zeros for
// rows past the end, the last column's for columns past it (their results
// are not stored).
func (t *gerTile) old(g *gen) []*ir.Value {
	tl := t.mv.tl
	old := make([]*ir.Value, 0, len(t.cols)*tl.n0*tl.w)
	for _, j := range t.cols {
		if t.checkN {
			j = g.Arith(ir.Min, j, g.sub(t.N, g.index(1)))
		}
		for _, i := range t.rows {
			old = append(old, g.loadChecked(t.c, []*ir.Value{i, j}, tl.w, tl.w, t.mv.t, t.limitM)...)
		}
	}
	return old
}

func lowerGemv(g *gen, f *ir.Func, in *ir.Inst, p tuning.Params) {
	_, ins, _, out := in.BLASOperands()
	a, x := ins[0], ins[1]
	mv := newMatvec(g, f, in, p, a)
	if in.TransA == ir.Trans {
		mv.gemvT(g, x, out)
	} else {
		mv.gemvN(g, x, out)
	}
}

// tileLoop opens the work-group-uniform loop over tiles of size step taken
// round-robin by the subgroups, and returns the generator inside, the
// tile's origin and whether the subgroup's tile exists. With a split, the
// work-groups sharing the entry (builtin.group_id.y) deal out the rounds:
// work-group y takes rounds y, y+split, ...
func (mv *matvec) tileLoop(g *gen, size *ir.Value, step int64) (gt *gen, origin, active *ir.Value) {
	round := int64(mv.p.Subgroups()) * step
	first, stride := g.index(0), g.index(round)
	if split := int64(mv.p.Split); split > 1 {
		first, stride = g.mul(g.splitPart(), g.index(round)), g.index(split*round)
	}
	loop, gl := g.forLoop(first, size, stride)
	origin = gl.add(loop.Body().Args[0], gl.mul(mv.sg, gl.index(step)))
	return gl, origin, gl.Cmp(ir.Lt, origin, size)
}

// accumulate runs body inside `if active` and returns its values, zeros
// for an inactive subgroup.
func (mv *matvec) accumulate(g *gen, active *ir.Value, n int, body func(g *gen) []*ir.Value) []*ir.Value {
	sel := g.If(active, slices.Repeat([]*ir.Type{mv.t}, n)...)
	gt, ge := g.at(sel.Regions[0]), g.at(sel.Regions[1])
	gt.Yield(body(gt)...)
	ge.Yield(ge.zeros(mv.t, n)...)
	return slices.Clone(sel.Results)
}

// kLoop runs trip over [0, K) in steps of step, carrying acc: unroll full
// steps an iteration while they fit, then single full steps, unchecked,
// and, when K may not be a multiple of step, a last checked one. The
// unrolled trips' loads are independent, so a lane has unroll times as
// many in flight (gemv.n 1024² f16 on an H100, PTX back to back: 77.6 µs
// one trip an iteration, 75.3 µs eight).
func kLoop(g *gen, K *ir.Value, staticK, step int64, unroll int, acc []*ir.Value,
	trip func(g *gen, k0 *ir.Value, acc []*ir.Value, check bool) []*ir.Value) []*ir.Value {
	from := g.index(0)
	// Loops of u trips an iteration, then of one, each from where the
	// last left off.
	for _, u := range slices.Compact([]int64{int64(max(unroll, 1)), 1}) {
		full := K
		if needsCheck(staticK, u*step) {
			full = g.sub(K, g.rem(K, g.index(u*step)))
		}
		loop, gl := g.forLoop(from, full, g.index(u*step), acc...)
		next := loop.Body().Args[1:]
		for i := range u {
			next = trip(gl, gl.offset(loop.Body().Args[0], i*step), next, false)
		}
		gl.Yield(next...)
		acc = slices.Clone(loop.Results)
		if !needsCheck(staticK, u*step) {
			return acc
		}
		from = full
	}
	rest := g.If(g.Cmp(ir.Lt, from, K), typesOf(acc)...)
	gt, ge := g.at(rest.Regions[0]), g.at(rest.Regions[1])
	gt.Yield(trip(gt, from, acc, true)...)
	ge.Yield(acc...)
	return slices.Clone(rest.Results)
}

// gemvN: out[i] = α Σ_k A[i, k] x[k] + β out[i], lanes along A's rows.
func (mv *matvec) gemvN(g *gen, x, out *ir.Value) {
	tl, a := mv.tl, mv.m
	M, K := g.size(a, 0), g.size(a, 1)
	checkM := needsCheck(a.Type.Shape()[0], tl.rows())
	gt, r0, active := mv.tileLoop(g, M, tl.rows())
	rows := mv.rows(gt, r0)
	acc := mv.accumulate(gt, active, tl.n0*tl.w, func(g *gen) []*ir.Value {
		return kLoop(g, K, a.Type.Shape()[1], tl.cols(), mv.p.Unroll, g.zeros(mv.t, tl.n0*tl.w),
			func(g *gen, k0 *ir.Value, acc []*ir.Value, check bool) []*ir.Value {
				next := append([]*ir.Value(nil), acc...)
				cols := mv.cols(g, k0)
				var xs []*ir.Value // the lane's run of x, where no column is checked
				if !check {
					// Runs start at multiples of n1: vectors must divide it.
					xs = g.loadRun(x, cols[:1], len(cols), vectorWidth(mv.f, x, tl.n1&-tl.n1), mv.t)
				}
				for b, k := range cols {
					gk, done := g, func(vals []*ir.Value) []*ir.Value { return vals }
					var xk *ir.Value
					if check { // columns past K add nothing
						gk, done = guarded(g, g.Cmp(ir.Lt, k, K), next)
						xk = gk.convert(gk.Load(x, k), mv.t)
					} else {
						xk = xs[b]
					}
					sum := append([]*ir.Value(nil), next...)
					for v, i := range rows {
						col := gk.loadChecked(a, []*ir.Value{i, k}, tl.w, tl.w, mv.t, limitIf(checkM, M))
						for e, av := range col {
							sum[v*tl.w+e] = gk.add(sum[v*tl.w+e], gk.mul(av, xk))
						}
					}
					next = done(sum)
				}
				return next
			})
	})
	acc = butterfly(gt, acc, tl.l0, tl.sgs)
	writer := gt.Arith(ir.And, gt.Cmp(ir.Eq, mv.c, gt.index(0)), active)
	w := gt.If(writer)
	gw := gt.at(w.Regions[0])
	wo := vectorWidth(mv.f, out, tl.w)
	for v, i := range rows {
		vals := make([]*ir.Value, tl.w)
		for e := range vals {
			vals[e] = gw.scaled(mv.alpha, acc[v*tl.w+e], mv.t)
		}
		mv.update(gw, vals, out, []*ir.Value{i}, wo, limitIf(checkM, M))
	}
}

// gemvT: out[j] = α Σ_k A[k, j] x[k] + β out[j], lanes along A's rows (k).
func (mv *matvec) gemvT(g *gen, x, out *ir.Value) {
	tl, a := mv.tl, mv.m
	K, N := g.size(a, 0), g.size(a, 1)
	checkN := needsCheck(a.Type.Shape()[1], tl.cols())
	wx := vectorWidth(mv.f, x, tl.w)
	gt, c0, active := mv.tileLoop(g, N, tl.cols())
	cols := mv.cols(gt, c0)
	// One partial sum per column and vector element: w independent chains.
	acc := mv.accumulate(gt, active, tl.n1*tl.w, func(g *gen) []*ir.Value {
		return kLoop(g, K, a.Type.Shape()[0], tl.rows(), mv.p.Unroll, g.zeros(mv.t, tl.n1*tl.w),
			func(g *gen, k0 *ir.Value, acc []*ir.Value, check bool) []*ir.Value {
				next := append([]*ir.Value(nil), acc...)
				for _, k := range mv.rows(g, k0) {
					xs := g.loadChecked(x, []*ir.Value{k}, tl.w, wx, mv.t, limitIf(check, K))
					for b, j := range cols {
						gj, done := g, func(vals []*ir.Value) []*ir.Value { return vals }
						if checkN { // columns past the end add nothing
							gj, done = guarded(g, g.Cmp(ir.Lt, j, N), next)
						}
						col := gj.loadChecked(a, []*ir.Value{k, j}, tl.w, tl.w, mv.t, limitIf(check, K))
						sum := append([]*ir.Value(nil), next...)
						for e, av := range col {
							sum[b*tl.w+e] = gj.add(sum[b*tl.w+e], gj.mul(av, xs[e]))
						}
						next = done(sum)
					}
				}
				return next
			})
	})
	dots := make([]*ir.Value, tl.n1)
	for b := range dots {
		dots[b] = acc[b*tl.w]
		for e := 1; e < tl.w; e++ {
			dots[b] = gt.add(dots[b], acc[b*tl.w+e])
		}
	}
	dots = butterfly(gt, dots, 1, tl.l0)
	writer := gt.Arith(ir.And, gt.Cmp(ir.Eq, mv.r, gt.index(0)), active)
	w := gt.If(writer)
	gw := gt.at(w.Regions[0])
	for b, d := range dots {
		j := cols[b]
		gj := gw
		if checkN {
			inside := gw.If(gw.Cmp(ir.Lt, j, N))
			gj = gw.at(inside.Regions[0])
		}
		scalarUpdate(gj, mv.beta, mv.atomic, gj.scaled(mv.alpha, d, mv.t), out, []*ir.Value{j})
	}
}

// explainMatvec says how the lowering will stream the matrix of main: the
// vector width asked and proven (with the alignment and strides that
// decided it) and how the lanes cover the tile.
func explainMatvec(f *ir.Func, main *ir.Inst, p tuning.Params) string {
	_, ins, _, out := main.BLASOperands()
	m := out
	if main.Op == ir.OpGemv {
		m = ins[0]
	}
	w := vectorWidth(f, m, max(p.VectorWidth, 1))
	if main.Atomic != ir.NotAtomic && main.Op == ir.OpGer {
		w = 1
	}
	tl := newTiling(p.SubgroupSize, w, p.Tile)
	return fmt.Sprintf("%s streams %%%s (%s, %d-byte aligned): vector width %d asked, %d used; tile %dx%d: %d lanes down, %d across, %d vector(s) and %d column(s) per lane",
		main.Op, m.Name, m.Type, ir.Alignment(f, m), max(p.VectorWidth, 1), w, tl.rows(), tl.cols(), tl.l0, tl.l1, tl.n0, tl.n1)
}

// matvecHeuristic is the gemv/ger configuration when nothing else
// chooses: 128-bit vectors, a tile of one vector per lane along the rows
// (fewer lanes for short columns) and four columns per lane, and as many
// subgroups, up to four, as there are tiles to share.
func matvecHeuristic(p tuning.Params, main *ir.Inst, t *target.Target) tuning.Params {
	_, ins, _, out := main.BLASOperands()
	m := out
	if main.Op == ir.OpGemv {
		m = ins[0]
	}
	sgs := p.SubgroupSize
	w := max(1, ir.MaxVectorBytes/int(m.Type.Elem().Size()))
	rows, cols := m.Type.Shape()[0], m.Type.Shape()[1]
	tileRows := sgs * w
	if rows != ir.Dynamic {
		tileRows = min(tileRows, max(w, floorPow2(int(rows))))
	}
	tl := newTiling(sgs, w, [2]int{tileRows, 4 * sgs})
	tl.n1 = 4
	p.VectorWidth, p.Tile = w, [2]int{int(tl.rows()), int(tl.cols())}
	tiles, step := cols, tl.cols() // gemv.t and ger share column tiles
	if main.Op == ir.OpGemv && main.TransA == ir.NoTrans {
		tiles, step = rows, tl.rows()
	}
	ns := 4
	if tiles != ir.Dynamic {
		ns = clamp(int((tiles+step-1)/step), 1, 4)
	}
	ns = max(1, min(ns, t.MaxWorkGroupSize/sgs))
	if t.OneSubgroupPerGroup {
		ns = 1
	}
	p.WorkGroupSize = [2]int{ns * sgs, 1}
	if main.Op == ir.OpGer {
		p.WorkGroupSize = [2]int{sgs, ns}
	}
	return p
}

// guarded opens `if cond` yielding values like cur (which the else branch
// keeps) and returns the generator of the then branch and the function
// that closes it with the then branch's values, returning the if's results.
func guarded(g *gen, cond *ir.Value, cur []*ir.Value) (*gen, func([]*ir.Value) []*ir.Value) {
	sel := g.If(cond, typesOf(cur)...)
	g.at(sel.Regions[1]).Yield(cur...)
	gt := g.at(sel.Regions[0])
	return gt, func(vals []*ir.Value) []*ir.Value {
		gt.Yield(vals...)
		return slices.Clone(sel.Results)
	}
}
