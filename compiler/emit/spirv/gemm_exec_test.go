package spirv_test

import (
	"fmt"
	"testing"

	"tltune/compiler/tuning"
	"tltune/kernels"
)

// generic configurations (subgroup size 1) covering the lowering's code
// paths: heuristic, small tiles, ragged unrolled depth with batching, local
// staging, splits, swizzled panels, C through local memory.
var gemmConfigs = []tuning.Params{
	{},
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 4}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 3}, Tile: [2]int{8, 2}, Coopmatrix: [3]int{4, 2, 2}, Unroll: 3, BatchPerGroup: 2},
	{SubgroupSize: 1, WorkGroupSize: [2]int{8, 1}, Tile: [2]int{2, 8}, Coopmatrix: [3]int{2, 4, 8}, Unroll: 2, BatchPerGroup: 3, StageLocal: true},
	// Work-groups sharing an entry's blocks of C, numbered so that an
	// entry's parts are consecutive (splitGroups): unevenly, and with
	// several entries per work-group.
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 2}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 2, Split: 3},
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 1}, Tile: [2]int{4, 4}, Coopmatrix: [3]int{4, 4, 2}, Unroll: 2, BatchPerGroup: 2, Split: 2},
	// Panels marked for the swizzle, which this back end leaves unswizzled
	// (ir.AttrSwizzle is a physical layout only).
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{4, 4, 4}, Unroll: 2, BatchPerGroup: 1,
		StageLocal: true, Stages: 3, LocalSwizzle: true},
	// C through local memory, the work-items' rounds of chunks: a last
	// round that one of 2 work-items has (3 chunks), chunks dealt without
	// a fixed row or column; staged, 8 work-items on 4 chunks a column, a
	// fixed row and columns advancing by whole rounds.
	{SubgroupSize: 1, WorkGroupSize: [2]int{2, 1}, Tile: [2]int{6, 2}, Coopmatrix: [3]int{3, 1, 2}, Unroll: 1, BatchPerGroup: 1,
		LocalEpilogue: true},
	{SubgroupSize: 1, WorkGroupSize: [2]int{4, 2}, Tile: [2]int{4, 8}, Coopmatrix: [3]int{4, 4, 2}, Unroll: 1, BatchPerGroup: 1,
		StageLocal: true, Stages: 2, LocalEpilogue: true},
}

func TestGemmOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, sh := range [][3]int{{20, 5, 56}, {1, 1, 1}, {7, 33, 3}} {
		for ci, p := range gemmConfigs {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				s := kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2],
					DType: kernels.F32, Acc: kernels.F32, TransA: tr[0], TransB: tr[1],
					Layout: kernels.Strided, Alpha: 1.5, Beta: 0.5}
				t.Run(fmt.Sprintf("%dx%dx%d/cfg%d/%v", sh[0], sh[1], sh[2], ci, tr), func(t *testing.T) {
					runRecipe(t, d, s, p, 5)
				})
			}
		}
	}
}
