package compiler_test

import (
	"cmp"
	"fmt"
	"os"
	"testing"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/devtest"
	"tltune/kernels"
)

// The execution tests compile recipes from kernels/ and the differential
// test kernels for the generic target, run them on opencl:0 (PoCL in CI) and
// compare with the recipes' float64 host references and the reference
// interpreter (compiler/internal/exectest). On a GPU machine TLTUNE_TEST_DEVICE names another device (any --device
// spec), and TLTUNE_TEST_TARGET=device compiles for the target the device's
// properties choose: that is how the intel target runs on PoCL 5 (which has
// cl_intel_subgroups) and the nvidia target on an NVIDIA GPU, through the
// same comparisons. Configurations written for subgroups of one work-item
// are then left to the compiler.

// openDevice opens the device of the execution tests; where it is missing
// the test fails in CI and is skipped elsewhere (internal/devtest).
func openDevice(t *testing.T) device.Device {
	t.Helper()
	return devtest.Open(t, cmp.Or(os.Getenv("TLTUNE_TEST_DEVICE"), "opencl:0"))
}

// openCL builds kernels from the OpenCL C of res.
func openCL(d device.Device, res *compiler.Result) exectest.Build {
	return func(name string) (device.Kernel, func(), error) { return devcall.Build(d, res.OpenCL, name) }
}

// testOptions are the compiler options of the execution tests on d: the
// generic target, or with TLTUNE_TEST_TARGET=device the options for d.
func testOptions(d device.Device) compiler.Options {
	if os.Getenv("TLTUNE_TEST_TARGET") != "device" {
		return compiler.Options{Target: "generic"}
	}
	return deviceOptions(d.Info())
}

// deviceOptions compile for the device itself, not for the name of the
// profile it selects: the profile is then narrowed to what the device
// has (cl_khr_fp16, subgroup sizes, local memory), as `tltune run` does.
// PoCL 5 selects intel but has no cl_khr_fp16, so the intel profile by
// name would declare half variables it cannot compile.
func deviceOptions(info device.Info) compiler.Options {
	return compiler.Options{Device: devcall.TargetDevice(info)}
}

// targetName is the profile o compiles for.
func targetName(o compiler.Options) string {
	if o.Target != "" {
		return o.Target
	}
	return target.ForDevice(*o.Device).Name
}

// recipeCase is one recipe run: a spec, a configuration (zero fields:
// compiler's choice) and a batch size.
type recipeCase struct {
	spec   kernels.Spec
	params tuning.Params
	batch  int
	target string // "" means testOptions
}

// runRecipe compiles, runs and verifies one case.
func runRecipe(t *testing.T, d device.Device, c recipeCase) {
	t.Helper()
	r := newRecipe(t, c.spec)
	opts := testOptions(d)
	if c.target != "" {
		opts = compiler.Options{Target: c.target}
	}
	p := c.params
	if targetName(opts) != "generic" && p.SubgroupSize == 1 {
		p = tuning.Params{}
	}
	res := compileRecipe(t, r, p, opts)
	k := &res.Kernels[0]
	exectest.CheckRecipe(t, r, c.batch, fmt.Sprintf("%v [%v]", c.params, k.Launch), func(in *kernels.Inputs) error {
		return exectest.RunInputs(d, openCL(d, res), k, in)
	})
}

// compileRecipe compiles r's source for configuration p with opts.
func compileRecipe(t *testing.T, r kernels.Recipe, p tuning.Params, opts compiler.Options) *compiler.Result {
	t.Helper()
	src, err := r.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile([]byte(src), opts)
	if err != nil {
		t.Fatalf("%s: %v\n%s", r.Name(), err, src)
	}
	return res
}

// newRecipe returns the recipe of s, with the strided layout unless s
// names one.
func newRecipe(t *testing.T, s kernels.Spec) kernels.Recipe { return exectest.NewRecipe(t, s) }
