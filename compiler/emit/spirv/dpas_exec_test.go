package spirv_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/emit/spirv/internal/spvtest"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/golden"
	"tltune/kernels"
)

// The intel target's modules call the DPAS built-ins
// (cl_intel_subgroup_matrix_multiply_accumulate) by their mangled names
// where the device lists the extension. No such device is at hand: these
// tests link the module with the OpenCL C emulation of the built-ins that
// the OpenCL C writer's tests prepend (compiler/testdata/targets/
// dpas_emulation.h, compiled with clang-15 and llvm-spirv-15, linked with
// spirv-link) and run it on PoCL 5 (cl_intel_subgroups, SPIR) against the
// recipes' references, which proves the fragment layouts the SPIR-V
// writer builds. As with the other intel tests, a machine with the tools
// but without the device stores the linked bitcode in TLTUNE_SPIR_DIR for
// one with the device but without the tools (the GPU machine): from
// compiler/emit/spirv there, TLTUNE_SPIR_DIR=dir TLTUNE_SPIR_NO_BLOCK_IO=1
// spirv.test -test.run DPAS.

const dpasEmulationFile = "../../testdata/targets/dpas_emulation.h"

// dpasDevice is PoCL 5 as the compiler sees it, described as having DPAS
// at subgroup size sgs (its smallest, as the built-ins want), with native
// half or not (PoCL 5 has no cl_khr_fp16; an Intel GPU has it).
func dpasDevice(sgs int, nativeHalf bool) *target.Device {
	exts := []string{"cl_intel_subgroups", "cl_khr_fp64", "cl_intel_subgroup_matrix_multiply_accumulate"}
	if nativeHalf {
		exts = append(exts, "cl_khr_fp16")
	}
	return &target.Device{Name: "PoCL 5 with DPAS", Extensions: exts, SubgroupSizes: []int{sgs, 2 * sgs}}
}

// dpasSPIRVCases are GEMMs whose cooperative matrices the DPAS shapes
// divide: one 8×N block per subgroup at 8 and 16 lanes, then the
// configurations the OpenCL C writer's DPAS tests run (exectest.
// DPASConfigs: grids of blocks in M, N and K, one to three stages, padding,
// C through local memory), on ragged shapes with the transposes and dtypes
// rotating.
func dpasSPIRVCases() []dpasCase {
	configs := []tuning.Params{
		{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{8, 16}, Coopmatrix: [3]int{8, 16, 16}, Unroll: 1, BatchPerGroup: 1},
		{SubgroupSize: 8, WorkGroupSize: [2]int{8, 1}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{8, 8, 16}, Unroll: 2, BatchPerGroup: 1},
	}
	configs = append(append(configs, exectest.DPASConfigs[16]...), exectest.DPASConfigs[8]...)
	shapes := [][3]int{{53, 23, 56}, {32, 32, 32}, {7, 33, 3}}
	transposes := []string{"nn", "tn", "nt", "tt"}
	dtypes := []kernels.DType{kernels.F16, kernels.BF16}
	var cases []dpasCase
	for ci, p := range configs {
		for si, sh := range shapes {
			tr, dtype := transposes[(si+ci)%len(transposes)], dtypes[(si+ci)%len(dtypes)]
			cases = append(cases, dpasCase{
				name: fmt.Sprintf("sg%d/%s/%dx%dx%d/%s/cfg%d", p.SubgroupSize, dtype, sh[0], sh[1], sh[2], tr, ci),
				spec: kernels.Spec{Op: kernels.GEMMOp, M: sh[0], N: sh[1], K: sh[2], DType: dtype, Acc: kernels.F32,
					TransA: tr[0] == 't', TransB: tr[1] == 't', Alpha: 1.5, Beta: 0.5, Layout: kernels.Strided},
				p: p,
			})
		}
	}
	return cases
}

type dpasCase struct {
	name string
	spec kernels.Spec
	p    tuning.Params
}

// TestIntelDPASModules: every case's module, with native half and
// without, calls the built-in for its dtype and subgroup size and passes
// spirv-val; where clang-15, llvm-spirv-15 and spirv-link are installed
// (CI), the module also links with the emulation.
func TestIntelDPASModules(t *testing.T) {
	for _, c := range dpasSPIRVCases() {
		for _, native := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/native=%v", c.name, native), func(t *testing.T) {
				out := emitDPAS(t, c, native, spirv.Options{})
				if native {
					return
				}
				spvtest.Validate(t, linkEmulation(t, out.Module), "opencl2.2")
			})
		}
	}
}

// TestGoldenDPAS keeps the disassembly of the smallest DPAS GEMM (16³ f16,
// one 8×16 block of D per subgroup and K step, native half) in
// testdata/gemm_dpas.intel.spvasm, so that a change of what the writer emits
// for DPAS shows in review.
func TestGoldenDPAS(t *testing.T) {
	c := dpasCase{spec: kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 16, K: 16, DType: kernels.F16, Acc: kernels.F32,
		Alpha: 1, Beta: 0, Layout: kernels.Strided}, p: dpasSPIRVCases()[0].p}
	text, err := spirv.Disassemble(emitDPAS(t, c, true, spirv.Options{}).Module)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/gemm_dpas.intel.spvasm", []byte(text))
}

// TestIntelDPASOnDevice runs every case on PoCL 5 with the emulation
// linked in, against the recipe's float64 reference. With
// TLTUNE_TEST_DPAS_CASE=i it runs case i alone (exectest.PickedCases), as
// docs/bench/spirv_pocl.sh does for each.
func TestIntelDPASOnDevice(t *testing.T) {
	cases := exectest.PickedCases(t, dpasSPIRVCases())
	d, o := openIntelDevice(t)
	if d != nil && !d.Info().HasExtension("cl_khr_spir") {
		t.Skipf("%s does not take SPIR bitcode, the form the linked modules travel in", d.Info().Name)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := exectest.NewRecipe(t, c.spec)
			out := emitDPAS(t, c, false, o)
			bc := dpasBitcode(t, out.Module)
			if d == nil {
				return
			}
			k := &out.Kernels[0]
			exectest.CheckRecipe(t, r, 5, fmt.Sprintf("%v [%+v]", c.p, k.Launch), func(in *kernels.Inputs) error {
				return exectest.RunInputs(d, fromBitcode(d, bc), k, in)
			})
		})
	}
}

// emitDPAS compiles case c for dpasDevice and checks that its module
// imports the built-in it must call.
func emitDPAS(t *testing.T, c dpasCase, nativeHalf bool, o spirv.Options) *spirv.Output {
	t.Helper()
	src, err := exectest.NewRecipe(t, c.spec).Source(c.p)
	if err != nil {
		t.Fatal(err)
	}
	_, out := emitFor(t, src, compiler.Options{Device: dpasDevice(c.p.SubgroupSize, nativeHalf)}, o)
	args := map[int]string{8: "Dv8_iS_Dv8_f", 16: "Dv8_sDv8_iDv8_f"}[c.p.SubgroupSize]
	name := fmt.Sprintf("intel_sub_group_%[1]s_%[1]s_matrix_mad_k16%[2]s", c.spec.DType, args)
	if !bytes.Contains(out.Module, []byte(name)) {
		t.Fatalf("the module does not call %s", name)
	}
	return out
}

// dpasEmulation is the emulation as a SPIR-V module exporting the
// built-ins, compiled once per test binary.
func dpasEmulation(t *testing.T) []byte {
	t.Helper()
	for _, tool := range []string{"clang-15", "llvm-spirv-15"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make setup installs it)", tool)
		}
	}
	module, err := emulationModule()
	if err != nil {
		t.Fatal(err)
	}
	return module
}

var emulationModule = sync.OnceValues(compileEmulation)

// compileEmulation compiles the emulation header to SPIR-V: clang-15 to
// spir64 bitcode (typed pointers, which llvm-spirv-15 needs; unoptimized,
// as it cannot translate the freeze instructions optimization adds;
// without the subgroup-size check, which PoCL 5 cannot link in a called
// function), then llvm-spirv-15 with the shuffles of SPV_INTEL_subgroups,
// its functions made inlinable.
func compileEmulation() ([]byte, error) {
	dir, err := os.MkdirTemp("", "tltune-dpas-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bc, spv := filepath.Join(dir, "emu.bc"), filepath.Join(dir, "emu.spv")
	steps := [][]string{
		{"clang-15", "-cc1", "-triple", "spir64-unknown-unknown", "-cl-std=CL2.0", "-finclude-default-header",
			"-cl-ext=+cl_intel_subgroups", "-DDPAS_EMU_NO_SIZE_CHECK", "-no-opaque-pointers", "-O0", "-emit-llvm-bc", "-o", bc, "-x", "cl", dpasEmulationFile},
		{"llvm-spirv-15", "--spirv-ext=+SPV_INTEL_subgroups", bc, "-o", spv},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", s[0], err, out)
		}
	}
	module, err := os.ReadFile(spv)
	if err != nil {
		return nil, err
	}
	return inlinable(module), nil
}

// inlinable clears the function control of every function of module: at
// -O0 clang marks them noinline (DontInline), and PoCL 5 resolves the
// subgroup size its shuffles need only in code inlined into a kernel.
func inlinable(module []byte) []byte {
	const opFunction, headerWords = 54, 5
	words := func(i int) uint32 { return binary.LittleEndian.Uint32(module[4*i:]) }
	for i := headerWords; 4*i < len(module); i += int(words(i) >> 16) {
		if words(i)&0xffff == opFunction { // result type, result, control, type
			binary.LittleEndian.PutUint32(module[4*(i+3):], 0)
		}
	}
	return module
}

// dpasBitcode is module linked with the emulation, as SPIR bitcode
// (spirBitcode, named by the module's hash and "-dpas").
func dpasBitcode(t *testing.T, module []byte) []byte {
	t.Helper()
	bc, err := spirBitcode(module, "-dpas", func() []byte { return linkEmulation(t, module) })
	if err != nil {
		t.Fatalf("llvm-spirv: %v", err)
	}
	return bc
}

// linkEmulation links module with the emulation, whose header names the
// same SPIR-V version (llvm-spirv-15 writes the lowest its module needs;
// every later version is a superset, and spirv-link refuses a mix).
func linkEmulation(t *testing.T, module []byte) []byte {
	t.Helper()
	emu := slices.Clone(dpasEmulation(t))
	copy(emu[4:8], module[4:8]) // the header's version word
	return spvtest.Link(t, module, emu)
}

// fromBitcode builds kernels of SPIR bitcode.
func fromBitcode(d device.Device, bc []byte) exectest.Build {
	return func(name string) (device.Kernel, func(), error) {
		prog, err := d.BuildSPIR(bc, "")
		if err != nil {
			return nil, nil, err
		}
		return devcall.KernelOf(prog, name)
	}
}
