package spirv_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The intel-target modules run on an OpenCL device with cl_intel_subgroups
// that takes SPIR-V IL or SPIR bitcode: an Intel GPU, or PoCL 5 on a CPU.
// CI's PoCL 3.1 has no cl_intel_subgroups, so there these tests skip and
// say why.
//
// Without such a device but with TLTUNE_SPIR_DIR set, the tests emit and
// validate every module and store its SPIR bitcode there, then skip: the
// folder travels to a machine with the device but without llvm-spirv-15.

// openIntelDevice returns the first such device, or nil (after which the
// tests only prepare bitcode) when TLTUNE_SPIR_DIR is set, and the emitter
// options it needs. PoCL lacks block reads and writes; so that the modules
// prepared elsewhere match, TLTUNE_SPIR_NO_BLOCK_IO=1 says the same there.
func openIntelDevice(t *testing.T) (device.Device, spirv.Options) {
	t.Helper()
	for _, info := range device.Enumerate().Devices {
		spir := info.AcceptsSPIRV() || info.HasExtension("cl_khr_spir")
		if info.Runtime == device.OpenCL && spir && info.HasExtension("cl_intel_subgroups") {
			d, err := info.Open()
			if err != nil {
				t.Fatalf("open %s: %v", info.Name, err)
			}
			return d, spirv.Options{NoBlockIO: strings.Contains(info.Platform, "Portable Computing Language")}
		}
	}
	if spirDir != "" {
		t.Cleanup(func() {
			if !t.Failed() {
				t.Skipf("no device with cl_intel_subgroups: modules validated, bitcode stored in %s", spirDir)
			}
		})
		return nil, spirv.Options{NoBlockIO: os.Getenv("TLTUNE_SPIR_NO_BLOCK_IO") == "1"}
	}
	t.Skip("no OpenCL device with cl_intel_subgroups that takes SPIR-V or SPIR (an Intel GPU, or PoCL 5)")
	return nil, spirv.Options{}
}

// prepare stores the bitcode of module in spirDir for a later run.
func prepare(t *testing.T, module []byte) {
	t.Helper()
	if _, err := bitcode(module); err != nil {
		t.Fatalf("llvm-spirv: %v", err)
	}
}

// TestIntelGemmOnDevice runs GEMM, GEMV and GER compiled for the intel
// target: subgroup sizes 8, 16 and 32, shuffles, block reads and writes
// (unit-stride f32 columns), float atomics.
func TestIntelGemmOnDevice(t *testing.T) {
	d, o := openIntelDevice(t)
	configs := []tuning.Params{{},
		{SubgroupSize: 8, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{8, 8, 4}, Unroll: 2, BatchPerGroup: 2, StageLocal: true},
		{SubgroupSize: 32, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{32, 4}, Coopmatrix: [3]int{32, 4, 2}, Unroll: 1, BatchPerGroup: 1}}
	specs := []kernels.Spec{
		{Op: kernels.GEMMOp, M: 64, N: 32, K: 16, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEMMOp, M: 20, N: 5, K: 56, DType: kernels.F32, Acc: kernels.F32, TransB: true, Alpha: 1, Beta: 1},
		{Op: kernels.GEMMOp, M: 33, N: 7, K: 9, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 2, Beta: 0},
		{Op: kernels.GEMMOp, M: 16, N: 16, K: 16, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 1, Atomic: true},
		{Op: kernels.GEMMOp, M: 13, N: 6, K: 9, DType: kernels.C32, Acc: kernels.C32, Alpha: complex(0.5, -1), Beta: 0, Layout: kernels.Group},
		{Op: kernels.GEMVOp, M: 40, N: 17, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEROp, M: 32, N: 9, DType: kernels.F32, Acc: kernels.F32, Alpha: -1, Beta: 1},
	}
	for _, s := range specs {
		if s.Layout != kernels.Group {
			s.Layout = kernels.Strided
		}
		for ci, p := range configs {
			t.Run(fmt.Sprintf("%v-%dx%dx%d-%v/cfg%d", s.Op, s.M, s.N, s.K, s.DType, ci), func(t *testing.T) {
				runRecipeOn(t, d, "intel", o, s, p, 5)
			})
		}
	}
}

// TestIntelDifferentialOnDevice runs the compiler's differential kernels
// for the intel target against the interpreter with the same subgroup size.
func TestIntelDifferentialOnDevice(t *testing.T) {
	d, o := openIntelDevice(t)
	for _, k := range exectest.Sources(t, "../../testdata/exec") {
		t.Run(k.Name, func(t *testing.T) {
			if strings.Contains(string(k.Src), "subgroup_size=1}") {
				t.Skip("the kernel pins subgroup size 1, which the intel target does not have")
			}
			if _, err := compiler.Compile(k.Src, compiler.Options{Target: "intel"}); err != nil &&
				strings.Contains(err.Error(), "must be a multiple of a subgroup size the target supports") {
				t.Skipf("the kernel's work-group is narrower than the intel target's subgroups: %v", err)
			}
			diffProgramOn(t, d, "intel", o, string(k.Src))
		})
	}
}
