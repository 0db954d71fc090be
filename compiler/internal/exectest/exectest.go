// Package exectest is what the compiler's execution tests share, whichever
// form the kernel reaches the device in (OpenCL C in package compiler,
// SPIR-V in compiler/emit/spirv): the conventions of the differential test
// kernels and their comparison with the reference interpreter, and running
// a recipe and checking it against its float64 reference.
//
// It binds and launches nothing by hand: arguments go through
// compiler/hostcall (interpreter arguments by FromInterp, recipe inputs by
// tuner/bench.InputParams) and devcall.Run, the binder and runner of every
// host of compiled kernels, so the tests exercise the code `tltune run` and
// the tuner use. Only the build step is the caller's.
package exectest

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/check"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/device"
	"tltune/kernels"
	"tltune/tuner/bench"
)

// Conventions of the differential test kernels (compiler/testdata/exec):
// every "?" in a parameter's memref shape is the number of work-groups,
// Groups; float scalar parameters are 0.75, complex ones 0.5-0.25i, integer
// ones 2; groups hold Groups memrefs, and the dynamic sizes of memref j of
// a group are Groups + j.

// Groups is the number of logical work-groups a differential run launches.
const Groups = 3

// Source is one differential test kernel.
type Source struct {
	Name string // file name without .tl
	Src  []byte
}

// Sources reads every .tl file of dir, in name order; a folder without
// any fails the test (a glob that matches nothing must not pass).
func Sources(t testing.TB, dir string) []Source {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test kernels in %s: %v", dir, err)
	}
	out := make([]Source, len(files))
	for i, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = Source{strings.TrimSuffix(filepath.Base(file), ".tl"), src}
	}
	return out
}

// Parse reads and verifies a test kernel.
func Parse(t testing.TB, src []byte) *ir.Program {
	t.Helper()
	prog, errs := syntax.Parse(src)
	if len(errs) == 0 {
		errs = check.Program(prog, nil)
	}
	if len(errs) > 0 {
		t.Fatalf("test kernel does not verify:\n%v", errs)
	}
	return prog
}

// InterpOptions run f as kernel k was compiled: Groups logical work-groups
// with k's subgroup and work-group sizes.
func InterpOptions(k *compiler.Kernel) interp.Options {
	return interp.Options{Groups: Groups, SubgroupSize: k.SubgroupSize, WorkGroupSize: k.WorkGroupSize}
}

// Args makes f's arguments from a seeded stream: the same seed gives the
// same bytes.
func Args(f *ir.Func, seed uint64) []interp.Arg {
	r := rand.New(rand.NewPCG(seed, 42))
	args := make([]interp.Arg, len(f.Params))
	for i, p := range f.Params {
		switch t := p.Type; t.Kind() {
		case ir.KindMemref:
			args[i].Memref = randomMemref(t, r, Groups)
		case ir.KindGroup:
			args[i].Group = &interp.Group{}
			for j := range Groups {
				args[i].Group.Memrefs = append(args[i].Group.Memrefs, randomMemref(t.Elem(), r, Groups+j))
			}
		default:
			args[i] = interp.Arg{Int: 2, Float: 0.75, Complex: complex(0.5, -0.25)}
		}
	}
	return args
}

// randomMemref makes a packed memref of type t whose dynamic sizes are dyn,
// with values from r: integers in [0, 10), reals and both complex parts in
// [-1, 1).
func randomMemref(t *ir.Type, r *rand.Rand, dyn int) *interp.Memref {
	shape := append([]int64{}, t.Shape()...)
	for i, s := range shape {
		if s == ir.Dynamic {
			shape[i] = int64(dyn)
		}
	}
	m := interp.NewMemref(t.Elem(), shape...)
	for i := range m.Buf.Len() {
		switch e := t.Elem(); {
		case e.IsInteger():
			m.Buf.SetInt(i, r.Int64N(10))
		case e.IsComplex():
			m.Buf.SetComplex(i, complex(2*r.Float64()-1, 2*r.Float64()-1))
		default:
			m.Buf.SetFloat(i, 2*r.Float64()-1)
		}
	}
	return m
}

// Interpret runs f on the reference interpreter as kernel k was compiled,
// from the arguments of seed 1, and returns them afterwards.
func Interpret(f *ir.Func, k *compiler.Kernel) ([]interp.Arg, error) {
	args := Args(f, 1)
	return args, interp.Run(f, args, InterpOptions(k))
}

// Build builds the kernel called symbol in the program on a device and returns it with a function that
// releases it: devcall.Build of OpenCL C, or a build of a SPIR-V module.
type Build func(symbol string) (device.Kernel, func(), error)

// Run builds c's kernel with build and performs c on d (devcall.Run).
func Run(d device.Device, build Build, c *hostcall.Call) error {
	kern, release, err := build(c.Kernel.Symbol)
	if err != nil {
		return err
	}
	defer release()
	return devcall.Run(d, kern, c)
}

// RunArgs runs kernel k on d over Groups logical work-groups with args
// bound by the ABI, and copies every result back into args.
func RunArgs(d device.Device, build Build, k *compiler.Kernel, args []interp.Arg) error {
	x, err := hostcall.FromInterp(args)
	if err != nil {
		return err
	}
	call, err := hostcall.Bind(k, x.Params, Groups)
	if err != nil {
		return err
	}
	if err := Run(d, build, call); err != nil {
		return err
	}
	x.CopyBack()
	return nil
}

// Compare compares every memref argument of got, after a run of f, with
// want, the interpreter's, and names what ran in each difference.
func Compare(t testing.TB, what string, f *ir.Func, want, got []interp.Arg) {
	t.Helper()
	for i, p := range f.Params {
		gs := memrefsOf(got[i])
		for j, w := range memrefsOf(want[i]) {
			if msg := diffBuffers(w.Buf, gs[j].Buf); msg != "" {
				t.Errorf("%s: @%s %%%s differs from the interpreter: %s", what, f.Name, p.Name, msg)
			}
		}
	}
}

// memrefsOf are the memrefs of an argument: none for a scalar, one for a
// memref, every member of a group.
func memrefsOf(a interp.Arg) []*interp.Memref {
	switch {
	case a.Group != nil:
		return a.Group.Memrefs
	case a.Memref != nil:
		return []*interp.Memref{a.Memref}
	}
	return nil
}

// diffBuffers compares element by element: integers exactly, floating
// types within a tolerance of their precision relative to max(1, |want|);
// a NaN matches only a NaN.
func diffBuffers(want, got *interp.Buffer) string {
	e := want.Elem
	tol := map[ir.Kind]float64{ir.KindF16: 2e-3, ir.KindBF16: 2e-2, ir.KindF32: 2e-5, ir.KindC32: 2e-5}[e.Kind()]
	if tol == 0 {
		tol = 1e-12
	}
	for i := range want.Len() {
		if e.IsInteger() {
			if w, g := want.Int(i), got.Int(i); w != g {
				return fmt.Sprintf("element %d: got %d, want %d", i, g, w)
			}
			continue
		}
		w, g := want.Complex(i), got.Complex(i)
		if e.IsFloat() {
			w, g = complex(want.Float(i), 0), complex(got.Float(i), 0)
		}
		if cmplx.IsNaN(g) != cmplx.IsNaN(w) || cmplx.Abs(w-g) > tol*math.Max(1, cmplx.Abs(w)) {
			return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
		}
	}
	return ""
}

// NewRecipe returns the recipe of s, with the strided layout unless s
// names one.
func NewRecipe(t testing.TB, s kernels.Spec) kernels.Recipe {
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

// CheckRecipe draws r's inputs (seed 7) for batch entries, has run execute
// them in place and checks the output against r's float64 reference. label
// names the configuration in failures.
func CheckRecipe(t testing.TB, r kernels.Recipe, batch int, label string, run func(*kernels.Inputs) error) {
	t.Helper()
	in, err := r.Inputs(7, batch)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Reference(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(in); err != nil {
		t.Fatalf("%s %s: %v", r.Name(), label, Detail(err))
	}
	v, err := want.Check(in.Output())
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK {
		t.Errorf("%s %s: %v", r.Name(), label, v)
	}
}

// RunInputs runs kernel k on d over in.Batch logical work-groups with in
// bound as a recipe's arguments, and reads the results back into in.
func RunInputs(d device.Device, build Build, k *compiler.Kernel, in *kernels.Inputs) error {
	call, err := hostcall.Bind(k, bench.InputParams(in), int64(in.Batch))
	if err != nil {
		return err
	}
	return Run(d, build, call)
}

// Detail is err with the driver's build log when it has one.
func Detail(err error) string {
	var be *device.BuildError
	if errors.As(err, &be) {
		return err.Error() + "\n" + be.Log
	}
	return err.Error()
}
