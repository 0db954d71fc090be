package compiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// The emulated target runs the rows-over-lanes code of the intel and nvidia
// targets (cooperative matrices spread over lanes, B broadcast by shuffles,
// subgroup scans, padding rows) on PoCL, with shuffles through local
// memory. Only the shuffle primitive differs from the GPU targets.

func sg(sgs, tm, tn, cm, cn, ck, u, b int, stage bool) tuning.Params {
	return tuning.Params{SubgroupSize: sgs, WorkGroupSize: [2]int{sgs, 1}, Tile: [2]int{tm, tn},
		Coopmatrix: [3]int{cm, cn, ck}, Unroll: u, BatchPerGroup: b, StageLocal: stage}
}

func TestEmulatedSubgroupsOnDevice(t *testing.T) {
	d := openDevice(t)
	cases := []recipeCase{
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 56, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5}},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 13, N: 9, K: 7, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1, Beta: 1},
			params: sg(4, 6, 4, 6, 4, 2, 2, 2, false)}, // 6 rows over 4 lanes: padding rows
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 17, N: 6, K: 11, DType: kernels.F64, Acc: kernels.F64, TransB: true, Alpha: 2, Beta: 0},
			params: sg(8, 16, 4, 8, 2, 4, 1, 1, true)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 9, N: 9, K: 9, DType: kernels.C32, Acc: kernels.C32, Alpha: complex(0, 1), Beta: 1, Atomic: true},
			params: sg(4, 8, 2, 4, 2, 4, 1, 1, false)},
		{spec: kernels.Spec{Op: kernels.GEMVOp, M: 11, N: 19, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1.5, Beta: 0.5},
			params: tuning.Params{SubgroupSize: 8, WorkGroupSize: [2]int{8, 1}, Unroll: 1, BatchPerGroup: 2}},
		{spec: kernels.Spec{Op: kernels.GEMVOp, M: 11, N: 19, DType: kernels.F64, Acc: kernels.F64, Alpha: 1, Beta: 0, Layout: kernels.Group}},
		{spec: kernels.Spec{Op: kernels.GEROp, M: 7, N: 5, DType: kernels.F32, Acc: kernels.F32, Alpha: -1, Beta: 1}},
		// Rows blocked over lanes, four and two a lane: loaded and stored
		// as vectors (f32, staged and not; c32 and f64 two a lane), and
		// element by element where A is transposed or M ragged.
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 32, N: 12, K: 24, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0.5},
			params: sg(4, 16, 4, 16, 4, 4, 2, 1, true)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 32, N: 12, K: 24, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1, Beta: 1},
			params: sg(4, 16, 4, 16, 4, 8, 1, 2, false)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 30, N: 7, K: 9, DType: kernels.F32, Acc: kernels.F32, Alpha: 2, Beta: 1},
			params: sg(4, 16, 4, 16, 4, 4, 1, 1, true)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 8, K: 8, DType: kernels.C32, Acc: kernels.C32, Alpha: complex(1, 1), Beta: 1},
			params: sg(4, 8, 4, 8, 4, 4, 1, 1, true)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 8, K: 8, DType: kernels.F64, Acc: kernels.F64, Alpha: 1, Beta: 0},
			params: sg(8, 16, 8, 16, 8, 4, 1, 1, false)},
		// Matrix-engine fragment layouts: mma.sync (32 lanes, the
		// heuristic's choice for f16), DPAS at 16 and 8 lanes.
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 37, N: 19, K: 40, DType: kernels.F16, Acc: kernels.F32, TransA: true, Alpha: 1, Beta: 1}},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 21, N: 33, K: 20, DType: kernels.BF16, Acc: kernels.F32, TransB: true, Alpha: 2, Beta: 0},
			params: sg(32, 32, 16, 16, 8, 16, 2, 1, true)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 19, N: 40, K: 33, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 0.5},
			params: sg(16, 16, 32, 8, 16, 16, 1, 2, false)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 12, N: 12, K: 16, DType: kernels.BF16, Acc: kernels.F32, TransA: true, TransB: true, Alpha: 1, Beta: 1, Atomic: true},
			params: sg(8, 8, 16, 8, 8, 16, 1, 1, true)},
		// C through local memory: 6 rows over 4 lanes, chunks of 2 rows dealt
		// to the work-items without a fixed row or column, the last round
		// only half of them have; mma.sync fragments of staged f16 panels,
		// written in two rounds of 16-byte chunks; C ragged.
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 28, N: 7, K: 9, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
			params: tuning.Params{SubgroupSize: 4, WorkGroupSize: [2]int{4, 1}, Tile: [2]int{6, 4}, Coopmatrix: [3]int{6, 2, 2},
				Unroll: 1, BatchPerGroup: 1, LocalEpilogue: true}},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 36, N: 19, K: 40, DType: kernels.F16, Acc: kernels.F32, TransB: true, Alpha: 1.5, Beta: 0.5},
			params: tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 16},
				Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 8, LocalEpilogue: true}},
		// Fragments with twice as many rows as lanes (a DPAS B fragment at
		// 8 lanes, A and C pieces of 32 rows at 16 lanes and of 64 at 32)
		// are no blocked rows: they load and store element by element,
		// never as one vector of a lane's two rows.
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 16, K: 16, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 0},
			params: sg(8, 8, 16, 8, 8, 16, 1, 1, false)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 15, N: 8, K: 16, DType: kernels.BF16, Acc: kernels.F32, Alpha: 1, Beta: 1},
			params: sg(8, 8, 8, 8, 8, 16, 1, 1, false)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 32, N: 16, K: 16, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 1},
			params: sg(16, 32, 16, 32, 16, 16, 1, 1, false)},
		{spec: kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 16, K: 16, DType: kernels.BF16, Acc: kernels.F32, Alpha: 1, Beta: 1},
			params: sg(32, 64, 16, 64, 16, 16, 1, 1, false)},
	}
	// Both layouts of rows over lanes: nvidia's blocked, intel's
	// interleaved.
	for _, tgt := range []string{"emulated", "emulated-interleaved"} {
		for _, c := range cases {
			c.target, c.batch = tgt, 3
			r := newRecipe(t, c.spec)
			t.Run(fmt.Sprintf("%s/%s/%v", tgt, r.Name(), c.params), func(t *testing.T) {
				runRecipe(t, d, c)
			})
		}
	}
}

// TestEmulatedDifferentialOnDevice runs the differential test kernels that
// use subgroup operations and cooperative matrices on the emulated target.
func TestEmulatedDifferentialOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, name := range []string{"exec/coop", "exec/scalar", "exec/foreach", "exec/chain", "exec/sum", "exec/shuffle", "exec/matvec", "exec/released", "exec/tiles", "targets/subgroups"} {
		src, err := os.ReadFile(filepath.Join("testdata", name+".tl"))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			diffKernel(t, d, src, compiler.Options{Target: "emulated"})
		})
	}
}

// TestEmulatedEnginesAreUsed: the f16/bf16 cases above really run the
// fragment layouts (A elements go to the local tile by the engine's rows).
func TestEmulatedEnginesAreUsed(t *testing.T) {
	for _, tc := range []struct {
		p    tuning.Params
		want string
	}{
		{tuning.Params{}, "tl_sa[((tl_lane >> 2) + 8 * ((tl_i >> 1) & 1)) * 16"},
		{sg(16, 16, 32, 8, 16, 16, 1, 2, false), "tl_sa[(tl_i) * 16 + (tl_lane)]"},
		{sg(8, 8, 16, 8, 8, 16, 1, 1, true), "tl_sa[((tl_i >> 1)) * 16 + (2 * tl_lane + (tl_i & 1))]"},
	} {
		r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 19, N: 40, K: 33, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 1})
		res := compileRecipe(t, r, tc.p, compiler.Options{Target: "emulated"})
		if !strings.Contains(res.OpenCL, tc.want) {
			t.Errorf("%v: no %s in the kernel", tc.p, tc.want)
		}
	}
}
