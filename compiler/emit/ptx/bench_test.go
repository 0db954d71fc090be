package ptx_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/ptx"
	"tltune/internal/gcpace"
	"tltune/kernels"
)

// BenchmarkEmit is the PTX writer alone on the lowered kernels of sampled
// configurations of the shipped f16 GEMM space (64×64×32, the tuner's
// default problem): what the PTX adds to each evaluation's compile
// (tuner's BenchmarkCompileSpace/nvidia-f16-ptx). One op is one kernel;
// the collector is paced as tltune paces it (gcpace).
func BenchmarkEmit(b *testing.B) {
	defer gcpace.Relax()()
	samples, opts := sampled(b, problem{op: kernels.GEMMOp, dtype: kernels.F16, m: 64, n: 64, k: 32}, 80)
	opts.PTX = false
	var lowered []*compiler.Result
	for _, s := range samples {
		res, err := compiler.Compile(s.src, opts)
		if err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		lowered = append(lowered, res)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		res := lowered[i%len(lowered)]
		if _, err := ptx.Emit(res.Lowered, res.Target, res.Kernels); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
