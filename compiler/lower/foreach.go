package lower

import (
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// Foreach replaces every foreach of f by a parallel region in which the
// work-items share the iteration box (see spread). The body moves into the
// loop unchanged, its loop variables replaced by the decoded indices.
func Foreach(f *ir.Func, p tuning.Params) error {
	return rewriteCollective(f.Body, func(in *ir.Inst) (bool, error) {
		if in.Op != ir.OpForeach {
			return false, nil
		}
		lowerForeach(in, p)
		return true, nil
	})
}

func lowerForeach(in *ir.Inst, p tuning.Params) {
	g := parallelBefore(in)
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
		for _, inst := range body.Insts {
			g.Region.Append(inst)
		}
	})
	body.Insts = nil
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
	return in.Op.IsBLAS() || in.Op == ir.OpForeach || in.Op == ir.OpParallel
}
