package compiler_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/tuning"
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
// Where the time goes (-cpuprofile with -test.cpu 1): writing the C is a
// third to a half of every case (33 % of generic, 49 % of nvidia-staged;
// 39 % and 52 % before its lines were written from parts into recycled
// buffers, which made it about a third faster) and grows
// with the C written: 6 KB for generic, 20 KB for intel-u2, 26 KB for
// nvidia-staged, 25 KB from 286 lowered instructions for nvidia-pipeline.
// A line costs its parts (names, operators and brackets of a few bytes
// each), and the back end allocates little but the C itself (13 to 17
// objects a case). The lowering is 13 % (generic) to 24 %
// (nvidia-pipeline: 10 % of the case the copies of the K panels, unrolled
// chunk by chunk, 3 % the local epilogue, which writes its chunks in a
// loop; unrolled, it made 47 KB of C from 690 instructions and took about
// half of the case's time, 497 µs against 243), the verifier after the
// pipeline 6-11 %, and parsing the source, under 1 KB, 8 %
// (nvidia-pipeline) to 21 % (generic; about 10 µs on its own).
// Allocation, the collector's assists included, is a quarter to a third
// of every case and write barriers a further tenth: the instructions the
// lowering builds (224 bytes for an index addition with its result, 288
// before an instruction's rarer attributes moved behind pointers and a
// value's index and ID shrank to 32 bits) and the C itself. It follows
// the bytes allocated more than the objects (assists are paid by the
// byte): carving the lowering's instructions from shared chunks, 520
// allocations fewer for nvidia-pipeline and the same bytes, measured no
// faster. The back end's value tables and expression chunks and the
// verifier's scope tables are recycled from compile to compile (431 → 332
// KB allocated for nvidia-pipeline, 4-12 % faster; 157 KB since the local
// epilogue's loop, 136 KB since the smaller instructions); what is left is
// mostly the lowered IR, which the Result hands out and so cannot be
// recycled.
func BenchmarkCompileGemm(b *testing.B) {
	defer compiler.SetCheckPasses(false)()
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
