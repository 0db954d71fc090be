package compiler_test

import (
	"fmt"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// gemmShapes are ragged and degenerate shapes (M×N×K).
var gemmShapes = [][3]int{{20, 5, 56}, {53, 23, 56}, {1, 1, 1}, {16, 16, 16}, {7, 33, 3}}

// gemmConfigs are configurations for the generic target (subgroup size 1).
var gemmConfigs = []tuning.Params{
	{}, // the compiler's heuristic
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 4}, Tile: [2]int{8, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 3}, Tile: [2]int{8, 2}, Coopmatrix: [3]int{4, 2, 2}, Unroll: 3, BatchPerGroup: 2},
	{SubgroupSize: 1, WorkGroupSize: [2]int{8, 1}, Tile: [2]int{2, 8}, Coopmatrix: [3]int{2, 4, 8}, Unroll: 2, BatchPerGroup: 3, StageLocal: true},
	// The pipeline: several stages, padded panels, C through local memory.
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{8, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 2, LocalPad: 4, LocalEpilogue: true},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 4}, Tile: [2]int{4, 8}, Coopmatrix: [3]int{4, 4, 2}, Unroll: 2, BatchPerGroup: 2,
		StageLocal: true, Stages: 3},
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 1}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{8, 4, 4}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 4, LocalPad: 1, LocalEpilogue: true},
	// C through local memory without staged panels.
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 2}, Tile: [2]int{8, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1,
		LocalEpilogue: true},
	// Work-groups sharing an entry's blocks of C: unevenly (3 over 21
	// blocks of 53×23), and more of them than an entry has blocks (1×1).
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 2}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 2, Split: 3},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 1}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{4, 4, 2}, Unroll: 2, BatchPerGroup: 2,
		LocalEpilogue: true, Split: 2},
	// Swizzled panels: 128-byte columns of A, whose chunks the swizzle
	// permutes column by column, and 32-byte columns of B sharing a row;
	// 16-byte copies where the shape allows them (16×16×16).
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 2, BatchPerGroup: 1,
		StageLocal: true, Stages: 3, LocalSwizzle: true},
	// C through local memory, the work-items' rounds of chunks: dealt
	// without a fixed row or column (10 work-items, 3 chunks a column),
	// the last round only 5 of them have (45 chunks where C's columns are
	// 16-byte aligned); a fixed row and a column advancing by whole rounds
	// (8 work-items, 4 chunks a column), staged; a single round that half
	// of the work-items have (2 chunks over 4).
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 5}, Tile: [2]int{6, 3}, Coopmatrix: [3]int{3, 3, 2}, Unroll: 1, BatchPerGroup: 1,
		LocalEpilogue: true},
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{4, 8}, Coopmatrix: [3]int{4, 4, 2}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 2, LocalEpilogue: true},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 2}, Tile: [2]int{2, 2}, Coopmatrix: [3]int{2, 1, 1}, Unroll: 1, BatchPerGroup: 2,
		LocalEpilogue: true},
}

// TestGemmOnDevice runs every shape with every configuration; the
// transposes rotate so that each configuration meets all four (a full cross
// product would triple the PoCL build time for little more coverage).
func TestGemmOnDevice(t *testing.T) {
	d := openDevice(t)
	transposes := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	for si, sh := range gemmShapes {
		for ci, p := range gemmConfigs {
			tr := transposes[(si+ci)%len(transposes)]
			s := kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2],
				DType: kernels.F32, Acc: kernels.F32, TransA: tr[0], TransB: tr[1],
				Layout: kernels.Strided, Alpha: 1.5, Beta: 0.5}
			t.Run(fmt.Sprintf("%dx%dx%d/cfg%d/%s", sh[0], sh[1], sh[2], ci, transName(tr)), func(t *testing.T) {
				runRecipe(t, d, recipeCase{spec: s, params: p, batch: 5})
			})
		}
	}
}

// TestLocalEpilogueLoopOnDevice runs the configurations of gemmConfigs
// that write C through local memory with f16 inputs (accumulated in f32):
// their rounds of chunks are a loop whose body finds each chunk from the
// induction variable, while TestGemmOnDevice's f32 kernels have the rounds
// unrolled (lower's unrolledRounds). The chunk distributions are
// gemmConfigs' (a fixed row with whole columns a round, several rounds a
// column, neither, a partial last round); C is ragged (53×23) or its
// columns are 16-byte aligned (16×16), and read with β.
func TestLocalEpilogueLoopOnDevice(t *testing.T) {
	d := openDevice(t)
	for ci, p := range gemmConfigs {
		if !p.LocalEpilogue {
			continue
		}
		for _, sh := range [][3]int{{53, 23, 56}, {16, 16, 16}} {
			s := kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2], DType: kernels.F16, Acc: kernels.F32,
				Layout: kernels.Strided, Alpha: 1.5, Beta: 0.5}
			t.Run(fmt.Sprintf("%dx%dx%d/cfg%d", sh[0], sh[1], sh[2], ci), func(t *testing.T) {
				runRecipe(t, d, recipeCase{spec: s, params: p, batch: 3})
			})
		}
	}
}

// TestConfigsChangeCode: each configuration yields different OpenCL C (the
// execution tests show each one is correct).
func TestConfigsChangeCode(t *testing.T) {
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for ci, p := range gemmConfigs {
		res := compileRecipe(t, r, p, compiler.Options{Target: "generic"})
		if prev, dup := seen[res.OpenCL]; dup {
			t.Errorf("configurations %d and %d produce the same OpenCL C", prev, ci)
		}
		seen[res.OpenCL] = ci
	}
}

func transName(tr [2]bool) string {
	s := ""
	for _, x := range tr {
		if x {
			s += "t"
		} else {
			s += "n"
		}
	}
	return s
}
