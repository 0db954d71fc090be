package spirv_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/emit/spirv/internal/spvtest"
	"tltune/compiler/tuning"
	"tltune/internal/golden"
	"tltune/kernels"
)

// TestGolden emits the kernels of testdata for the targets their attributes
// allow, validates them and compares the disassembly with testdata/NAME.TARGET.spvasm.
func TestGolden(t *testing.T) {
	for _, c := range []struct{ file, target string }{
		{"scale_rows.tl", "generic"},
		{"scale_rows.tl", "intel"},
		{"shuffle.tl", "intel"},
	} {
		t.Run(c.file+"/"+c.target, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			_, out := emit(t, string(src), c.target)
			text, err := spirv.Disassemble(out.Module)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", strings.TrimSuffix(c.file, ".tl")+"."+c.target+".spvasm"), []byte(text))
		})
	}
}

// TestDisassemblyReassembles checks the disassembler against spirv-as: the
// text of every golden module assembles back to the same instructions.
func TestDisassemblyReassembles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.spvasm")
	if len(files) == 0 {
		t.Fatal("no golden disassembly in testdata")
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		bin := spvtest.Assemble(t, string(text), "spv1.3")
		again, err := spirv.Disassemble(bin)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// spirv-as writes its own generator word; compare what follows.
		if body(again) != body(string(text)) {
			t.Errorf("%s: reassembled module disassembles differently:\n%s", file, again)
		}
	}
}

func body(text string) string {
	_, rest, _ := strings.Cut(text, "\n")
	return rest
}

// TestRecipesValidate emits GEMM, GEMV and GER for both targets over
// types, transpositions, atomics, layouts and configurations and validates
// every module; the generic ones also run on the device in the execution
// tests, the intel ones cannot run here.
func TestRecipesValidate(t *testing.T) {
	type cfg struct {
		target string
		p      tuning.Params
	}
	configs := []cfg{
		{"generic", tuning.Params{}},
		{"intel", tuning.Params{}},
		{"intel", tuning.Params{SubgroupSize: 8, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{8, 8, 4}, Unroll: 2, BatchPerGroup: 2, StageLocal: true}},
		{"intel", tuning.Params{SubgroupSize: 32, WorkGroupSize: [2]int{64, 1}, Tile: [2]int{32, 4}, Coopmatrix: [3]int{32, 4, 2}, Unroll: 1, BatchPerGroup: 1}},
	}
	types := [][2]kernels.DType{{kernels.F32, kernels.F32}, {kernels.F16, kernels.F32}, {kernels.F16, kernels.F16},
		{kernels.BF16, kernels.F32}, {kernels.F64, kernels.F64}, {kernels.C32, kernels.C32}}
	var specs []kernels.Spec
	for i, ty := range types {
		for op := kernels.GEMMOp; op <= kernels.GEROp; op++ {
			k := 0
			if op == kernels.GEMMOp {
				k = 17
			}
			specs = append(specs, kernels.Spec{Op: op, M: 24 - i, N: 9 + i, K: k, DType: ty[0], Acc: ty[1],
				TransA: i%2 == 1 && op != kernels.GEROp, TransB: i%3 == 1 && op == kernels.GEMMOp, Layout: []kernels.Layout{kernels.Strided, kernels.Group}[i%2],
				Alpha: 1.5, Beta: []complex128{0, 1}[i%2], Atomic: i >= 3})
		}
	}
	for _, c := range configs {
		for _, s := range specs {
			r, err := kernels.New(s)
			if err != nil {
				t.Fatal(err)
			}
			src, err := r.Source(c.p)
			if err != nil {
				continue // a configuration the recipe rejects for this shape
			}
			t.Run(c.target+"/"+r.Name(), func(t *testing.T) {
				_, out := emit(t, src, c.target)
				if !bytes.HasPrefix(out.Module, []byte{0x03, 0x02, 0x23, 0x07}) {
					t.Errorf("module does not start with the SPIR-V magic number")
				}
			})
		}
	}
}

// TestTargetsWithoutSPIRV: nvidia and emulated kernels are refused with
// one line naming the targets that work.
func TestTargetsWithoutSPIRV(t *testing.T) {
	src := "func @k(%x: memref<f32x8>) {\n}\n"
	for _, name := range []string{"nvidia", "emulated"} {
		res, err := compiler.Compile([]byte(src), compiler.Options{Target: name})
		if err != nil {
			t.Fatal(err)
		}
		_, err = spirv.Emit(res.Lowered, res.Target, launches(res))
		if err == nil || !strings.Contains(err.Error(), "use generic or intel") {
			t.Errorf("%s: error %v, want a refusal naming generic and intel", name, err)
		}
	}
}
