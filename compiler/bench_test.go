package compiler_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// BenchmarkCompileGemm measures source → OpenCL C for the batched GEMM
// kernel of kernels/ (f32, 64×64×32, strided batch), with the embedded
// tuning tables; the target is ≤ 500 µs median on the CI machine.
func BenchmarkCompileGemm(b *testing.B) {
	for _, tc := range []struct {
		name   string
		target string
		p      tuning.Params
	}{
		{"generic", "generic", tuning.Params{}},
		{"intel-u2", "intel", tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 2, BatchPerGroup: 1}},
		{"nvidia-staged", "nvidia", tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 8, 8}, Unroll: 2, BatchPerGroup: 1, StageLocal: true}},
	} {
		r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F32, Acc: kernels.F32,
			Layout: kernels.Strided, Alpha: 1, Beta: 1})
		if err != nil {
			b.Fatal(err)
		}
		src, err := r.Source(tc.p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := compiler.Compile([]byte(src), compiler.Options{Target: tc.target}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
