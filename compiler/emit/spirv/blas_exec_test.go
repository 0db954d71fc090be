package spirv_test

import (
	"fmt"
	"testing"

	"tltune/compiler/tuning"
	"tltune/kernels"
)

// TestGemmTypesOnDevice covers every element type (f16 and bf16 in memory
// only, complex as 2-vectors), α/β special cases, atomic updates (compare-
// exchange loops on PoCL) and the group layout.
func TestGemmTypesOnDevice(t *testing.T) {
	d := openDevice(t)
	gemm := func(dt, acc kernels.DType, alpha, beta complex128) kernels.Spec {
		return kernels.Spec{Op: kernels.GEMMOp, M: 13, N: 6, K: 9, DType: dt, Acc: acc, Layout: kernels.Strided, Alpha: alpha, Beta: beta}
	}
	cases := map[string]kernels.Spec{
		"f64":       gemm(kernels.F64, kernels.F64, 1, 0.5),
		"c32":       gemm(kernels.C32, kernels.C32, complex(0.5, -1), complex(2, 0.25)),
		"c64":       gemm(kernels.C64, kernels.C64, complex(-1, 0.5), 1),
		"f16":       gemm(kernels.F16, kernels.F16, 1, 0.5),
		"f16-f32":   gemm(kernels.F16, kernels.F32, 2, 1),
		"bf16-f32":  gemm(kernels.BF16, kernels.F32, 1, 0),
		"alpha0":    gemm(kernels.F32, kernels.F32, 0, 3),
		"atomic":    gemm(kernels.F32, kernels.F32, 1, 1),
		"atomicf64": gemm(kernels.F64, kernels.F64, 2, 0),
		"atomicc32": gemm(kernels.C32, kernels.C32, 1, 1),
		"group":     gemm(kernels.F32, kernels.F32, 1.5, 0.5),
		"groupc64":  gemm(kernels.C64, kernels.C64, 1, 0),
	}
	for _, name := range []string{"atomic", "atomicf64", "atomicc32"} {
		s := cases[name]
		s.Atomic = true
		cases[name] = s
	}
	for _, name := range []string{"group", "groupc64"} {
		s := cases[name]
		s.Layout = kernels.Group
		cases[name] = s
	}
	staged := tuning.Params{SubgroupSize: 1, WorkGroupSize: [2]int{3, 2}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{2, 2, 4}, Unroll: 2, BatchPerGroup: 2, StageLocal: true}
	for name, s := range cases {
		for ci, p := range []tuning.Params{{}, staged} {
			if name == "f16" && ci == 0 {
				// The heuristic's tiles make an f16 kernel that PoCL takes
				// about a minute to compile (the OpenCL C one half that);
				// the staged configuration covers f16 accumulation.
				continue
			}
			t.Run(fmt.Sprintf("%s/cfg%d", name, ci), func(t *testing.T) { runRecipe(t, d, s, p, 4) })
		}
	}
}

// TestGemvGerOnDevice runs gemv (both transposes) and ger over ragged
// shapes, layouts, types and atomic updates.
func TestGemvGerOnDevice(t *testing.T) {
	d := openDevice(t)
	specs := []kernels.Spec{
		{Op: kernels.GEMVOp, M: 20, N: 56, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1, Beta: 0},
		{Op: kernels.GEMVOp, M: 1, N: 1, DType: kernels.F32, Acc: kernels.F64, Alpha: 2, Beta: 1, Layout: kernels.Group},
		{Op: kernels.GEMVOp, M: 7, N: 9, DType: kernels.C32, Acc: kernels.C32, TransA: true, Alpha: complex(1, 1), Atomic: true},
		{Op: kernels.GEMVOp, M: 17, N: 4, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 1},
		{Op: kernels.GEROp, M: 20, N: 5, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEROp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, Alpha: -1, Beta: 1, Atomic: true},
		{Op: kernels.GEROp, M: 3, N: 8, DType: kernels.C64, Acc: kernels.C64, Alpha: complex(0, 1), Beta: 0, Layout: kernels.Group},
		{Op: kernels.GEROp, M: 9, N: 9, DType: kernels.BF16, Acc: kernels.F32, Alpha: 1, Beta: 0.5},
	}
	configs := []tuning.Params{{},
		{SubgroupSize: 1, WorkGroupSize: [2]int{5, 1}, BatchPerGroup: 3, Unroll: 2},
		{SubgroupSize: 1, WorkGroupSize: [2]int{16, 4}, BatchPerGroup: 1, Unroll: 1},
		{SubgroupSize: 1, WorkGroupSize: [2]int{4, 1}, BatchPerGroup: 1, Unroll: 1, Split: 3}}
	for si, s := range specs {
		if s.Layout != kernels.Group {
			s.Layout = kernels.Strided
		}
		for ci, p := range configs {
			t.Run(fmt.Sprintf("%d-%v/cfg%d", si, s.Op, ci), func(t *testing.T) { runRecipe(t, d, s, p, 4) })
		}
	}
}
