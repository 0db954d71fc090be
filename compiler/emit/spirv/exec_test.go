package spirv_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/emit/spirv/internal/spvtest"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The execution tests compile recipes of kernels/ for the generic target,
// emit SPIR-V, validate it, convert it to SPIR bitcode with llvm-spirv-15
// and run it on the default OpenCL device through cl_khr_spir (PoCL 3.1 in
// CI), then check the results against the recipes' float64 references.

var (
	devOnce sync.Once
	dev     device.Device
	devErr  error
)

func openDevice(t *testing.T) device.Device {
	t.Helper()
	devOnce.Do(func() { dev, devErr = device.Open("opencl:0") })
	if errors.Is(devErr, device.ErrRuntimeMissing) {
		t.Skipf("no OpenCL runtime: %v", devErr)
	}
	if devErr != nil {
		t.Fatalf("open OpenCL device: %v", devErr)
	}
	if !dev.Info().HasExtension("cl_khr_spir") && !dev.Info().AcceptsSPIRV() {
		t.Skipf("%s takes neither SPIR-V nor SPIR", dev.Info().Name)
	}
	return dev
}

// emit compiles src for target and emits (and validates) its SPIR-V.
func emit(t *testing.T, src string, target string) (*compiler.Result, *spirv.Output) {
	t.Helper()
	return emitWith(t, src, target, spirv.Options{})
}

func emitWith(t *testing.T, src string, target string, o spirv.Options) (*compiler.Result, *spirv.Output) {
	t.Helper()
	return emitBatched(t, src, target, o, 0)
}

// emitBatched is emitWith where batch > 0 replaces the compiler's number of
// logical work-groups per work-group (the lowered code does not depend on
// it: the emitter wraps the body in the batch loop).
func emitBatched(t *testing.T, src string, target string, o spirv.Options, batch int) (*compiler.Result, *spirv.Output) {
	t.Helper()
	res, err := compiler.Compile([]byte(src), compiler.Options{Target: target})
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, src)
	}
	launch := map[*ir.Func]opencl.Launch{}
	for i, f := range res.Lowered.Funcs {
		if batch > 0 {
			res.Kernels[i].BatchPerGroup = batch
		}
		launch[f] = res.Kernels[i].Launch
	}
	out, err := spirv.EmitWith(res.Lowered, res.Target, launch, o)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	spvtest.Validate(t, out.Module, out.Env)
	return res, out
}

// build makes a program of module: from SPIR-V where the device lists the
// IL, else from SPIR bitcode.
func build(d device.Device, module []byte) (device.Program, error) {
	if d.Info().AcceptsSPIRV() {
		return d.BuildSPIRV(module, "")
	}
	bc, err := bitcode(module)
	if err != nil {
		return nil, err
	}
	return d.BuildSPIR(bc, "")
}

// detail is err with the build log when it has one.
func detail(err error) string {
	var be *device.BuildError
	if errors.As(err, &be) {
		return err.Error() + "\n" + be.Log
	}
	return err.Error()
}

// spirDir, when set, is a folder of SPIR bitcode named by the SHA-256 of
// the SPIR-V module it was converted from: bitcode converted on a machine
// with llvm-spirv-15 serves a machine without it (the GPU machine's PoCL 5,
// which runs the intel target through cl_khr_spir).
var spirDir = os.Getenv("TLTUNE_SPIR_DIR")

// bitcode converts module to SPIR bitcode, through spirDir when set.
func bitcode(module []byte) ([]byte, error) {
	if spirDir == "" {
		return device.SPIRVToBitcode(module)
	}
	path := filepath.Join(spirDir, fmt.Sprintf("%x.bc", sha256.Sum256(module)))
	if bc, err := os.ReadFile(path); err == nil {
		return bc, nil
	}
	bc, err := device.SPIRVToBitcode(module)
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
	r, err := kernels.New(s)
	if err != nil {
		t.Fatal(err)
	}
	src, err := r.Source(p)
	if err != nil {
		t.Fatal(err)
	}
	_, out := emitWith(t, src, target, o)
	if d == nil {
		prepare(t, out.Module)
		return
	}
	in, err := r.Inputs(7, batch)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Reference(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := launchRecipe(d, out.Module, &out.Kernels[0], in); err != nil {
		t.Fatalf("%s %v: %v", r.Name(), p, detail(err))
	}
	v, err := want.Check(in.Output())
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK {
		t.Errorf("%s [%+v]: %v", r.Name(), out.Kernels[0].Launch, v)
	}
}

// launchRecipe runs kernel k of module over in.Batch logical work-groups
// and reads the output back into in.Output().
func launchRecipe(d device.Device, module []byte, k *opencl.Kernel, in *kernels.Inputs) error {
	h := &hostArgs{d: d, in: in, bufs: map[string]device.Buffer{}}
	defer h.release()
	if err := run(d, module, k, int64(in.Batch), h.arg); err != nil {
		return err
	}
	return h.bufs[fmt.Sprint("data", len(in.Args)-1)].Read(in.Output().Data)
}

// run builds module, binds kernel k's arguments through bind, launches
// groups logical work-groups and waits for them.
func run(d device.Device, module []byte, k *opencl.Kernel, groups int64, bind func(opencl.Arg) (device.Arg, error)) error {
	prog, err := build(d, module)
	if err != nil {
		return err
	}
	defer prog.Release()
	kern, err := prog.Kernel(k.Name)
	if err != nil {
		return err
	}
	defer kern.Release()
	args := make([]device.Arg, len(k.Args))
	for i, a := range k.Args {
		if args[i], err = bind(a); err != nil {
			return err
		}
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

// hostArgs turns ABI arguments into device arguments for a recipe: memref
// parameters are batched tensors whose last mode is the batch, groups are
// packed back to back.
type hostArgs struct {
	d    device.Device
	in   *kernels.Inputs
	bufs map[string]device.Buffer
}

func (h *hostArgs) release() {
	for _, b := range h.bufs {
		b.Release()
	}
}

// buffer uploads data once under key.
func (h *hostArgs) buffer(key string, data []byte) (device.Arg, error) {
	if b, ok := h.bufs[key]; ok {
		return device.Buf(b), nil
	}
	b, err := h.d.Alloc(int64(max(len(data), 8)))
	if err != nil {
		return device.Arg{}, err
	}
	h.bufs[key] = b
	return device.Buf(b), b.Write(data)
}

func (h *hostArgs) arg(a opencl.Arg) (device.Arg, error) {
	if a.Role == opencl.RoleGroups {
		return device.I64(int64(h.in.Batch)), nil
	}
	b := h.in.Args[a.Param]
	dims := append(append([]int{}, b.Shape...), h.in.Batch)
	switch a.Role {
	case opencl.RoleData, opencl.RoleGroupBase:
		return h.buffer(fmt.Sprint("data", a.Param), b.Data)
	case opencl.RoleShape:
		return device.I64(int64(dims[a.Mode])), nil
	case opencl.RoleStride:
		stride := 1
		for _, n := range dims[:a.Mode] {
			stride *= n
		}
		return device.I64(int64(stride)), nil
	case opencl.RoleGroupOffset:
		offsets := make([]int64, h.in.Batch)
		for i := range offsets {
			offsets[i] = int64(i * b.EntryElements())
		}
		return h.buffer(fmt.Sprint("offsets", a.Param), device.Bytes(offsets))
	case opencl.RoleGroupSize:
		return device.I64(int64(h.in.Batch)), nil
	case opencl.RoleGroupElemOf:
		return device.I64(0), nil
	}
	return device.Arg{}, fmt.Errorf("argument %d (%s) has no value in a recipe", a.Param, a.Role)
}
