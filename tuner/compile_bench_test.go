package tuner_test

import (
	"testing"

	"tltune/compiler"
	"tltune/internal/gcpace"
	"tltune/kernels"
	"tltune/tuner/profile"
	"tltune/tuner/prune"
	"tltune/tuner/space"
)

// sampledConfigs is how many configurations of a pruned space
// BenchmarkCompileSpace compiles: about what a default tuning run (80
// evaluations) builds.
const sampledConfigs = 80

// BenchmarkCompileSpace is tltune's own compile, source to what the driver
// builds, over the configurations a tuning run compiles: the shipped space
// of a shape, pruned for a shipped device, sampled evenly to
// sampledConfigs. One op is one kernel. BenchmarkCompileGemm
// (compiler/bench_test.go) times single, hand-picked kernels, some of them
// configurations the pruner would not let a run compile; this is the cost
// per evaluation the tuner pays, which issue 16's "≤ 100 µs per kernel" is
// about. The collector is paced as tltune paces it (gcpace).
func BenchmarkCompileSpace(b *testing.B) {
	defer gcpace.Relax()()
	for _, tc := range []struct {
		name, device string
		spirv, ptx   bool
		spec         kernels.Spec
	}{
		{"nvidia-f16", "NVIDIA H100 80GB HBM3", false, false, gemmSpec(kernels.F16)},
		{"nvidia-f32", "NVIDIA H100 80GB HBM3", false, false, gemmSpec(kernels.F32)},
		// What a tuning run on an NVIDIA device compiles by default: the
		// PTX, and the OpenCL C only where the PTX writer refuses.
		{"nvidia-f16-ptx", "NVIDIA H100 80GB HBM3", false, true, gemmSpec(kernels.F16)},
		{"intel-f16-spirv", "Intel(R) Data Center GPU Max 1550", true, false, gemmSpec(kernels.F16)},
	} {
		srcs, dev := spaceSources(b, tc.device, tc.spec)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			opts := compiler.Options{Device: dev.TargetDevice(tc.device), SPIRVOnly: tc.spirv, PTX: tc.ptx}
			i := 0
			for b.Loop() {
				if _, err := compiler.Compile(srcs[i%len(srcs)], opts); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// gemmSpec is the GEMM of tltune's default command (tltune gemm --m 64 --n
// 64 --k 32): α 1, β 0, a strided batch, f32 accumulation.
func gemmSpec(dtype kernels.DType) kernels.Spec {
	return kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: dtype, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 0}
}

// spaceSources returns the sources of sampledConfigs configurations of
// spec's shipped space that the pruner keeps on the shipped profile of
// device, evenly spaced through the kept ones, and the profile.
func spaceSources(b *testing.B, device string, spec kernels.Spec) ([][]byte, *profile.Profile) {
	devs, err := profile.Shipped()
	if err != nil {
		b.Fatal(err)
	}
	dev, ok := devs.Lookup(device)
	if !ok {
		b.Fatalf("no shipped profile matches %q", device)
	}
	s, err := space.Shipped("gemm", string(dev.Target))
	if err != nil {
		b.Fatal(err)
	}
	prob := prune.Problem{Op: "gemm", Dtype: spec.DType.String(), Batch: 8534, M: spec.M, N: spec.N, K: spec.K}
	kept, _ := prune.Split(s.All(), dev, prob)
	if len(kept) < sampledConfigs {
		b.Fatalf("%s: %d configurations kept, want at least %d", device, len(kept), sampledConfigs)
	}
	r, err := kernels.New(spec)
	if err != nil {
		b.Fatal(err)
	}
	var srcs [][]byte
	for i := range sampledConfigs {
		src, err := r.Source(kept[i*len(kept)/sampledConfigs])
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, []byte(src))
	}
	return srcs, dev
}
