package compiler_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The intel and nvidia targets cannot run here. Their OpenCL C is compiled
// with clang-15 instead (a package of `make setup`): intel for spir64 with
// the full OpenCL C header and cl_intel_subgroups, nvidia for nvptx64, which
// also checks the inline PTX operand constraints. Execution on the GPU
// machine is the lead's (docs/abi.md says how to launch).

// clangTargets are the clang invocations per target, after "clang-15".
var clangTargets = map[string][]string{
	"generic": {"-target", "spir64", "-c", "-emit-llvm",
		"-Xclang", "-cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics",
		"-include", "opencl-c.h"},
	"intel": {"-target", "spir64", "-c", "-emit-llvm",
		"-Xclang", "-cl-ext=+cl_intel_subgroups,+cl_khr_fp16,+cl_khr_fp64,+cl_khr_int64_base_atomics",
		"-include", "opencl-c.h"},
	"nvidia": {"-target", "nvptx64-nvidia-nvcl", "-S",
		"-Xclang", "-cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics",
		"-include", "opencl-c.h"},
}

func clangCompile(t *testing.T, tgt, src string, extra ...string) {
	t.Helper()
	clang, err := exec.LookPath("clang-15")
	if err != nil {
		t.Skip("clang-15 not installed (make setup installs it)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "k.cl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-x", "cl", "-cl-std=CL1.2", "-o", filepath.Join(dir, "k.out"), "-I", clangInclude(t, clang)}, clangTargets[tgt]...)
	args = append(args, extra...)
	out, err := exec.Command(clang, append(args, file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("clang-15 rejects the %s OpenCL C: %v\n%s\n%s", tgt, err, out, src)
	}
}

// clangInclude is clang's resource include folder, which holds opencl-c.h.
func clangInclude(t *testing.T, clang string) string {
	out, err := exec.Command(clang, "-print-resource-dir").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(string(out[:len(out)-1]), "include")
}

func TestTargetsCompileWithClang(t *testing.T) {
	configs := map[string][]tuning.Params{
		"intel": {{}, {SubgroupSize: 16, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 8}, Unroll: 2, BatchPerGroup: 2},
			{SubgroupSize: 8, WorkGroupSize: [2]int{8, 4}, Tile: [2]int{8, 8}, Coopmatrix: [3]int{8, 8, 4}, Unroll: 1, BatchPerGroup: 1, StageLocal: true}},
		"nvidia": {{}, {SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 8, 8}, Unroll: 2, BatchPerGroup: 1, StageLocal: true},
			{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 16, 16}, Unroll: 1, BatchPerGroup: 1,
				StageLocal: true, Stages: 2, LocalPad: 8, LocalEpilogue: true}},
	}
	specs := []kernels.Spec{
		{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: kernels.F32, Acc: kernels.F32, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F16, Acc: kernels.F32, TransB: true, Alpha: 1, Beta: 0},
		{Op: kernels.GEMMOp, M: 16, N: 8, K: 16, DType: kernels.C64, Acc: kernels.C64, TransA: true, Alpha: 1, Beta: 1, Atomic: true, Layout: kernels.Group},
		{Op: kernels.GEMVOp, M: 20, N: 56, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 2, Beta: 0.5},
		{Op: kernels.GEROp, M: 20, N: 5, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 1, Atomic: true},
	}
	for tgt, cfgs := range configs {
		for _, s := range specs {
			r := newRecipe(t, s)
			for ci, p := range cfgs {
				t.Run(fmt.Sprintf("%s/%s/cfg%d", tgt, r.Name(), ci), func(t *testing.T) {
					res := compileRecipe(t, r, p, compiler.Options{Target: tgt})
					clangCompile(t, tgt, res.OpenCL)
				})
			}
		}
	}
	// The differential test kernels that fit the targets' subgroup sizes,
	// and subgroup operations on every value family.
	for _, name := range []string{"exec/axpby", "exec/sum", "exec/hadamard", "exec/cumsum", "exec/foreach",
		"exec/scalar", "exec/views", "exec/group", "exec/coop", "exec/chain", "exec/dynamic", "targets/subgroups"} {
		src, err := os.ReadFile(filepath.Join("testdata", name+".tl"))
		if err != nil {
			t.Fatal(err)
		}
		for tgt := range configs {
			t.Run(tgt+"/"+name, func(t *testing.T) {
				res, err := compiler.Compile(src, compiler.Options{Target: tgt})
				if err != nil {
					t.Fatal(err)
				}
				clangCompile(t, tgt, res.OpenCL)
			})
		}
	}
}

// noHalfDevices are devices without cl_khr_fp16, one per target, as the
// runtime describes them: PoCL 5 on a CPU (cl_intel_subgroups: intel),
// NVIDIA's OpenCL (nvidia) and PoCL 3.1 (generic).
var noHalfDevices = []device.Info{
	{Name: "cpu-x86-64", Vendor: "AuthenticAMD", MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20,
		SubgroupSizes: []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		Extensions:    []string{"cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_intel_subgroups", "cl_khr_subgroups"}},
	{Name: "NVIDIA H200", Vendor: "NVIDIA Corporation", MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		Extensions: []string{"cl_khr_fp64", "cl_khr_int64_base_atomics"}},
	{Name: "pthread-cpu", Vendor: "GenuineIntel", MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20,
		Extensions: []string{"cl_khr_fp64", "cl_khr_int64_base_atomics"}},
}

// TestHalfWithoutFP16CompilesWithClang: for a device without cl_khr_fp16,
// the f16 kernels of every target compile with clang-15 told that the
// extension is absent, through the options the execution tests use
// (deviceOptions): f16 lives in memory only, no half value, variable or
// cast appears.
func TestHalfWithoutFP16CompilesWithClang(t *testing.T) {
	specs := []kernels.Spec{
		{Op: kernels.GEMMOp, M: 13, N: 6, K: 9, DType: kernels.F16, Acc: kernels.F16, Alpha: 1, Beta: 0},
		{Op: kernels.GEMMOp, M: 13, N: 6, K: 9, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 1},
		{Op: kernels.GEMVOp, M: 20, N: 7, DType: kernels.F16, Acc: kernels.F16, TransA: true, Alpha: 1.5, Beta: 0.5},
		{Op: kernels.GEROp, M: 1, N: 1, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 0, Layout: kernels.Group},
	}
	coop, err := os.ReadFile("testdata/exec/coop.tl")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range noHalfDevices {
		opts := deviceOptions(info)
		tgt := targetName(opts)
		compile := func(t *testing.T, src []byte) {
			res, err := compiler.Compile(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			clangCompile(t, tgt, res.OpenCL, "-Xclang", "-cl-ext=-cl_khr_fp16")
		}
		for _, s := range specs {
			r := newRecipe(t, s)
			t.Run(tgt+"/"+r.Name(), func(t *testing.T) {
				src, err := r.Source(tuning.Params{})
				if err != nil {
					t.Fatal(err)
				}
				compile(t, []byte(src))
			})
		}
		t.Run(tgt+"/exec/coop", func(t *testing.T) { compile(t, coop) })
	}
}

// TestNvidiaUsesMMA: f16 and bf16 GEMMs into f32 use mma.sync on nvidia
// with the heuristic's and a tuned configuration; f32 ones use shuffles.
func TestNvidiaUsesMMA(t *testing.T) {
	for _, tc := range []struct {
		dtype kernels.DType
		p     tuning.Params
		mma   bool
	}{
		{kernels.F16, tuning.Params{}, true},
		{kernels.BF16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{32, 16, 16}, Unroll: 2, BatchPerGroup: 1}, true},
		{kernels.F16, tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 16}, Unroll: 1, BatchPerGroup: 2, StageLocal: true}, true},
		{kernels.F32, tuning.Params{}, false},
	} {
		r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 40, N: 24, K: 48, DType: tc.dtype, Acc: kernels.F32,
			Alpha: 1, Beta: 1, TransA: true})
		res := compileRecipe(t, r, tc.p, compiler.Options{Target: "nvidia"})
		if got := strings.Contains(res.OpenCL, "mma.sync.aligned.m16n8k16.row.col.f32."+tc.dtype.String()); got != tc.mma {
			t.Errorf("%s %v: mma.sync used = %v, want %v", tc.dtype, tc.p, got, tc.mma)
		}
		clangCompile(t, "nvidia", res.OpenCL)
	}
}

// TestNvidiaBlockedRows: an f32 GEMM whose coopmatrices have four rows a
// lane reads A (staged in local memory or not) and writes C in 128-bit
// vectors, its rows blocked over the lanes; not A where it is transposed
// in global memory (a lane's rows are then a column apart), nor C where M
// is ragged (its rows are checked).
func TestNvidiaBlockedRows(t *testing.T) {
	p := tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 4}, Tile: [2]int{128, 16}, Coopmatrix: [3]int{128, 16, 8},
		Unroll: 2, BatchPerGroup: 1, Stages: 2, LocalPad: 4}
	for _, tc := range []struct {
		m       int
		transA  bool
		staged  bool
		vectors []string // in the OpenCL C, or absent when "-" leads
	}{
		{256, false, true, []string{"*(local const float4*)(", "*(global float4*)(C_"}},
		{256, false, false, []string{"*(global const float4*)(A_", "*(global float4*)(C_"}},
		{256, true, false, []string{"-*(global const float4*)(A_", "*(global float4*)(C_"}},
		{250, false, true, []string{"-*(global float4*)(C_"}},
	} {
		r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: tc.m, N: 64, K: 64, DType: kernels.F32, Acc: kernels.F32,
			Alpha: 1, Beta: 0, TransA: tc.transA})
		p.StageLocal = tc.staged
		res := compileRecipe(t, r, p, compiler.Options{Target: "nvidia"})
		for _, v := range tc.vectors {
			want := !strings.HasPrefix(v, "-")
			if got := strings.Contains(res.OpenCL, strings.TrimPrefix(v, "-")); got != want {
				t.Errorf("M=%d transA=%v staged=%v: %q in the OpenCL C = %v, want %v", tc.m, tc.transA, tc.staged, strings.TrimPrefix(v, "-"), got, want)
			}
		}
		clangCompile(t, "nvidia", res.OpenCL)
	}
}

// TestNvidiaPipeline: a staged f16 GEMM on nvidia copies its panels with
// cp.async (16 bytes where the recipe's alignment allows), waits for the
// stage it computes on, loads its packed fragments with ldmatrix (.trans
// for A stored column-major, plain for B) and multiplies them as they are.
func TestNvidiaPipeline(t *testing.T) {
	r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 128, N: 128, K: 64, DType: kernels.F16, Acc: kernels.F32, Alpha: 1, Beta: 0})
	p := tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 2}, Tile: [2]int{64, 64}, Coopmatrix: [3]int{16, 16, 16},
		Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 8}
	res := compileRecipe(t, r, p, compiler.Options{Target: "nvidia"})
	for _, want := range []string{"cp.async.cg.shared.global [%0], [%1], 16", "cp.async.wait_group 1;", "cp.async.commit_group;",
		"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "tl_mma_m16n8k16_packed_f16"} {
		if !strings.Contains(res.OpenCL, want) {
			t.Errorf("no %q in the generated OpenCL C", want)
		}
	}
	if strings.Contains(res.OpenCL, "vstore_half_rte") {
		t.Error("packed fragments are converted through float (vstore_half_rte)")
	}
	clangCompile(t, "nvidia", res.OpenCL)
}

// TestNvidiaTF32: only when asked, f32 GEMMs on nvidia use mma.sync
// m16n8k8 with tf32 inputs (rounded to nearest); other targets refuse the
// precision, and without it f32 stays on FMAs.
func TestNvidiaTF32(t *testing.T) {
	r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 32, K: 40, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0})
	p := tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 8, 8},
		Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalPad: 4}
	const tf32 = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
	for _, precision := range []string{"", "tf32"} {
		res := compileRecipe(t, r, p, compiler.Options{Target: "nvidia", Precision: precision})
		if got := strings.Contains(res.OpenCL, tf32); got != (precision == "tf32") {
			t.Errorf("precision %q: tf32 mma.sync used = %v", precision, got)
		}
		clangCompile(t, "nvidia", res.OpenCL)
	}
	src, err := r.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []compiler.Options{{Target: "intel", Precision: "tf32"}, {Target: "nvidia", Precision: "bf16"}} {
		if _, err := compiler.Compile([]byte(src), o); err == nil {
			t.Errorf("%s with precision %q compiled", o.Target, o.Precision)
		}
	}
}

// TestIntelUsesDPAS: on an Intel GPU that lists
// cl_intel_subgroup_matrix_multiply_accumulate, f16 and bf16 GEMMs into f32
// call the DPAS builtins at the device's minimum subgroup size (16 on PVC,
// 8 on Arc A-series); without the extension they use shuffles. The
// built-ins come from the test's emulation (TestDPASOnDevice runs it).
func TestIntelUsesDPAS(t *testing.T) {
	dpasExt := []string{"cl_intel_subgroups", "cl_khr_fp16", "cl_khr_fp64", "cl_intel_subgroup_matrix_multiply_accumulate"}
	header, err := filepath.Abs(dpasEmulationFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dev   target.Device
		dtype kernels.DType
		want  string
	}{
		{"pvc-f16", target.Device{Name: "Max 1550", Extensions: dpasExt, SubgroupSizes: []int{16, 32}}, kernels.F16, "intel_sub_group_f16_f16_matrix_mad_k16((short8)"},
		{"pvc-bf16", target.Device{Name: "Max 1550", Extensions: dpasExt, SubgroupSizes: []int{16, 32}}, kernels.BF16, "intel_sub_group_bf16_bf16_matrix_mad_k16((short8)"},
		{"arc-f16", target.Device{Name: "Arc A770", Extensions: dpasExt, SubgroupSizes: []int{8, 16, 32}}, kernels.F16, "intel_sub_group_f16_f16_matrix_mad_k16((int8)"},
		{"no-extension", target.Device{Name: "PoCL 5", Extensions: dpasExt[:3], SubgroupSizes: []int{8, 16, 32}}, kernels.F16, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecipe(t, kernels.Spec{Op: kernels.GEMMOp, M: 40, N: 40, K: 48, DType: tc.dtype, Acc: kernels.F32,
				Alpha: 1, Beta: 1, TransB: true})
			res := compileRecipe(t, r, tuning.Params{}, compiler.Options{Device: &tc.dev})
			used := strings.Contains(res.OpenCL, "matrix_mad_k16(")
			if tc.want == "" && used || tc.want != "" && !strings.Contains(res.OpenCL, tc.want) {
				t.Errorf("DPAS call %q: used = %v\n%s", tc.want, used, res.OpenCL)
			}
			clangCompile(t, "intel", res.OpenCL, "-include", header)
		})
	}
}
