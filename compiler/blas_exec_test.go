package compiler_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"tltune/compiler/tuning"
	"tltune/kernels"
)

// TestGemmVariantsOnDevice covers element types, α/β specialisations,
// atomic updates and the group layout, each with two configurations.
func TestGemmVariantsOnDevice(t *testing.T) {
	d := openDevice(t)
	base := kernels.Spec{Op: kernels.GEMMOp, M: 13, N: 6, K: 9, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 0}
	variants := map[string]func(s *kernels.Spec){
		"f64": func(s *kernels.Spec) { s.DType, s.Acc = kernels.F64, kernels.F64 },
		"c32": func(s *kernels.Spec) {
			s.DType, s.Acc, s.Alpha, s.Beta = kernels.C32, kernels.C32, complex(0.5, -1), complex(2, 0.25)
		},
		"c64":          func(s *kernels.Spec) { s.DType, s.Acc, s.TransA = kernels.C64, kernels.C64, true },
		"f16":          func(s *kernels.Spec) { s.DType, s.Acc = kernels.F16, kernels.F16 },
		"f16-f32":      func(s *kernels.Spec) { s.DType, s.Acc, s.Beta = kernels.F16, kernels.F32, 1 },
		"bf16-f32":     func(s *kernels.Spec) { s.DType, s.Acc, s.TransB = kernels.BF16, kernels.F32, true },
		"beta0":        func(s *kernels.Spec) { s.Alpha, s.Beta = 2, 0 },
		"beta1":        func(s *kernels.Spec) { s.Alpha, s.Beta = -1, 1 },
		"alpha0":       func(s *kernels.Spec) { s.Alpha, s.Beta = 0, 3 },
		"atomic-beta0": func(s *kernels.Spec) { s.Atomic, s.Beta = true, 0 },
		"atomic-beta1": func(s *kernels.Spec) { s.Atomic, s.Beta, s.DType, s.Acc = true, 1, kernels.F64, kernels.F64 },
		"group":        func(s *kernels.Spec) { s.Layout, s.Beta = kernels.Group, 0.5 },
		"group-c32":    func(s *kernels.Spec) { s.Layout, s.DType, s.Acc = kernels.Group, kernels.C32, kernels.C32 },
	}
	configs := []tuning.Params{{},
		{SubgroupSize: 1, WorkGroupSize: [2]int{3, 2}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{2, 2, 4}, Unroll: 2, BatchPerGroup: 2, StageLocal: true}}
	// Each variant runs with one configuration, alternating, to keep the
	// PoCL build time of the suite down.
	names := slices.Sorted(maps.Keys(variants))
	for i, name := range names {
		s := base
		variants[name](&s)
		ci := i % len(configs)
		t.Run(fmt.Sprintf("%s/cfg%d", name, ci), func(t *testing.T) {
			runRecipe(t, d, recipeCase{spec: s, params: configs[ci], batch: 4})
		})
	}
}

// TestGemvGerOnDevice runs gemv (both transposes) and ger over ragged
// shapes, layouts, α/β and atomic updates with several configurations.
func TestGemvGerOnDevice(t *testing.T) {
	d := openDevice(t)
	configs := []tuning.Params{{},
		{SubgroupSize: 1, WorkGroupSize: [2]int{5, 1}, BatchPerGroup: 3, Unroll: 2},
		{SubgroupSize: 1, WorkGroupSize: [2]int{16, 4}, BatchPerGroup: 1, Unroll: 1}}
	specs := []kernels.Spec{
		{Op: kernels.GEMVOp, M: 20, N: 56, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1, Beta: 0},
		{Op: kernels.GEMVOp, M: 1, N: 1, DType: kernels.F32, Acc: kernels.F64, Alpha: 2, Beta: 1, Layout: kernels.Group},
		{Op: kernels.GEMVOp, M: 7, N: 9, DType: kernels.C32, Acc: kernels.C32, TransA: true, Alpha: complex(1, 1), Beta: 0, Atomic: true},
		{Op: kernels.GEROp, M: 20, N: 5, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEROp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, Alpha: -1, Beta: 1, Atomic: true},
		{Op: kernels.GEROp, M: 1, N: 1, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 0, Layout: kernels.Group},
		{Op: kernels.GEROp, M: 9, N: 4, DType: kernels.C64, Acc: kernels.C64, Alpha: complex(0, 2), Beta: complex(1, -1)},
	}
	for si, s := range specs {
		r := newRecipe(t, s)
		// Two configurations per spec, rotating through the three.
		for _, ci := range []int{si % len(configs), (si + 1) % len(configs)} {
			t.Run(fmt.Sprintf("%s/cfg%d", r.Name(), ci), func(t *testing.T) {
				runRecipe(t, d, recipeCase{spec: s, params: configs[ci], batch: 7})
			})
		}
	}
}
