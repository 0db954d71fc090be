package compiler_test

import (
	"fmt"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// pipelineConfigs are configurations of the GEMM engine's knobs (stages,
// padding or swizzle, C through local memory) for the targets of real devices, where
// subgroups have several lanes and the nvidia target loads packed
// fragments with ldmatrix and copies with cp.async. The generic target's
// are in gemmConfigs.
var pipelineConfigs = map[string][]struct {
	dtype kernels.DType
	p     tuning.Params
}{
	"nvidia": {
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 8, 16},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 8, LocalEpilogue: true}},
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{64, 32}, Coopmatrix: [3]int{16, 16, 16},
			Unroll: 1, BatchPerGroup: 2, StageLocal: true, Stages: 3, LocalEpilogue: true}},
		{kernels.BF16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{128, 1}, Tile: [2]int{16, 32}, Coopmatrix: [3]int{16, 16, 16},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 4, LocalPad: 8}},
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{32, 16, 16},
			Unroll: 1, BatchPerGroup: 1, LocalEpilogue: true}},
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 8, 8},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4, LocalEpilogue: true}},
		// Work-groups sharing an entry's blocks of C (staged and not; more
		// work-groups than blocks at 53×23 and 20×5).
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 16},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 8, Split: 3}},
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 8, 8},
			Unroll: 1, BatchPerGroup: 2, LocalEpilogue: true, Split: 2}},
		// Swizzled panels: ldmatrix (.trans for A) and cp.async through the
		// permuted chunks, columns of A of 128 and 256 bytes, of B of 32 and
		// 64; and f32 fragments read element by element and B replicated.
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 8, 16},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalSwizzle: true, LocalEpilogue: true}},
		{kernels.BF16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{128, 1}, Tile: [2]int{32, 64}, Coopmatrix: [3]int{32, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalSwizzle: true, Split: 2}},
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 4}, Tile: [2]int{64, 16}, Coopmatrix: [3]int{32, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalSwizzle: true}},
		// f32 rows blocked over the lanes, four and two a lane (vectors
		// where M is a multiple of the tile: 64×64×32 at 64 rows).
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{128, 16}, Coopmatrix: [3]int{128, 16, 8},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4}},
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{64, 16}, Coopmatrix: [3]int{64, 8, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 4, LocalEpilogue: true}},
		{kernels.F32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{64, 8}, Coopmatrix: [3]int{64, 8, 16},
			Unroll: 1, BatchPerGroup: 2}},
		// Half-warps: two subgroups of one warp on different tiles (wx 32),
		// or in two rows of the work-group (wx 16); staged, swizzled and
		// not, C through local memory.
		{kernels.F32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 16},
			Unroll: 1, BatchPerGroup: 2, StageLocal: true, Stages: 2, LocalSwizzle: true}},
		{kernels.F32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 8},
			Unroll: 2, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 4, LocalEpilogue: true}},
		{kernels.F64, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 8},
			Unroll: 1, BatchPerGroup: 1, Split: 2}},
	},
	"intel": {
		{kernels.F32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 8, 8},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4, LocalEpilogue: true}},
		{kernels.F32, tuning.Params{SubgroupSize: 8, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{8, 8, 4},
			Unroll: 2, BatchPerGroup: 2, StageLocal: true, Stages: 3}},
		{kernels.F32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 8},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, Split: 3}},
		{kernels.F32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 8, 8},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalSwizzle: true}},
	},
}

// TestPipelineOnDevice runs the engine's knobs on the device's own target
// (TLTUNE_TEST_TARGET=device on a GPU machine: nvidia on NVIDIA, intel on
// PoCL 5) with ragged shapes and every transpose, against the host
// reference. On the generic target (CI) TestGemmOnDevice covers them.
func TestPipelineOnDevice(t *testing.T) {
	d := openDevice(t)
	tgt := targetName(testOptions(d))
	cfgs, ok := pipelineConfigs[tgt]
	if !ok {
		t.Skipf("target %s: the engine's knobs run in TestGemmOnDevice", tgt)
	}
	shapes := [][3]int{{53, 23, 56}, {64, 64, 32}, {20, 5, 56}, {96, 80, 40}}
	transposes := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	for si, sh := range shapes {
		for ci, c := range cfgs {
			tr := transposes[(si+ci)%len(transposes)]
			acc := c.dtype
			if acc == kernels.F16 || acc == kernels.BF16 {
				acc = kernels.F32
			}
			s := kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2], DType: c.dtype, Acc: acc,
				TransA: tr[0], TransB: tr[1], Layout: kernels.Strided, Alpha: 1.5, Beta: 0.5}
			t.Run(fmt.Sprintf("%s/%dx%dx%d/%s/%v", c.dtype, sh[0], sh[1], sh[2], transName(tr), c.p), func(t *testing.T) {
				runRecipe(t, d, recipeCase{spec: s, params: c.p, batch: 5})
			})
		}
	}
}

// TestLocalEpilogueRounds: the work-items write the chunks of a staged
// slice of C in a loop where the inputs are f16, so the kernel holds one
// vector store to C a slice (two for a 64×64 f32 tile of 32×32 matrices),
// and unrolled where they are f32 (lower's unrolledRounds: the form the
// H100 ran faster), one store a chunk (16 a work-item and slice here).
func TestLocalEpilogueRounds(t *testing.T) {
	p := tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{64, 64}, Coopmatrix: [3]int{32, 32, 32},
		Unroll: 1, BatchPerGroup: 1, LocalEpilogue: true}
	for _, c := range []struct {
		dtype  kernels.DType
		stores int
	}{{kernels.F16, 2}, {kernels.F32, 32}} {
		r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: c.dtype, Acc: kernels.F32,
			Layout: kernels.Strided, Alpha: 1, Beta: 1})
		res := compileRecipe(t, r, p, compiler.Options{Target: "nvidia"})
		if n := strings.Count(res.OpenCL, "*(global float4*)(C_"); n != c.stores {
			t.Errorf("%v: %d vector stores to C, want %d:\n%s", c.dtype, n, c.stores, res.OpenCL)
		}
	}
}
