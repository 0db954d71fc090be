package spirv_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/emit/spirv/internal/spvtest"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/devtest"
	"tltune/kernels"
)

// The execution tests compile recipes of kernels/ for the generic target,
// emit SPIR-V, validate it, convert it to SPIR bitcode with llvm-spirv-15
// and run it on the default OpenCL device through cl_khr_spir (PoCL 3.1 in
// CI), then check the results against the recipes' float64 references.

// openDevice opens opencl:0, or skips where it takes neither SPIR-V nor
// SPIR; where it is missing the test fails in CI and is skipped elsewhere
// (internal/devtest).
func openDevice(t *testing.T) device.Device {
	t.Helper()
	d := devtest.OpenCL(t)
	if !d.Info().HasExtension("cl_khr_spir") && !d.Info().AcceptsSPIRV() {
		t.Skipf("%s takes neither SPIR-V nor SPIR", d.Info().Name)
	}
	return d
}

// emit compiles src for target and emits (and validates) its SPIR-V.
func emit(t *testing.T, src string, target string) (*compiler.Result, *spirv.Output) {
	t.Helper()
	return emitWith(t, src, target, spirv.Options{})
}

func emitWith(t *testing.T, src string, target string, o spirv.Options) (*compiler.Result, *spirv.Output) {
	t.Helper()
	return emitFor(t, src, compiler.Options{Target: target}, o)
}

// emitFor is emitWith for the target or device copts names.
func emitFor(t *testing.T, src string, copts compiler.Options, o spirv.Options) (*compiler.Result, *spirv.Output) {
	t.Helper()
	res, err := compiler.Compile([]byte(src), copts)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, src)
	}
	launch := map[*ir.Func]opencl.Launch{}
	for i, f := range res.Lowered.Funcs {
		launch[f] = res.Kernels[i].Launch
	}
	out, err := spirv.EmitWith(res.Lowered, res.Target, launch, o)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	if spirDir == "" || spvtest.Available("spirv-val") {
		// (A machine with the device but without SPIRV-Tools runs the
		// modules validated where their bitcode in spirDir was made.)
		spvtest.Validate(t, out.Module, out.Env)
	}
	return res, out
}

// fromModule builds kernels of a SPIR-V module: from SPIR-V where the device
// lists the IL, else from SPIR bitcode.
func fromModule(d device.Device, m []byte) exectest.Build {
	return func(name string) (device.Kernel, func(), error) {
		prog, err := buildProgram(d, m)
		if err != nil {
			return nil, nil, err
		}
		return devcall.KernelOf(prog, name)
	}
}

func buildProgram(d device.Device, m []byte) (device.Program, error) {
	if d.Info().AcceptsSPIRV() {
		return d.BuildSPIRV(m, "")
	}
	bc, err := bitcode(m)
	if err != nil {
		return nil, err
	}
	return d.BuildSPIR(bc, "")
}

// spirDir, when set, is a folder of SPIR bitcode named by the SHA-256 of
// the SPIR-V module it was converted from: bitcode converted on a machine
// with llvm-spirv-15 serves a machine without it (the GPU machine's PoCL 5,
// which runs the intel target through cl_khr_spir).
var spirDir = os.Getenv("TLTUNE_SPIR_DIR")

// bitcode converts module to SPIR bitcode, through spirDir when set.
func bitcode(module []byte) ([]byte, error) {
	return spirBitcode(module, "", func() []byte { return module })
}

// spirBitcode is the SPIR bitcode of the module spirv makes from module
// (module itself, or it linked with more): read from spirDir when set and
// holding it, named by module's hash and kind, else converted here and
// stored there.
func spirBitcode(module []byte, kind string, spirv func() []byte) ([]byte, error) {
	if spirDir == "" {
		return device.SPIRVToBitcode(spirv())
	}
	path := filepath.Join(spirDir, fmt.Sprintf("%x%s.bc", sha256.Sum256(module), kind))
	if bc, err := os.ReadFile(path); err == nil {
		return bc, nil
	}
	bc, err := device.SPIRVToBitcode(spirv())
	if err != nil {
		return nil, err
	}
	return bc, os.WriteFile(path, bc, 0o644)
}

// runRecipe compiles for the generic target, emits, runs and verifies one
// recipe configuration.
func runRecipe(t *testing.T, d device.Device, s kernels.Spec, p tuning.Params, batch int) {
	t.Helper()
	runRecipeOn(t, d, "generic", spirv.Options{}, s, p, batch)
}

func runRecipeOn(t *testing.T, d device.Device, target string, o spirv.Options, s kernels.Spec, p tuning.Params, batch int) {
	t.Helper()
	r := exectest.NewRecipe(t, s)
	src, err := r.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	_, out := emitWith(t, src, target, o)
	if d == nil {
		prepare(t, out.Module)
		return
	}
	k := &out.Kernels[0]
	exectest.CheckRecipe(t, r, batch, fmt.Sprintf("%v [%+v]", p, k.Launch), func(in *kernels.Inputs) error {
		return exectest.RunInputs(d, fromModule(d, out.Module), k, in)
	})
}
