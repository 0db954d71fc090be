// Package lower rewrites collective tensor-language code into SPMD code
// over subgroups, parameterised by a recipe configuration (tuning.Params):
//
//   - InsertBarriers puts a barrier after each collective instruction whose
//     writes later instructions of the work-group may read;
//   - Collectives replaces gemm, gemv, ger, axpby, sum, hadamard_product and
//     cumsum by parallel regions (GEMM through cooperative matrices, gemv
//     and ger through vector accesses to their matrix spread over the lanes,
//     the others through per-work-item loops);
//   - Foreach replaces foreach by parallel regions with strided loops;
//   - Choose picks the configuration: each parameter from the function's
//     attributes (subgroup_size, work_group_size and the "tltune.params"
//     dictionary kernels/ writes), else the tuning table, else a
//     heuristic, and says which in Choice.Explain; Validate rejects
//     configurations a target cannot run before anything is generated.
//
// The result is still tensor language (it prints, verifies and interprets),
// so every pass can be checked against the reference interpreter.
package lower

import (
	"fmt"

	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// Collectives lowers every collective linear-algebra instruction of f.
func Collectives(f *ir.Func, p tuning.Params) error {
	var l lazyLowering
	return rewriteCollective(f.Body, func(in *ir.Inst) (bool, error) {
		if !in.Op.IsBLAS() {
			return false, nil
		}
		return true, lowerBLAS(f, in, p, l.get())
	})
}

// lazyLowering is the lowering of a function, made when its first
// instruction is lowered.
type lazyLowering struct{ l *lowering }

func (z *lazyLowering) get() *lowering {
	if z.l == nil {
		z.l = new(lowering)
	}
	return z.l
}

// rewriteCollective calls fn on every instruction of collective code in r
// (r itself and the for/if bodies inside it, not SPMD regions). When fn
// reports that it replaced the instruction, the walk continues after it.
func rewriteCollective(r *ir.Region, fn func(in *ir.Inst) (bool, error)) error {
	for i := 0; i < len(r.Insts); i++ {
		in := r.Insts[i]
		switch in.Op {
		case ir.OpFor, ir.OpIf:
			for _, sub := range in.Regions {
				if err := rewriteCollective(sub, fn); err != nil {
					return err
				}
			}
			continue
		case ir.OpParallel:
			continue
		}
		replaced, err := fn(in)
		if err != nil {
			return err
		}
		if replaced {
			i = r.IndexOf(in) // the replacement sits before in; skip both
			r.Remove(in)
			i--
		}
	}
	return nil
}

// parallelBefore inserts an empty parallel region before in and returns a
// generator for its body, both building in l.
func parallelBefore(in *ir.Inst, l *lowering) *gen {
	r := in.Parent
	b := ir.Builder{Region: r, At: r.IndexOf(in), Pos: in.Pos, Arena: &l.arena}
	par := b.Parallel()
	g := l.newGen(par.Body())
	g.Pos = in.Pos
	return g
}

func lowerBLAS(f *ir.Func, in *ir.Inst, p tuning.Params, l *lowering) error {
	g := parallelBefore(in, l)
	switch in.Op {
	case ir.OpGemm:
		return lowerGemm(g, f, in, p)
	case ir.OpGemv:
		lowerGemv(g, f, in, p)
	case ir.OpGer:
		lowerGer(g, f, in, p)
	case ir.OpAxpby:
		lowerAxpby(g, in, p)
	case ir.OpHadamardProduct:
		lowerHadamard(g, in, p)
	case ir.OpSum:
		lowerSum(g, in, p)
	case ir.OpCumsum:
		lowerCumsum(g, in, p)
	default:
		return fmt.Errorf("lower: no lowering for %s", in.Mnemonic())
	}
	return nil
}
