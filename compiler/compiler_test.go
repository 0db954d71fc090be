package compiler_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/printer"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

const smallGemm = `func @k(%A: memref<f32x8x4x?>, %B: memref<f32x4x8x?>, %C: memref<f32x8x8x?>) {
    %g = builtin.group_id : index
    %one = constant 1.0 : f32
    %a = subview %A[0:8, 0:4, %g] : memref<f32x8x4>
    %b = subview %B[0:4, 0:8, %g] : memref<f32x4x8>
    %c = subview %C[0:8, 0:8, %g] : memref<f32x8x8>
    gemm.n.n %one, %a, %b, %one, %c
}`

// TestCompileErrors: source errors come back as positioned diagnostics,
// other failures as one error.
func TestCompileErrors(t *testing.T) {
	_, err := compiler.Compile([]byte("func @k(%A: memref<f32x4>) {\n    %x = load %A[] : f32\n}\n"), compiler.Options{})
	var cerr *compiler.Error
	if !errors.As(err, &cerr) || len(cerr.Diags) != 1 || cerr.Diags[0].Pos.Line != 2 {
		t.Errorf("verifier error: %v", err)
	}
	_, err = compiler.Compile([]byte("func @k( {"), compiler.Options{})
	if !errors.As(err, &cerr) || len(cerr.Diags) == 0 {
		t.Errorf("syntax error: %v", err)
	}
	_, err = compiler.Compile([]byte(smallGemm), compiler.Options{Target: "tpu"})
	if err == nil || !strings.Contains(err.Error(), `unknown target "tpu"`) {
		t.Errorf("unknown target: %v", err)
	}
}

// TestCompileChoosesTargetFromDevice: without --target the device's
// properties pick the profile.
func TestCompileChoosesTargetFromDevice(t *testing.T) {
	for dev, want := range map[*target.Device]string{
		nil: "generic",
		{Name: "Intel(R) Data Center GPU Max 1550", Extensions: []string{"cl_intel_subgroups", "cl_khr_fp16"}, SubgroupSizes: []int{16, 32}}: "intel",
		{Name: "NVIDIA H100", Vendor: "NVIDIA Corporation"}: "nvidia",
	} {
		res, err := compiler.Compile([]byte(smallGemm), compiler.Options{Device: dev})
		if err != nil {
			t.Fatal(err)
		}
		if res.Target.Name != want || !strings.Contains(res.OpenCL, "for target "+want) {
			t.Errorf("device %v: target %s, want %s", dev, res.Target.Name, want)
		}
	}
}

// TestCompileConcurrently: the tuner compiles in parallel; results must
// not depend on it.
func TestCompileConcurrently(t *testing.T) {
	want, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: "intel"})
	if err != nil {
		t.Fatal(err)
	}
	wantSPIRV, err := want.SPIRV()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 1 { // the SPIR-V path shares recycled buffers too
				got, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: "intel", SPIRVOnly: true})
				if err == nil {
					var out *spirv.Output
					if out, err = got.SPIRV(); err == nil && !bytes.Equal(out.Module, wantSPIRV.Module) {
						err = errors.New("another module")
					}
				}
				if err != nil {
					t.Errorf("concurrent SPIR-V compile differs: %v", err)
				}
				return
			}
			got, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: "intel"})
			if err != nil || got.OpenCL != want.OpenCL {
				t.Errorf("concurrent compile differs: %v", err)
			}
		}()
	}
	wg.Wait()
}

// TestResultOutlivesLaterCompiles: the parser and the back ends recycle
// their working memory from compile to compile; nothing a Result holds
// (the lowered program, the C, the SPIR-V module, the kernels' names and
// arguments) may be cut from it. A result kept while other kernels
// compile, side by side, must stay what it was.
func TestResultOutlivesLaterCompiles(t *testing.T) {
	compile := func(o compiler.Options, spec kernels.Spec, name string) *compiler.Result {
		t.Helper()
		r, err := kernels.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		src, err := r.Source(tuning.Params{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.CompileMany([][]byte{[]byte(src)}, []string{name}, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	gemm := kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F16, Acc: kernels.F32,
		Layout: kernels.Strided, Alpha: 1, Beta: 1}
	others := []kernels.Spec{gemm, gemm, gemm}
	others[0].DType = kernels.F32
	others[1].Op, others[1].K = kernels.GEMVOp, 0
	others[2].Op, others[2].K = kernels.GEROp, 0
	kept := []*compiler.Result{
		compile(compiler.Options{Target: "nvidia"}, gemm, "kept"),
		compile(compiler.Options{Target: "intel", SPIRVOnly: true}, gemm, "kept_spirv"),
		compile(compiler.Options{Target: "nvidia", PTX: true}, gemm, "kept_ptx"),
	}
	var want []resultCopy
	for _, r := range kept {
		want = append(want, copyResult(t, r))
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 4 {
				target := []string{"generic", "intel", "nvidia"}[i%3]
				o := compiler.Options{Target: target, SPIRVOnly: target != "nvidia" && j%2 == 0, PTX: target == "nvidia" && j%2 == 0}
				compile(o, others[i%3], fmt.Sprintf("other%d", i))
			}
		})
	}
	wg.Wait()
	for i, r := range kept {
		got := copyResult(t, r)
		name := r.Kernels[0].Name
		if got.IR != want[i].IR {
			t.Errorf("the kept result %s: its lowered program changed while other kernels compiled", name)
		}
		if got.OpenCL != want[i].OpenCL {
			t.Errorf("the kept result %s: its C changed while other kernels compiled", name)
		}
		if got.PTX != want[i].PTX {
			t.Errorf("the kept result %s: its PTX changed while other kernels compiled", name)
		}
		if !bytes.Equal(got.Module, want[i].Module) {
			t.Errorf("the kept result %s: its SPIR-V module changed while other kernels compiled", name)
		}
		if !reflect.DeepEqual(got.Kernels, want[i].Kernels) {
			t.Errorf("the kept result %s: its kernels changed while other kernels compiled:\n%+v\nwant\n%+v", name, got.Kernels, want[i].Kernels)
		}
	}
}

// resultCopy is a deep copy of what a Result hands out.
type resultCopy struct {
	IR      string // the lowered program, printed
	OpenCL  string
	PTX     string
	Module  []byte // the SPIR-V module, when compiled to SPIR-V
	Kernels []compiler.Kernel
}

func copyResult(t *testing.T, r *compiler.Result) resultCopy {
	t.Helper()
	c := resultCopy{IR: printer.String(r.Lowered), OpenCL: strings.Clone(r.OpenCL), PTX: strings.Clone(r.PTX)}
	if r.OpenCL == "" && r.PTX == "" {
		m, err := r.SPIRV()
		if err != nil {
			t.Fatal(err)
		}
		c.Module = slices.Clone(m.Module)
	}
	for _, k := range r.Kernels {
		k.Name, k.Symbol = strings.Clone(k.Name), strings.Clone(k.Symbol)
		k.Args = slices.Clone(k.Args)
		for i, a := range k.Args {
			k.Args[i].Name, k.Args[i].CType, k.Args[i].Elem = strings.Clone(a.Name), strings.Clone(a.CType), strings.Clone(a.Elem)
		}
		c.Kernels = append(c.Kernels, k)
	}
	return c
}

// TestCompileMany: sources of one function each become one program, each
// function renamed; an error names the source by its new name.
func TestCompileMany(t *testing.T) {
	src := []byte(smallGemm)
	res, err := compiler.CompileMany([][]byte{src, src}, []string{"k_a", "k_b"}, compiler.Options{Target: "intel"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) != 2 || res.Kernels[0].Name != "k_a" || res.Kernels[1].Name != "k_b" ||
		!strings.Contains(res.OpenCL, "kernel void k_a(") || !strings.Contains(res.OpenCL, "kernel void k_b(") {
		t.Errorf("kernels %v:\n%s", res.Kernels, res.OpenCL)
	}
	_, err = compiler.CompileMany([][]byte{src, []byte("func @x(")}, []string{"k_a", "k_b"}, compiler.Options{Target: "intel"})
	if err == nil || !strings.Contains(err.Error(), "@k_b:") {
		t.Errorf("a bad second source: %v, want an error naming @k_b", err)
	}
}

// TestCompileSPIRVOnly: a SPIR-V-only compile writes the module, and the
// kernels, that a full compile's Result.SPIRV writes, and no OpenCL C;
// the nvidia target, which has no SPIR-V form, is refused.
func TestCompileSPIRVOnly(t *testing.T) {
	for _, tgt := range []string{"generic", "intel"} {
		full, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: tgt})
		if err != nil {
			t.Fatal(err)
		}
		want, err := full.SPIRV()
		if err != nil {
			t.Fatal(err)
		}
		only, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: tgt, SPIRVOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := only.SPIRV()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Module, want.Module) || !reflect.DeepEqual(only.Kernels, want.Kernels) || only.OpenCL != "" || only.Explain() != full.Explain() {
			t.Errorf("%s: the SPIR-V-only compile differs from the full one's SPIR-V (module %d bytes, want %d; kernels %v, want %v)",
				tgt, len(got.Module), len(want.Module), only.Kernels, want.Kernels)
		}
	}
	if _, err := compiler.Compile([]byte(smallGemm), compiler.Options{Target: "nvidia", SPIRVOnly: true}); err == nil {
		t.Error("nvidia compiled to SPIR-V")
	}
}

// TestCompilePTXWritesNoC: a compile with PTX writes no OpenCL C where
// the PTX writer covers the program, and describes the kernels as the C
// compile does (the PTX keeps the C's ABI); where it does not, it writes
// the C compile's OpenCL C and says why there is no PTX.
func TestCompilePTXWritesNoC(t *testing.T) {
	for _, tc := range []struct {
		spec    kernels.Spec
		covered bool
	}{
		{kernels.Spec{Op: kernels.GEMVOp, M: 64, N: 48, DType: kernels.F32, Acc: kernels.F32, Layout: kernels.Strided, Alpha: 1}, true},
		{kernels.Spec{Op: kernels.GEMMOp, M: 64, N: 64, K: 32, DType: kernels.F16, Acc: kernels.F32, Layout: kernels.Strided, Alpha: 1}, true},
		{kernels.Spec{Op: kernels.GEMMOp, M: 16, N: 16, K: 16, DType: kernels.F64, Acc: kernels.F64, Layout: kernels.Strided, Alpha: 1}, false},
	} {
		r := newRecipe(t, tc.spec)
		c := compileRecipe(t, r, tuning.Params{}, compiler.Options{Target: "nvidia"})
		p := compileRecipe(t, r, tuning.Params{}, compiler.Options{Target: "nvidia", PTX: true})
		name := tc.spec.Op.String() + " " + tc.spec.DType.String()
		if !reflect.DeepEqual(p.Kernels, c.Kernels) || p.Explain() != c.Explain() {
			t.Errorf("%s: kernels %+v with PTX, want the C compile's %+v", name, p.Kernels, c.Kernels)
		}
		switch {
		case tc.covered && (p.PTXErr != nil || p.PTX == "" || p.OpenCL != ""):
			t.Errorf("%s: PTX %d bytes (error %v), OpenCL C %d bytes; want PTX alone", name, len(p.PTX), p.PTXErr, len(p.OpenCL))
		case !tc.covered && (p.PTXErr == nil || p.PTX != "" || p.OpenCL != c.OpenCL):
			t.Errorf("%s: PTX %d bytes (error %v), OpenCL C %d bytes; want the C compile's C and why there is no PTX", name, len(p.PTX), p.PTXErr, len(p.OpenCL))
		}
	}
}

// TestNvidiaHalfWarps: the nvidia target's subgroups of 16 lanes shuffle
// within their half of the warp (shfl.sync's segment mask 0x10, clamp 15,
// a member mask of their own half's lanes); whole warps keep the full
// warp's shuffle.
func TestNvidiaHalfWarps(t *testing.T) {
	spec := kernels.Spec{Op: kernels.GEMVOp, M: 64, N: 64, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Layout: kernels.Strided}
	r, err := kernels.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for sgs, want := range map[int]string{
		16: "shfl.sync.idx.b32 %0, %1, %2, 0x100f, tl_m;",
		32: "shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;",
	} {
		src, err := r.Source(tuning.Params{SubgroupSize: sgs, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{16, 4}, Unroll: 1, BatchPerGroup: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile([]byte(src), compiler.Options{Target: "nvidia"})
		if err != nil {
			t.Fatalf("subgroups of %d: %v", sgs, err)
		}
		if !strings.Contains(res.OpenCL, want) || strings.Count(res.OpenCL, "shfl.sync") != 1 {
			t.Errorf("subgroups of %d: want one shuffle helper with %q in\n%s", sgs, want, res.OpenCL)
		}
		if got := res.Kernels[0].Launch.SubgroupSize; got != sgs {
			t.Errorf("subgroups of %d: the kernel launches subgroups of %d", sgs, got)
		}
	}
}
