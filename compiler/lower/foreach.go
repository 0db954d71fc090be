package lower

import (
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// Foreach replaces every foreach of f by a parallel region in which the
// work-items share the iteration box (see spread), and every foreach_tile by
// one in which the subgroups share the tiles. The body moves into the loop
// unchanged, its loop variables replaced by the decoded indices.
func Foreach(f *ir.Func, p tuning.Params) error {
	var l lazyLowering
	return rewriteCollective(f.Body, func(in *ir.Inst) (bool, error) {
		switch in.Op {
		case ir.OpForeach:
			lowerForeach(in, p, l.get())
		case ir.OpForeachTile:
			lowerForeachTile(in, l.get())
		default:
			return false, nil
		}
		return true, nil
	})
}

func lowerForeach(in *ir.Inst, p tuning.Params, l *lowering) {
	g := parallelBefore(in, l)
	from, to := in.ForeachBounds()
	body := in.Body()
	it := body.Args[0].Type
	extents := make([]*ir.Value, len(from))
	for i := range from {
		extents[i] = g.convert(g.sub(to[i], from[i]), ir.Index)
	}
	g.spread(p, extents, func(g *gen, idx []*ir.Value) {
		for i, arg := range body.Args {
			v := g.add(g.convert(idx[i], it), from[i])
			body.ReplaceUses(arg, v)
		}
		moveBody(g, body)
	})
}

// moveBody moves the instructions of body to the end of g's region.
func moveBody(g *gen, body *ir.Region) {
	for _, inst := range body.Insts {
		g.Region.Append(inst)
	}
	body.Insts = nil
}

// lowerForeachTile hands the tiles (first mode fastest) round-robin to the
// subgroups, as the interpreter does: subgroup s runs tiles s, s + n, ...
// for n subgroups, so every lane of a subgroup has the same tile offsets
// and sizes (the reference requires them dynamically uniform).
func lowerForeachTile(in *ir.Inst, l *lowering) {
	g := parallelBefore(in, l)
	from, to := in.ForeachBounds()
	body := in.Body()
	n := len(from)
	tiles := make([]*ir.Value, n)
	total := g.index(1)
	for i := range n {
		extent := g.Arith(ir.Max, g.convert(g.sub(to[i], from[i]), ir.Index), g.index(0))
		tiles[i] = g.div(g.add(extent, g.index(in.Static[i]-1)), g.index(in.Static[i]))
		total = g.mul(total, tiles[i])
	}
	sg := g.convert(g.Builtin(ir.SubgroupID), ir.Index)
	loop, lg := g.forLoop(sg, total, g.convert(g.Builtin(ir.NumSubgroups), ir.Index))
	rest := loop.Body().Args[0]
	for i := range n {
		t := from[i].Type
		shape := lg.IntConst(in.Static[i], t)
		k := lg.rem(rest, tiles[i])
		rest = lg.div(rest, tiles[i])
		off := lg.add(from[i], lg.mul(lg.convert(k, t), shape))
		body.ReplaceUses(body.Args[i], off)
		body.ReplaceUses(body.Args[n+i], lg.Arith(ir.Min, shape, lg.sub(to[i], off)))
	}
	moveBody(lg, body)
}

// InsertBarriers puts a barrier (global and local fences) after every
// collective instruction of f that writes memory, unless it is the last
// instruction of the function: work-items of a lowered collective write
// elements that other work-items may read next.
func InsertBarriers(f *ir.Func) error {
	insertBarriers(f.Body, true)
	return nil
}

func insertBarriers(r *ir.Region, top bool) {
	for i := 0; i < len(r.Insts); i++ {
		in := r.Insts[i]
		switch in.Op {
		case ir.OpFor, ir.OpIf:
			for _, sub := range in.Regions {
				insertBarriers(sub, false)
			}
			continue
		}
		if !writesMemory(in) || top && i == len(r.Insts)-1 {
			continue
		}
		if next := i + 1; next < len(r.Insts) && r.Insts[next].Op == ir.OpBarrier {
			continue
		}
		b := ir.NewBuilder(r)
		b.At = i + 1
		b.Barrier(ir.FenceGlobal | ir.FenceLocal)
		i++
	}
}

// writesMemory reports whether a collective-region instruction may write
// memory that other work-items read.
func writesMemory(in *ir.Inst) bool {
	return in.Op.IsBLAS() || in.Op == ir.OpForeach || in.Op == ir.OpForeachTile || in.Op == ir.OpParallel
}
