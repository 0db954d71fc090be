package spirv_test

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// gemmSource is the batched GEMM kernel the speed target is about: 64×64×64
// f32, the compiler's configuration.
func gemmSource(b *testing.B) string {
	r, err := kernels.New(kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 64, DType: kernels.F32, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1})
	if err != nil {
		b.Fatal(err)
	}
	src, err := r.Source(tuning.Params{})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// sourceToSPIRV is the whole path: parse, verify, pass pipeline, SPIR-V.
func sourceToSPIRV(src []byte, target string) (*spirv.Output, error) {
	res, err := compiler.Compile(src, compiler.Options{Target: target})
	if err != nil {
		return nil, err
	}
	return spirv.Emit(res.Lowered, res.Target, launches(res))
}

func launches(res *compiler.Result) map[*ir.Func]opencl.Launch {
	l := map[*ir.Func]opencl.Launch{}
	for i, f := range res.Lowered.Funcs {
		l[f] = res.Kernels[i].Launch
	}
	return l
}

// BenchmarkGemmSourceToSPIRV is source text to SPIR-V binary (target:
// ≤ 500 µs median; compiler.Compile also writes OpenCL C on the way).
func BenchmarkGemmSourceToSPIRV(b *testing.B) {
	src := []byte(gemmSource(b))
	for _, target := range []string{"generic", "intel"} {
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				if _, err := sourceToSPIRV(src, target); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEmitGemm is the SPIR-V emitter alone on the lowered GEMM.
func BenchmarkEmitGemm(b *testing.B) {
	src := []byte(gemmSource(b))
	for _, target := range []string{"generic", "intel"} {
		b.Run(target, func(b *testing.B) {
			res, err := compiler.Compile(src, compiler.Options{Target: target})
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
