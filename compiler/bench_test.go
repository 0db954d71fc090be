package compiler_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
	"tltune/internal/gcpace"
	"tltune/kernels"
)

// BenchmarkCompileGemm measures source → OpenCL C for batched GEMM kernels
// of kernels/ (64×64×32, strided batch), with the embedded tuning tables;
// the target is ≤ 100 µs per kernel (issue 16). nvidia-pipeline is a point
// of the nvidia search space with every knob of the GEMM engine on: f16
// panels staged in local memory through a 3-stage cp.async pipeline,
// padded, and C written through local memory. (Its three stages over the
// one K step of this shape are more than the pruner lets a tuning run
// compile; the compiler takes them all the same, and a deeper K only
// lengthens the loop, not the code.) BenchmarkCompileSpace (tuner/) times
// the configurations a tuning run compiles instead.
//
// The collector is paced as tltune paces it (gcpace): at Go's default
// pace it was a third of a compile's instructions, since a compile's
// lowered IR and C are garbage by the next.
//
// Where the time goes (cachegrind, the collector off, nvidia-f16 sources
// of BenchmarkCompileSpace, about 740 thousand instructions a compile):
// writing the C is the largest part and grows with the C written (6 KB
// for generic, 20 KB for intel-u2, 26 KB for nvidia-staged, 25 KB for
// nvidia-pipeline); a line costs its parts, names, operators and brackets
// of a few bytes each, appended into recycled buffers. Then the lowering
// (about 105 thousand, its instructions carved from an ir.Arena's chunks:
// 67 allocations where there were 304, for a fifth more bytes), the
// verifier on the source and on the lowered program (75 thousand
// together), parsing (67 thousand, under 1 KB of source) and choosing
// the configuration (18 thousand). Unrolling the local epilogue had made
// 47 KB of C from 690 instructions for nvidia-pipeline and doubled its
// time: it writes its chunks in a loop. No one part is left to halve.
func BenchmarkCompileGemm(b *testing.B) {
	defer compiler.SetCheckPasses(false)()
	defer gcpace.Relax()()
	f32 := kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1}
	f16 := f32
	f16.DType = kernels.F16
	for _, tc := range []struct {
		name   string
		target string
		spec   kernels.Spec
		p      tuning.Params
	}{
		{"generic", "generic", f32, tuning.Params{}},
		{"intel-u2", "intel", f32, tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 2, BatchPerGroup: 1}},
		{"nvidia-staged", "nvidia", f32, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 8, 8}, Unroll: 2, BatchPerGroup: 1, StageLocal: true}},
		{"nvidia-pipeline", "nvidia", f16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{64, 64}, Coopmatrix: [3]int{32, 32, 32},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 8, LocalEpilogue: true}},
	} {
		r, err := kernels.New(tc.spec)
		if err != nil {
			b.Fatal(err)
		}
		src, err := r.Source(tc.p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compiler.Compile([]byte(src), compiler.Options{Target: tc.target}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
