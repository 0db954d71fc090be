package compiler_test

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
	"tltune/compiler/emit/opencl"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/kernels"
)

// The differential tests run every kernel of testdata/exec three ways —
// the reference interpreter on the source, the interpreter on the lowered
// program, and the OpenCL C on the device — from the same seeded inputs, and
// compare every memref argument afterwards.
//
// Conventions of the test kernels: every "?" in a parameter's memref shape
// is the number of work-groups (diffGroups); float scalar parameters are
// 0.75, complex ones 0.5-0.25i, integer ones 2; groups hold diffGroups
// memrefs, and the dynamic sizes of memref j of a group are diffGroups + j.

const diffGroups = 3

func TestDifferentialOnDevice(t *testing.T) {
	d := openDevice(t)
	files, err := filepath.Glob("testdata/exec/*.tl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test kernels: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".tl"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			diffKernel(t, d, src, testOptions(d))
		})
	}
}

// parse reads and verifies a test kernel.
func parse(t *testing.T, src []byte) *ir.Program {
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

// TestLoweringForSubgroups interprets the program lowered for the intel
// and nvidia targets (subgroups of 16 and 32 lanes) and compares it with the
// source: the tile distribution and the cooperative matrices of the
// lowering are checked here at the IR level, where no GPU is needed.
func TestLoweringForSubgroups(t *testing.T) {
	files, err := filepath.Glob("testdata/exec/*.tl")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sources[strings.TrimSuffix(filepath.Base(file), ".tl")] = src
	}
	for name, src := range recipeSources(t) {
		sources[name] = src
	}
	for name, src := range sources {
		for _, tgt := range []string{"intel", "nvidia"} {
			t.Run(tgt+"/"+name, func(t *testing.T) {
				res, err := compiler.Compile(src, compiler.Options{Target: tgt})
				var cerr *compiler.Error
				if errors.As(err, &cerr) && len(cerr.Diags) > 0 {
					// The source is valid (the device test verifies it),
					// so these are the target's limits.
					t.Skipf("kernel attributes exceed what %s supports: %v", tgt, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				source := parse(t, src)
				for fi, f := range source.Funcs {
					k := &res.Kernels[fi]
					opts := interp.Options{Groups: diffGroups, SubgroupSize: k.SubgroupSize, WorkGroupSize: k.WorkGroupSize}
					want, got := newArgs(f, 1), newArgs(f, 1)
					if err := interp.Run(f, want.interp, opts); err != nil {
						t.Fatalf("interpreter on the source: %v", err)
					}
					if err := interp.Run(res.Lowered.Funcs[fi], got.interp, opts); err != nil {
						t.Fatalf("interpreter on the lowered program: %v", err)
					}
					compareArgs(t, "lowered for "+tgt, f, want, got)
				}
			})
		}
	}
}

// recipeSources are GEMM and gemv.t kernels from kernels/ with
// configurations for subgroups of 16 and 32 lanes (ragged shapes, staging,
// unroll, batches, several subgroups per work-group).
func recipeSources(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for i, c := range []struct {
		spec kernels.Spec
		p    tuning.Params
	}{
		{kernels.Spec{Op: kernels.GEMMOp, M: 37, N: 19, K: 21, DType: kernels.F16, Acc: kernels.F32, TransB: true, Alpha: 1, Beta: 1},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 20, N: 5, K: 56, DType: kernels.F32, Acc: kernels.F32, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{32, 2}, Tile: [2]int{32, 8}, Coopmatrix: [3]int{16, 4, 8}, Unroll: 2, BatchPerGroup: 2, StageLocal: true}},
		{kernels.Spec{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 2, Beta: 0, Atomic: true},
			tuning.Params{Unroll: 3}},
		// Several subgroups per work-group: tiles and results past the
		// edge are masked, not skipped (uniform loops).
		{kernels.Spec{Op: kernels.GEMVOp, M: 53, N: 23, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1, Beta: 0},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 7, N: 33, K: 3, DType: kernels.F32, Acc: kernels.F32, Alpha: 1, Beta: 0},
			tuning.Params{}},
		{kernels.Spec{Op: kernels.GEMMOp, M: 53, N: 23, K: 56, DType: kernels.F64, Acc: kernels.F64, TransA: true, Alpha: 1.5, Beta: 0.5},
			tuning.Params{WorkGroupSize: [2]int{64, 2}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 4}, Unroll: 2, BatchPerGroup: 1}},
	} {
		src, err := newRecipe(t, c.spec).Source(c.p)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("recipe%d", i)] = []byte(src)
	}
	return out
}

func diffKernel(t *testing.T, d device.Device, src []byte, opts compiler.Options) {
	res, err := compiler.Compile(src, opts)
	var cerr *compiler.Error
	if tgt := targetName(opts); tgt != "generic" && errors.As(err, &cerr) && len(cerr.Diags) > 0 {
		t.Skipf("kernel attributes exceed what %s supports: %v", tgt, err)
	}
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	source := parse(t, src)
	for fi, f := range source.Funcs {
		k := &res.Kernels[fi]
		opts := interp.Options{Groups: diffGroups, SubgroupSize: k.SubgroupSize, WorkGroupSize: k.WorkGroupSize}
		want := newArgs(f, 1)
		if err := interp.Run(f, want.interp, opts); err != nil {
			t.Fatalf("interpreter on the source: %v", err)
		}
		lowered := newArgs(f, 1)
		if err := interp.Run(res.Lowered.Funcs[fi], lowered.interp, opts); err != nil {
			t.Fatalf("interpreter on the lowered program: %v", err)
		}
		compareArgs(t, "lowered program (interpreter)", f, want, lowered)
		got := newArgs(f, 1)
		if err := got.runOnDevice(d, res.OpenCL, k); err != nil {
			t.Fatalf("device: %v\n%s", err, res.OpenCL)
		}
		compareArgs(t, "OpenCL C on "+d.Info().Name, f, want, got)
	}
}

// diffArgs are the arguments of one run: interpreter values and the
// buffers behind them (for groups, one buffer per memref, packed into one
// device buffer by the ABI).
type diffArgs struct {
	interp []interp.Arg
}

// newArgs makes f's arguments from a seeded stream: the same seed gives
// the same bytes.
func newArgs(f *ir.Func, seed uint64) *diffArgs {
	r := rand.New(rand.NewPCG(seed, 42))
	a := &diffArgs{}
	for _, p := range f.Params {
		var v interp.Arg
		switch t := p.Type; t.Kind() {
		case ir.KindMemref:
			v.Memref = randomMemref(t, r, diffGroups)
		case ir.KindGroup:
			v.Group = &interp.Group{}
			for j := range diffGroups {
				v.Group.Memrefs = append(v.Group.Memrefs, randomMemref(t.Elem(), r, diffGroups+j))
			}
		default:
			v.Int, v.Float, v.Complex = 2, 0.75, complex(0.5, -0.25)
		}
		a.interp = append(a.interp, v)
	}
	return a
}

// randomMemref makes a memref of type t whose dynamic sizes are dyn.
func randomMemref(t *ir.Type, r *rand.Rand, dyn int) *interp.Memref {
	shape := make([]int64, t.Order())
	for i, s := range t.Shape() {
		shape[i] = s
		if s == ir.Dynamic {
			shape[i] = int64(dyn)
		}
	}
	m := interp.NewMemref(t.Elem(), shape...)
	b := m.Buf
	for i := range b.Len() {
		switch e := t.Elem(); {
		case e.IsInteger():
			b.SetInt(i, r.Int64N(10))
		case e.IsComplex():
			b.SetComplex(i, complex(2*r.Float64()-1, 2*r.Float64()-1))
		default:
			b.SetFloat(i, 2*r.Float64()-1)
		}
	}
	return m
}

// runOnDevice binds the arguments following the kernel's ABI, launches
// diffGroups logical work-groups and reads every buffer back.
func (a *diffArgs) runOnDevice(d device.Device, src string, k *compiler.Kernel) error {
	type binding struct {
		buf  device.Buffer
		back func([]byte) // nil: nothing to read back
		size int
	}
	var bound []binding
	defer func() {
		for _, b := range bound {
			b.buf.Release()
		}
	}()
	upload := func(data []byte, back func([]byte)) (device.Arg, error) {
		buf, err := d.Alloc(int64(max(len(data), 8)))
		if err != nil {
			return device.Arg{}, err
		}
		bound = append(bound, binding{buf, back, len(data)})
		return device.Buf(buf), buf.Write(data)
	}
	bind := func(ka compiler.Arg) (device.Arg, error) { return a.bind(ka, upload) }
	if err := execute(d, src, k, diffGroups, bind); err != nil {
		return err
	}
	for _, b := range bound {
		if b.back == nil {
			continue
		}
		tmp := make([]byte, b.size)
		if err := b.buf.Read(tmp); err != nil {
			return err
		}
		b.back(tmp)
	}
	return nil
}

func (a *diffArgs) bind(ka compiler.Arg, upload func([]byte, func([]byte)) (device.Arg, error)) (device.Arg, error) {
	if ka.Role == opencl.RoleGroups {
		return device.I64(diffGroups), nil
	}
	v := a.interp[ka.Param]
	switch ka.Role {
	case opencl.RoleScalar:
		return scalarArg(ka.CType, v)
	case opencl.RoleData:
		return upload(v.Memref.Buf.Data, func(b []byte) { copy(v.Memref.Buf.Data, b) })
	case opencl.RoleShape:
		return device.I64(v.Memref.Shape[ka.Mode]), nil
	case opencl.RoleStride:
		return device.I64(v.Memref.Stride[ka.Mode]), nil
	case opencl.RoleGroupBase:
		var packed []byte
		for _, m := range v.Group.Memrefs {
			packed = append(packed, m.Buf.Data...)
		}
		return upload(packed, func(b []byte) {
			for _, m := range v.Group.Memrefs {
				b = b[copy(m.Buf.Data, b):]
			}
		})
	case opencl.RoleGroupOffset:
		var offs []int64
		n := int64(0)
		for _, m := range v.Group.Memrefs {
			offs = append(offs, n)
			n += int64(m.Buf.Len())
		}
		return upload(device.Bytes(offs), nil)
	case opencl.RoleGroupShape, opencl.RoleGroupStride:
		var per []int64
		for _, m := range v.Group.Memrefs {
			if ka.Role == opencl.RoleGroupShape {
				per = append(per, m.Shape[ka.Mode])
			} else {
				per = append(per, m.Stride[ka.Mode])
			}
		}
		return upload(device.Bytes(per), nil)
	case opencl.RoleGroupSize:
		return device.I64(int64(len(v.Group.Memrefs))), nil
	case opencl.RoleGroupElemOf:
		return device.I64(v.Group.Offset), nil
	}
	return device.Arg{}, fmt.Errorf("no test value for argument %s (%s)", ka.Name, ka.Role)
}

func scalarArg(ctype string, v interp.Arg) (device.Arg, error) {
	switch ctype {
	case "int":
		return device.I32(int32(v.Int)), nil
	case "long":
		return device.I64(v.Int), nil
	case "float":
		return device.F32(float32(v.Float)), nil
	case "double":
		return device.F64(v.Float), nil
	}
	return device.Arg{}, fmt.Errorf("no test value for a scalar argument of C type %s", ctype)
}

// compareArgs compares every memref argument of got with want.
func compareArgs(t *testing.T, what string, f *ir.Func, want, got *diffArgs) {
	t.Helper()
	for i, p := range f.Params {
		var ws, gs []*interp.Memref
		switch {
		case want.interp[i].Memref != nil:
			ws, gs = []*interp.Memref{want.interp[i].Memref}, []*interp.Memref{got.interp[i].Memref}
		case want.interp[i].Group != nil:
			ws, gs = want.interp[i].Group.Memrefs, got.interp[i].Group.Memrefs
		}
		for j := range ws {
			if msg := diffBuffers(ws[j].Buf, gs[j].Buf); msg != "" {
				t.Errorf("%s: %%%s differs from the interpreter: %s", what, p.Name, msg)
			}
		}
	}
}

// diffBuffers compares element by element: integers exactly, floating
// types within a tolerance of their precision relative to max(1, |want|).
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
