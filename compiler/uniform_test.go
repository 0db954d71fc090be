package compiler_test

import (
	"fmt"
	"testing"

	"tltune/compiler"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// PoCL implements subgroups on CPUs with work-group barriers (every
// shuffle, broadcast and reduction is one), so there a subgroup operation
// must be reached by all work-items of the work-group alike, as a barrier
// must everywhere: a loop whose trip count differs between subgroups
// gives wrong sums, and a barrier PoCL cannot place aborts its compiler.
// The lowering therefore keeps every loop and branch around them uniform
// across the work-group; this test checks that on the lowered IR.

// crossLane are the instructions that exchange values between work-items
// on targets with subgroups (mul_add broadcasts B from other lanes).
var crossLane = map[ir.Op]bool{ir.OpBarrier: true, ir.OpSubgroupBroadcast: true, ir.OpSubgroupAdd: true,
	ir.OpSubgroupMax: true, ir.OpSubgroupMin: true, ir.OpCoopMatrixMulAdd: true}

// laneDependent returns the values of f that may differ between the
// work-items of a work-group: everything computed from subgroup_id or
// subgroup_local_id, through arithmetic, loads, loop variables, loop-carried
// values and the results of loops and branches.
func laneDependent(f *ir.Func) map[*ir.Value]bool {
	dep := map[*ir.Value]bool{}
	anyDep := func(vs []*ir.Value) bool {
		for _, v := range vs {
			if dep[v] {
				return true
			}
		}
		return false
	}
	mark := func(vs []*ir.Value) (changed bool) {
		for _, v := range vs {
			if !dep[v] {
				dep[v], changed = true, true
			}
		}
		return changed
	}
	for changed := true; changed; {
		changed = false
		f.Body.Walk(func(in *ir.Inst) bool {
			switch {
			case in.Op == ir.OpBuiltin && (in.Builtin == ir.SubgroupID || in.Builtin == ir.SubgroupLocalID),
				in.Op != ir.OpYield && anyDep(in.Operands):
				changed = mark(in.Results) || changed
				for _, r := range in.Regions {
					changed = mark(r.Args) || changed
				}
			case in.Op == ir.OpYield && anyDep(in.Operands):
				if owner := in.Parent.Parent; owner != nil {
					changed = mark(owner.Results) || changed
					changed = mark(in.Parent.Args) || changed
				}
			}
			return true
		})
	}
	return dep
}

// divergentCrossLane lists the cross-lane instructions of f that sit in a
// loop or branch whose bounds or condition are lane-dependent.
func divergentCrossLane(f *ir.Func) []string {
	dep := laneDependent(f)
	var out []string
	f.Body.Walk(func(in *ir.Inst) bool {
		if !crossLane[in.Op] {
			return true
		}
		for owner := in.Parent.Parent; owner != nil; owner = owner.Parent.Parent {
			var control []*ir.Value
			switch owner.Op {
			case ir.OpFor:
				from, to, step, _ := owner.LoopBounds()
				control = []*ir.Value{from, to, step}
			case ir.OpIf:
				control = owner.Operands[:1]
			}
			for _, v := range control {
				if v != nil && dep[v] {
					out = append(out, fmt.Sprintf("%s inside a lane-dependent %s", in.Mnemonic(), owner.Mnemonic()))
					return true
				}
			}
		}
		return true
	})
	return out
}

// TestCrossLaneOpsInUniformControlFlow: GEMM and gemv.t lowered for the
// intel and nvidia targets with several subgroups per work-group.
func TestCrossLaneOpsInUniformControlFlow(t *testing.T) {
	cases := []struct {
		spec kernels.Spec
		p    tuning.Params
	}{
		{kernels.Spec{Op: kernels.GEMMOp, M: 7, N: 33, K: 3, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0}, tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{64, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 4}, Unroll: 2, BatchPerGroup: 1}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 37, N: 19, K: 21, DType: kernels.F16, Acc: kernels.F32, TransB: true, Alpha: 1, Beta: 1},
			tuning.Params{WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 8}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 1, BatchPerGroup: 2, StageLocal: true}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1, Beta: 0}, tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 11, N: 19, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{32, 3}, Unroll: 2, BatchPerGroup: 2}},
	}
	for _, tgt := range []string{"intel", "nvidia"} {
		for ci, c := range cases {
			r := newRecipe(t, c.spec)
			t.Run(fmt.Sprintf("%s/%s/cfg%d", tgt, r.Name(), ci), func(t *testing.T) {
				p := c.p
				if p.WorkGroupSize[0] != 0 {
					p.SubgroupSize = map[string]int{"intel": 16, "nvidia": 32}[tgt]
				}
				res := compileRecipe(t, r, p, compiler.Options{Target: tgt})
				k := res.Kernels[0]
				if k.WorkGroupSize[0]*k.WorkGroupSize[1] == k.SubgroupSize {
					t.Fatalf("launch %v has one subgroup per work-group: nothing to check", k.Launch)
				}
				for _, msg := range divergentCrossLane(res.Lowered.Funcs[0]) {
					t.Errorf("%v: %s", k.Launch, msg)
				}
			})
		}
	}
}
