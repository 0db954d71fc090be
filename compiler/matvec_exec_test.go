package compiler_test

import (
	"fmt"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// The gemv and ger lowering's knobs — vector width, tile, batch entries per
// work-group, gemv's split of an entry over work-groups — on recipes: ragged shapes, both transposes, every element
// family, both layouts, β specialisations and atomic updates. On the
// generic target (one lane per subgroup) the tile is per work-item; the
// emulated target splits subgroups of 4 and 8 lanes between rows and
// columns and adds partial sums with local-memory shuffles. Shapes whose
// rows the vector does not divide run scalar, as the alignment proof
// demands.

func mv(sgs, vw, tm, tn, wx, wy, b int) tuning.Params {
	return tuning.Params{SubgroupSize: sgs, WorkGroupSize: [2]int{wx, wy}, Tile: [2]int{tm, tn},
		VectorWidth: vw, Unroll: 1, BatchPerGroup: b}
}

// splitOver is p with each batch entry shared by s work-groups.
func splitOver(s int, p tuning.Params) tuning.Params { p.Split = s; return p }

// unrolled is p with u trips of gemv's reduction an iteration.
func unrolled(u int, p tuning.Params) tuning.Params { p.Unroll = u; return p }

func gemvSpec(m, n int, dt, acc kernels.DType, trans bool, alpha, beta complex128) kernels.Spec {
	return kernels.Spec{Op: kernels.GEMVOp, M: m, N: n, DType: dt, Acc: acc, TransA: trans, Alpha: alpha, Beta: beta}
}

func gerSpec(m, n int, dt, acc kernels.DType, alpha, beta complex128) kernels.Spec {
	return kernels.Spec{Op: kernels.GEROp, M: m, N: n, DType: dt, Acc: acc, Alpha: alpha, Beta: beta}
}

func TestMatvecKnobsOnDevice(t *testing.T) {
	d := openDevice(t)
	group := func(s kernels.Spec) kernels.Spec { s.Layout = kernels.Group; return s }
	atomic := func(s kernels.Spec) kernels.Spec { s.Atomic = true; return s }
	cases := []recipeCase{
		// two vectors per work-item, a column tail (40 = 13·3 + 1)
		{spec: gemvSpec(64, 40, kernels.F32, kernels.F32, false, 1.5, 0.5), params: mv(1, 4, 8, 3, 4, 1, 2)},
		// 128 bits of f16
		{spec: gemvSpec(64, 24, kernels.F16, kernels.F32, false, 1, 0), params: mv(1, 8, 16, 2, 2, 1, 1)},
		// 37 rows: no vector is provable, scalar with checked rows
		{spec: group(gemvSpec(37, 9, kernels.BF16, kernels.F32, false, -2, 1)), params: mv(1, 8, 8, 2, 3, 1, 1)},
		// gemv.t: vectors along the reduction, a row tail (30 = 7·4 + 2 rows of A... as columns)
		{spec: gemvSpec(30, 64, kernels.F32, kernels.F32, true, 0.5, 1), params: mv(1, 4, 16, 3, 4, 1, 3)},
		{spec: group(gemvSpec(7, 20, kernels.F64, kernels.F64, true, 1, 0)), params: mv(1, 2, 4, 2, 2, 1, 1)},
		{spec: gemvSpec(16, 12, kernels.C32, kernels.C32, true, complex(1, -1), complex(0, 0.5)), params: mv(1, 2, 8, 1, 1, 1, 2)},
		{spec: atomic(gemvSpec(24, 8, kernels.F32, kernels.F32, false, 1, 1)), params: mv(1, 4, 8, 2, 2, 1, 1)},
		// split: 8 row tiles in 2 rounds of 4 subgroups over 2 work-groups;
		// 3 work-groups (one idle) with 2 entries each; gemv.t's 13 column
		// tiles in 7 rounds of 2 over 3; an atomic update over 2
		{spec: gemvSpec(64, 40, kernels.F32, kernels.F32, false, 1.5, 0.5), params: splitOver(2, mv(1, 4, 8, 3, 4, 1, 1))},
		{spec: group(gemvSpec(61, 9, kernels.F16, kernels.F32, false, 1, 1)), params: splitOver(3, mv(1, 1, 8, 2, 4, 1, 2))},
		{spec: gemvSpec(30, 64, kernels.F32, kernels.F32, true, 0.5, 1), params: splitOver(3, mv(1, 4, 16, 5, 2, 1, 1))},
		{spec: atomic(gemvSpec(24, 8, kernels.F32, kernels.F32, true, 1, 1)), params: splitOver(2, mv(1, 4, 8, 2, 2, 1, 1))},
		// unrolled reductions: 40 columns in 3 iterations of 4 trips of 3,
		// a single trip and a checked one; runs of 8 halves of x; gemv.t
		// over 30 rows in an iteration of 2 trips of 8, then 7 and a tail
		{spec: gemvSpec(64, 40, kernels.F32, kernels.F32, false, 1.5, 0.5), params: unrolled(4, mv(1, 4, 8, 3, 4, 1, 2))},
		{spec: gemvSpec(64, 64, kernels.F16, kernels.F32, false, 1, 0), params: unrolled(2, mv(1, 8, 16, 8, 2, 1, 1))},
		{spec: gemvSpec(30, 64, kernels.F32, kernels.F32, true, 0.5, 1), params: unrolled(2, mv(1, 4, 8, 3, 4, 1, 3))},
		// ger: vectors of C with vectors (or elements) of a
		{spec: group(gerSpec(64, 10, kernels.F32, kernels.F32, 1, 1)), params: mv(1, 4, 16, 3, 2, 2, 1)},
		{spec: gerSpec(32, 7, kernels.F16, kernels.F32, 2, 0), params: mv(1, 4, 32, 2, 1, 4, 2)},
		{spec: gerSpec(6, 5, kernels.C64, kernels.C64, complex(0, 1), complex(1, 1)), params: mv(1, 1, 2, 2, 2, 1, 1)},
		{spec: atomic(gerSpec(12, 9, kernels.F64, kernels.F64, 1, 1)), params: mv(1, 2, 4, 4, 1, 1, 1)},
		// ger split: 10 columns in rounds of 2·3 over 2 work-groups; 7
		// columns in rounds of 2 over 3 (the last round short); an
		// atomic update over 2, one of them idle
		{spec: group(gerSpec(64, 10, kernels.F32, kernels.F32, 1, 1)), params: splitOver(2, mv(1, 4, 16, 3, 2, 2, 1))},
		{spec: gerSpec(32, 7, kernels.F16, kernels.F32, 2, 0), params: splitOver(3, mv(1, 4, 32, 2, 1, 1, 2))},
		{spec: atomic(gerSpec(12, 3, kernels.F64, kernels.F64, 1, 1)), params: splitOver(2, mv(1, 2, 4, 4, 1, 1, 1))},
	}
	for _, c := range cases {
		c.batch = 5
		t.Run(fmt.Sprintf("%s/%v", newRecipe(t, c.spec).Name(), c.params), func(t *testing.T) {
			runRecipe(t, d, c)
		})
	}
}

func TestMatvecLanesOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, c := range []recipeCase{
		// 4 lanes down, 2 across: a butterfly over the column lanes; each
		// lane's 2 columns one run of x, 2 trips an iteration
		{spec: gemvSpec(48, 20, kernels.F32, kernels.F32, false, 1.5, 0.5), params: mv(8, 4, 16, 4, 8, 1, 1)},
		{spec: gemvSpec(48, 21, kernels.F32, kernels.F32, false, 1, 1), params: unrolled(2, mv(8, 4, 16, 4, 8, 1, 1))},
		// gemv.t: 8 lanes down one column, or 2 down and 4 across
		{spec: gemvSpec(24, 32, kernels.F16, kernels.F32, true, 1, 1), params: mv(8, 4, 32, 1, 8, 1, 2)},
		{spec: gemvSpec(9, 40, kernels.F32, kernels.F64, true, 2, 0), params: mv(8, 4, 8, 4, 8, 1, 1)},
		{spec: gemvSpec(48, 20, kernels.F32, kernels.F32, false, 1, 0), params: splitOver(3, mv(8, 4, 16, 4, 8, 1, 2))},
		// ger: 2 lanes down, 2 across, columns past the end
		{spec: gerSpec(20, 9, kernels.F32, kernels.F32, -1, 1), params: mv(4, 4, 8, 4, 4, 1, 1)},
	} {
		c.target, c.batch = "emulated", 3
		t.Run(fmt.Sprintf("%s/%v", newRecipe(t, c.spec).Name(), c.params), func(t *testing.T) {
			runRecipe(t, d, c)
		})
	}
}

// TestMatvecUsesVectors: where the shape allows, the matrix moves in 128-bit
// vectors (the lowering does not fall back to scalars silently), and where
// it does not, the code is scalar.
func TestMatvecUsesVectors(t *testing.T) {
	for _, c := range []struct {
		spec   kernels.Spec
		target string
		want   []string // in the OpenCL C
		absent string
	}{
		{gerSpec(64, 64, kernels.F32, kernels.F32, 1, 0), "nvidia", []string{"*(global float4*)(C_"}, ""},
		{gemvSpec(64, 64, kernels.F16, kernels.F32, false, 1, 0), "nvidia", []string{"*(global const ushort8*)(A_", "shfl.sync"}, ""},
		{gemvSpec(64, 64, kernels.BF16, kernels.F32, true, 1, 0), "intel", []string{"*(global const ushort8*)(A_", "intel_sub_group_shuffle"}, ""},
		{gemvSpec(256, 256, kernels.F64, kernels.F64, false, 1, 1), "nvidia", []string{"*(global const double2*)(A_"}, ""},
		{gerSpec(64, 64, kernels.C32, kernels.C32, 1, 1), "generic", []string{"*(global float4*)(C_"}, ""},
		{gerSpec(63, 64, kernels.F32, kernels.F32, 1, 0), "nvidia", nil, "float4*)(C_"},
	} {
		r := newRecipe(t, c.spec)
		res := compileRecipe(t, r, tuning.Params{}, compiler.Options{Target: c.target})
		for _, w := range c.want {
			if !strings.Contains(res.OpenCL, w) {
				t.Errorf("%s on %s: no %q in\n%s", r.Name(), c.target, w, res.OpenCL)
			}
		}
		if c.absent != "" && strings.Contains(res.OpenCL, c.absent) {
			t.Errorf("%s on %s: %q although the rows are ragged", r.Name(), c.target, c.absent)
		}
	}
}
