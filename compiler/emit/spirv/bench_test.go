package spirv_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/internal/gcpace"
	"tltune/kernels"
)

// gemmSource is the batched GEMM kernel the speed target is about: 64×64×64
// f32, in configuration p (the zero value: the compiler's choice).
func gemmSource(b *testing.B, p tuning.Params) string {
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 64, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1})
	if err != nil {
		b.Fatal(err)
	}
	src, err := r.Source(p)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// sourceToSPIRV is the whole path: parse, verify, pass pipeline, SPIR-V
// (without OpenCL C, as for a device that builds SPIR-V).
func sourceToSPIRV(src []byte, target string) (*spirv.Output, error) {
	res, err := compiler.Compile(src, compiler.Options{Target: target, SPIRVOnly: true})
	if err != nil {
		return nil, err
	}
	return res.SPIRV()
}

func launches(res *compiler.Result) map[*ir.Func]opencl.Launch {
	l := map[*ir.Func]opencl.Launch{}
	for i, f := range res.Lowered.Funcs {
		l[f] = res.Kernels[i].Launch
	}
	return l
}

// intelPipeline is a point of the intel search space with the GEMM
// engine's knobs on: panels staged in local memory, two stages, padded,
// C written through local memory.
var intelPipeline = tuning.Params{SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 8, 8},
	Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4, LocalEpilogue: true}

// gemmCases are the benchmarks' kernels: the GEMM in the compiler's
// configuration on both targets, and in intelPipeline's.
var gemmCases = []struct {
	name, target string
	p            tuning.Params
}{{"generic", "generic", tuning.Params{}}, {"intel", "intel", tuning.Params{}}, {"intel-pipeline", "intel", intelPipeline}}

// BenchmarkGemmSourceToSPIRV is source text to SPIR-V binary (target:
// ≤ 100 µs per kernel, issue 16), the collector paced as tltune paces it
// (gcpace). The generic target's module unrolls every coopmatrix element
// (48.8 KB for this kernel): writing it is two thirds of that case.
func BenchmarkGemmSourceToSPIRV(b *testing.B) {
	defer gcpace.Relax()()
	for _, tc := range gemmCases {
		src := []byte(gemmSource(b, tc.p))
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sourceToSPIRV(src, tc.target); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEmitGemm is the SPIR-V emitter alone on the lowered GEMMs of
// BenchmarkGemmSourceToSPIRV.
func BenchmarkEmitGemm(b *testing.B) {
	for _, tc := range gemmCases {
		src := []byte(gemmSource(b, tc.p))
		b.Run(tc.name, func(b *testing.B) {
			res, err := compiler.Compile(src, compiler.Options{Target: tc.target})
			if err != nil {
				b.Fatal(err)
			}
			l := launches(res)
			for b.Loop() {
				if _, err := spirv.Emit(res.Lowered, res.Target, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
