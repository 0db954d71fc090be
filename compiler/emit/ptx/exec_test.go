package ptx_test

import (
	"cmp"
	"errors"
	"os"
	"strconv"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/ptx"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/internal/exectest"
	"tltune/device"
	"tltune/internal/devtest"
	"tltune/kernels"
)

// TestPTXOnDevice builds the PTX of sampled configurations of every
// GEMV and GER problem, and of f16, bf16 and f32 GEMMs, with BuildBinary on an NVIDIA device
// (TLTUNE_TEST_DEVICE, default opencl:0), runs it and compares every
// memref with the interpreter on the source from the same inputs, as the
// OpenCL C's differential tests do. TLTUNE_PTX_SAMPLES configurations
// per problem (default 8). Elsewhere it skips: only NVIDIA's OpenCL
// builds PTX. It reads no files, so its test binary (go test -c) runs
// from any directory.
func TestPTXOnDevice(t *testing.T) {
	d := devtest.Open(t, cmp.Or(os.Getenv("TLTUNE_TEST_DEVICE"), "opencl:0"))
	if info := d.Info(); !info.IsNVIDIA() {
		t.Skipf("%s (%s) is not an NVIDIA OpenCL device: it builds no PTX", info.Name, info.Platform)
	}
	count := 8
	if n, err := strconv.Atoi(os.Getenv("TLTUNE_PTX_SAMPLES")); err == nil && n > 0 {
		count = n
	}
	all := []kernels.DType{kernels.F16, kernels.BF16, kernels.F32, kernels.F64, kernels.C32, kernels.C64}
	ps := append(problems(256, 256, all...), problems(100, 60, all...)...)
	ps = append(ps, gemms(64, 64, 32, kernels.F16, kernels.BF16, kernels.F32)...)
	ps = append(ps, gemms(100, 60, 40, kernels.F16, kernels.BF16, kernels.F32)...)
	t.Run("divide", func(t *testing.T) {
		runPTX(t, d, []byte(divideSource), compiler.Options{Target: "nvidia", PTX: true})
	})
	for _, p := range ps {
		samples, opts := sampled(t, p, count)
		for _, s := range samples {
			t.Run(s.name, func(t *testing.T) { runPTX(t, d, s.src, opts) })
		}
	}
}

// runPTX compiles src to PTX, runs each kernel on d and compares it with
// the interpreter on the source.
func runPTX(t *testing.T, d device.Device, src []byte, opts compiler.Options) {
	res, err := compiler.Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	form, err := devcall.PTXForm(res)
	if errors.Is(err, ptx.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	build := func(symbol string) (device.Kernel, func(), error) {
		prog, err := form.Build(d)
		if err != nil {
			return nil, nil, err
		}
		return devcall.KernelOf(prog, symbol)
	}
	for fi, f := range exectest.Parse(t, src).Funcs {
		k := &res.Kernels[fi]
		want, err := exectest.Interpret(f, k)
		if err != nil {
			t.Fatalf("interpreter on the source: %v", err)
		}
		got := exectest.Args(f, 1)
		if err := exectest.RunArgs(d, build, k, got); err != nil {
			t.Fatalf("device: %v\n%s", exectest.Detail(err), res.PTX)
		}
		exectest.Compare(t, "PTX on "+d.Info().Name, f, want, got)
	}
}
