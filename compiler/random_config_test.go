package compiler_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"tltune/compiler/tuning"
	"tltune/kernels"
)

// randomGemmConfig draws a valid configuration for subgroup size sgs:
// coopmatrix sides from 1 to 8, tiles of one or two coopmatrices, up to
// 2×2 subgroups, unroll 1 to 3 (one subgroup, one coopmatrix per tile and
// unroll up to 2 for the emulated target), 1 to 3 batch entries per
// work-group, staging on or off.
func randomGemmConfig(r *rand.Rand, sgs int, oneSubgroup bool) tuning.Params {
	cm, cn, ck := 1+r.IntN(8), 1+r.IntN(8), 1+r.IntN(8)
	gx, gy := 1+r.IntN(2), 1+r.IntN(2)
	tiles, unroll := [2]int{1 + r.IntN(2), 1 + r.IntN(2)}, 1+r.IntN(3)
	if oneSubgroup {
		// Emulated shuffles put two barriers in every broadcast; keep the
		// kernels small enough for PoCL to build quickly.
		gx, gy, tiles, unroll = 1, 1, [2]int{1, 1}, 1+r.IntN(2)
	}
	return tuning.Params{SubgroupSize: sgs, WorkGroupSize: [2]int{gx * sgs, gy},
		Tile: [2]int{cm * tiles[0], cn * tiles[1]}, Coopmatrix: [3]int{cm, cn, ck},
		Unroll: unroll, BatchPerGroup: 1 + r.IntN(3), StageLocal: r.IntN(2) == 0}
}

// TestRandomConfigsOnDevice: seeded random configurations and shapes, each
// compiled, run and checked against the host reference.
func TestRandomConfigsOnDevice(t *testing.T) {
	d := openDevice(t)
	// The emulated profile runs the intel and nvidia layouts where no
	// subgroups exist (PoCL 3.1); a device with subgroups runs its own
	// target's layouts in the other tests (and PoCL 5's kernel compiler
	// aborts on some emulated kernels).
	emulate := targetName(testOptions(d)) == "generic"
	r := rand.New(rand.NewPCG(2026, 11))
	for i := range 10 {
		tgt, sgs := "generic", 1
		if i%2 == 1 {
			tgt, sgs = "emulated", []int{4, 8}[r.IntN(2)]
		}
		if tgt == "emulated" && !emulate {
			continue
		}
		p := randomGemmConfig(r, sgs, tgt == "emulated")
		s := kernels.Spec{Op: kernels.GEMMOp, M: 1 + r.IntN(40), N: 1 + r.IntN(40), K: 1 + r.IntN(40),
			DType: kernels.F32, Acc: kernels.F32, TransA: r.IntN(2) == 0, TransB: r.IntN(2) == 0,
			Alpha: 1.25, Beta: complex(float64(r.IntN(3))/2, 0)}
		t.Run(fmt.Sprintf("%s/%dx%dx%d/%v", tgt, s.M, s.N, s.K, p), func(t *testing.T) {
			runRecipe(t, d, recipeCase{spec: s, params: p, batch: 4, target: tgt})
		})
	}
}
