package lower

import (
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// The other memory-bound collectives (axpby, hadamard_product, sum,
// cumsum; gemv and ger are in matvec.go) are lowered to a loop over their
// output elements spread over the work-items of the work-group: work-item
// lin takes elements lin, lin + threads, ... in column-major order, so
// neighbouring work-items touch neighbouring elements. The knobs are the
// work-group size, the batch entries per work-group and the unroll of
// inner reduction loops.

// spread emits the distributed loop over the box extents (empty: a single
// element, handled by work-item 0) and calls body with the multi-index.
func (g *gen) spread(p tuning.Params, extents []*ir.Value, body func(g *gen, idx []*ir.Value)) {
	total := g.index(1)
	for _, e := range extents {
		total = g.mul(total, e)
	}
	threads := g.index(int64(p.WorkGroupSize[0] * p.WorkGroupSize[1]))
	loop, gl := g.forLoop(g.linearID(p.SubgroupSize), total, threads)
	rest := loop.Body().Args[0]
	idx := make([]*ir.Value, len(extents))
	for i, e := range extents {
		if i == len(extents)-1 {
			idx[i] = rest
			break
		}
		idx[i] = gl.rem(rest, e)
		rest = gl.div(rest, e)
	}
	body(gl, idx)
}

// shapeOf returns the mode sizes of memref m as values.
func (g *gen) shapeOf(m *ir.Value) []*ir.Value {
	out := make([]*ir.Value, m.Type.Order())
	for i := range out {
		out[i] = g.size(m, i)
	}
	return out
}

// scalarUpdate writes out[idx] := val + β·out[idx] with the β and atomic
// specialisations of writeUpdate. val has out's element type.
func scalarUpdate(g *gen, beta *ir.Value, atomic bool, val, out *ir.Value, idx []*ir.Value) {
	writeUpdate(g, beta, atomic, val,
		func(g *gen, v *ir.Value, mode ir.AtomicMode) { g.Store(mode, v, out, idx...) },
		func(g *gen) *ir.Value { return g.Load(out, idx...) },
		func(g *gen, old, beta *ir.Value) *ir.Value {
			if beta != nil {
				old = g.mul(beta, old)
			}
			return g.add(val, old)
		})
}

// scaled returns α·x in type t, skipping the multiplication when α is 1.
func (g *gen) scaled(alpha, x *ir.Value, t *ir.Type) *ir.Value {
	if isConstant(alpha, 1) {
		return x
	}
	return g.mul(g.convert(alpha, t), x)
}

// reduce emits acc = Σ_{k < n} term(k) in type t, in ascending k. With
// p.Unroll = u > 1 the main loop steps u and evaluates u terms per trip; a
// remainder loop takes the last n mod u.
func (g *gen) reduce(p tuning.Params, n *ir.Value, t *ir.Type, term func(g *gen, k *ir.Value) *ir.Value) *ir.Value {
	u := int64(max(p.Unroll, 1))
	acc := g.zero(t)
	from := g.index(0)
	if u > 1 {
		mainEnd := g.sub(n, g.rem(n, g.index(u)))
		main, gb := g.forLoop(from, mainEnd, g.index(u), acc)
		k, sum := main.Body().Args[0], main.Body().Args[1]
		for i := int64(0); i < u; i++ {
			ki := k
			if i > 0 {
				ki = gb.add(k, gb.index(i))
			}
			sum = gb.add(sum, term(gb, ki))
		}
		gb.Yield(sum)
		acc, from = main.Result(), mainEnd
	}
	loop, gb := g.forLoop(from, n, nil, acc)
	k, sum := loop.Body().Args[0], loop.Body().Args[1]
	gb.Yield(gb.add(sum, term(gb, k)))
	return loop.Result()
}

// opIndex returns the index of op(A) element (i, j) in A.
func opIndex(trans bool, i, j *ir.Value) []*ir.Value {
	if trans {
		return []*ir.Value{j, i}
	}
	return []*ir.Value{i, j}
}

func lowerHadamard(g *gen, in *ir.Inst, p tuning.Params) {
	alpha, ins, beta, c := in.BLASOperands()
	t := c.Type.Elem()
	g.spread(p, g.shapeOf(c), func(g *gen, idx []*ir.Value) {
		x := g.convert(g.Load(ins[0], idx...), t)
		y := g.convert(g.Load(ins[1], idx...), t)
		scalarUpdate(g, beta, in.Atomic != ir.NotAtomic, g.scaled(alpha, g.mul(x, y), t), c, idx)
	})
}

func lowerAxpby(g *gen, in *ir.Inst, p tuning.Params) {
	alpha, ins, beta, out := in.BLASOperands()
	a := ins[0]
	t := out.Type.Elem()
	trans := in.TransA == ir.Trans && a.Type.Order() == 2
	g.spread(p, g.shapeOf(out), func(g *gen, idx []*ir.Value) {
		src := idx
		if trans {
			src = opIndex(true, idx[0], idx[1])
		}
		x := g.convert(g.Load(a, src...), t)
		scalarUpdate(g, beta, in.Atomic != ir.NotAtomic, g.scaled(alpha, x, t), out, idx)
	})
}

// lowerSum: b = α·op(A)·1 + β·b (b a vector) or b = α·Σ A + β·b (b a
// scalar, summed by one work-item).
func lowerSum(g *gen, in *ir.Inst, p tuning.Params) {
	alpha, ins, beta, out := in.BLASOperands()
	a := ins[0]
	t := out.Type.Elem()
	trans := in.TransA == ir.Trans
	reduceMode := 0
	if a.Type.Order() == 2 && !trans {
		reduceMode = 1
	}
	n := g.size(a, reduceMode)
	g.spread(p, g.shapeOf(out), func(g *gen, idx []*ir.Value) {
		acc := g.reduce(p, n, t, func(g *gen, k *ir.Value) *ir.Value {
			src := []*ir.Value{k}
			if len(idx) == 1 {
				src = opIndex(trans, idx[0], k)
			}
			return g.convert(g.Load(a, src...), t)
		})
		scalarUpdate(g, beta, in.Atomic != ir.NotAtomic, g.scaled(alpha, acc, t), out, idx)
	})
}

// lowerCumsum: the lines along the summation mode are spread over the
// work-items; each scans its line sequentially.
func lowerCumsum(g *gen, in *ir.Inst, p tuning.Params) {
	alpha, ins, beta, out := in.BLASOperands()
	a := ins[0]
	t := out.Type.Elem()
	mode := int(in.Mode)
	shape := g.shapeOf(out)
	others := append(append([]*ir.Value{}, shape[:mode]...), shape[mode+1:]...)
	g.spread(p, others, func(g *gen, idx []*ir.Value) {
		loop, gb := g.forLoop(g.index(0), shape[mode], nil, g.zero(t))
		j, run := loop.Body().Args[0], loop.Body().Args[1]
		full := append(append(append([]*ir.Value{}, idx[:mode]...), j), idx[mode:]...)
		run = gb.add(run, gb.convert(gb.Load(a, full...), t))
		scalarUpdate(gb, beta, in.Atomic != ir.NotAtomic, gb.scaled(alpha, run, t), out, full)
		gb.Yield(run)
	})
}
