package compiler_test

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The execution tests compile recipes from kernels/ for the generic target,
// run them on the default OpenCL device (PoCL in CI) and compare with the
// recipes' float64 host references.

var (
	devOnce sync.Once
	dev     device.Device
	devErr  error
)

// The execution tests run on opencl:0 (PoCL in CI) for the generic target.
// On a GPU machine TLTUNE_TEST_DEVICE names another device (any --device
// spec), and TLTUNE_TEST_TARGET=device compiles for the target the device's
// properties choose: that is how the intel target runs on PoCL 5 (which has
// cl_intel_subgroups) and the nvidia target on an NVIDIA GPU, through the
// same comparisons. Configurations written for subgroups of one work-item
// are then left to the compiler.

// openDevice returns the shared OpenCL device. Without an OpenCL runtime
// the test is skipped with the reason; any other failure fails it.
func openDevice(t *testing.T) device.Device {
	t.Helper()
	devOnce.Do(func() { dev, devErr = device.Open(cmp.Or(os.Getenv("TLTUNE_TEST_DEVICE"), "opencl:0")) })
	if errors.Is(devErr, device.ErrRuntimeMissing) {
		t.Skipf("no OpenCL runtime: %v", devErr)
	}
	if devErr != nil {
		t.Fatalf("open OpenCL device: %v", devErr)
	}
	return dev
}

// execute builds src on d, binds kernel k's arguments with bind, runs
// groups logical work-groups and waits for them.
func execute(d device.Device, src string, k *compiler.Kernel, groups int64, bind func(compiler.Arg) (device.Arg, error)) error {
	prog, err := d.BuildSource(src, "")
	if err != nil {
		return err
	}
	defer prog.Release()
	kern, err := prog.Kernel(k.Name)
	if err != nil {
		return err
	}
	defer kern.Release()
	var args []device.Arg
	for _, a := range k.Args {
		arg, err := bind(a)
		if err != nil {
			return err
		}
		args = append(args, arg)
	}
	if err := kern.SetArgs(args...); err != nil {
		return err
	}
	g, l := k.GlobalSize(groups), k.LocalSize()
	ev, err := kern.Launch([]int{int(g[0]), int(g[1])}, []int{int(l[0]), int(l[1])})
	if err != nil {
		return err
	}
	defer ev.Release()
	return ev.Wait()
}

// launch binds in to kernel k of res following the ABI, runs in.Batch
// logical work-groups and reads the output back into in.Output().
func launch(d device.Device, res *compiler.Result, k *compiler.Kernel, in *kernels.Inputs) error {
	bufs := map[int]device.Buffer{}
	defer func() {
		for _, b := range bufs {
			b.Release()
		}
	}()
	upload := func(key int, data []byte) (device.Buffer, error) {
		if b, ok := bufs[key]; ok {
			return b, nil
		}
		b, err := d.Alloc(int64(max(len(data), 8)))
		if err == nil {
			bufs[key] = b
			err = b.Write(data)
		}
		return b, err
	}
	bind := func(a compiler.Arg) (device.Arg, error) { return bindArg(a, in, upload) }
	if err := execute(d, res.OpenCL, k, int64(in.Batch), bind); err != nil {
		return err
	}
	return bufs[len(in.Args)-1].Read(in.Output().Data)
}

// groupOffsetsKey keys the offsets buffer of parameter p in the upload cache.
func groupOffsetsKey(p int) int { return 1000 + p }

func bindArg(a compiler.Arg, in *kernels.Inputs, upload func(int, []byte) (device.Buffer, error)) (device.Arg, error) {
	if a.Role == opencl.RoleGroups {
		return device.I64(int64(in.Batch)), nil
	}
	buf := in.Args[a.Param]
	full := append(append([]int{}, buf.Shape...), in.Batch) // strided layout: batch is the last mode
	switch a.Role {
	case opencl.RoleData, opencl.RoleGroupBase:
		b, err := upload(a.Param, buf.Data)
		return device.Buf(b), err
	case opencl.RoleShape:
		return device.I64(int64(full[a.Mode])), nil
	case opencl.RoleStride:
		s := 1
		for _, n := range full[:a.Mode] {
			s *= n
		}
		return device.I64(int64(s)), nil
	case opencl.RoleGroupOffset:
		offs := make([]int64, in.Batch)
		for e := range offs {
			offs[e] = int64(e * buf.EntryElements())
		}
		b, err := upload(groupOffsetsKey(a.Param), device.Bytes(offs))
		return device.Buf(b), err
	case opencl.RoleGroupSize:
		return device.I64(int64(in.Batch)), nil
	case opencl.RoleGroupElemOf:
		return device.I64(0), nil
	}
	return device.Arg{}, fmt.Errorf("argument %s (%s) has no value in a recipe", a.Name, a.Role)
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
	src, err := r.Source(c.params)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(d)
	if c.target != "" {
		opts = compiler.Options{Target: c.target}
	}
	if targetName(opts) != "generic" && c.params.SubgroupSize == 1 {
		if src, err = r.Source(tuning.Params{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Compile([]byte(src), opts)
	if err != nil {
		t.Fatalf("%s: %v\n%s", r.Name(), err, src)
	}
	in, err := r.Inputs(7, c.batch)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Reference(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := launch(d, res, &res.Kernels[0], in); err != nil {
		t.Fatalf("%s %v: %v", r.Name(), c.params, err)
	}
	v, err := want.Check(in.Output())
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK {
		t.Errorf("%s [%v]: %v", r.Name(), res.Kernels[0].Launch, v)
	}
}

// newRecipe returns the recipe of s, with the strided layout unless s
// names one.
func newRecipe(t *testing.T, s kernels.Spec) kernels.Recipe {
	t.Helper()
	if s.Layout == 0 {
		s.Layout = kernels.Strided
	}
	r, err := kernels.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
