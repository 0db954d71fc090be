package syntax_test

import (
	"testing"

	"tltune/compiler/syntax"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// BenchmarkParseGemm parses the batched GEMM kernels that
// compiler/emit/spirv's BenchmarkGemmSourceToSPIRV compiles: the source
// with the compiler's choice of configuration (no attributes) and one with
// a configuration's attributes (the tuner's form).
func BenchmarkParseGemm(b *testing.B) {
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 64, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1})
	if err != nil {
		b.Fatal(err)
	}
	configured := tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 8, 8},
		Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4, LocalEpilogue: true}
	for _, tc := range []struct {
		name string
		p    tuning.Params
	}{{"default", tuning.Params{}}, {"configured", configured}} {
		text, err := r.Source(tc.p)
		if err != nil {
			b.Fatal(err)
		}
		src := []byte(text)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, errs := syntax.Parse(src); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
