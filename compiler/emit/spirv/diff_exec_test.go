package spirv_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/device"
)

// TestDifferentialOnDevice runs the compiler's differential test kernels
// (compiler/testdata/exec: every instruction family, views, groups, SPMD
// builtins, subgroup operations, local memory, cooperative matrices) as
// SPIR-V on the device and compares every memref with the reference
// interpreter run on the source, from the same seeded inputs.
//
// The kernels' conventions: every "?" of a memref shape is the number of
// work-groups; float scalars are 0.75, complex ones 0.5-0.25i, integers 2;
// a group holds one memref per work-group.
func TestDifferentialOnDevice(t *testing.T) {
	d := openDevice(t)
	diffFiles(t, func(t *testing.T, src string) { diffProgram(t, d, src) })
}

// diffFiles runs f on every differential test kernel.
func diffFiles(t *testing.T, f func(t *testing.T, src string)) {
	files, err := filepath.Glob("../../testdata/exec/*.tl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no differential test kernels in compiler/testdata/exec: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".tl"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f(t, string(src))
		})
	}
}

const groups = 3

func diffProgram(t *testing.T, d device.Device, src string) {
	diffProgramOn(t, d, "generic", spirv.Options{}, src, 0)
}

// diffProgramOn runs src for target; batch > 0 overrides the number of
// logical work-groups per work-group the compiler chose.
func diffProgramOn(t *testing.T, d device.Device, target string, o spirv.Options, src string, batch int) {
	_, out := emitBatched(t, src, target, o, batch)
	if d == nil {
		prepare(t, out.Module)
		return
	}
	source, errs := syntax.Parse([]byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for fi, f := range source.Funcs {
		k := &out.Kernels[fi]
		want := seededArgs(f)
		opts := interp.Options{Groups: groups, SubgroupSize: k.SubgroupSize, WorkGroupSize: k.WorkGroupSize}
		if err := interp.Run(f, want, opts); err != nil {
			if target != "generic" {
				// Kernels written for one lane per subgroup may be
				// undefined with more (a lane index that is not uniform).
				t.Skipf("the reference rejects the kernel at subgroup size %d: %v", k.SubgroupSize, err)
			}
			t.Fatalf("interpreter: %v", err)
		}
		got := seededArgs(f)
		if err := runArgs(d, out.Module, k, got); err != nil {
			t.Fatalf("device: %v", detail(err))
		}
		for i, p := range f.Params {
			for j, w := range memrefsOf(want[i]) {
				if msg := compareBuffers(w.Buf, memrefsOf(got[i])[j].Buf); msg != "" {
					t.Errorf("@%s %%%s: SPIR-V differs from the interpreter: %s", f.Name, p.Name, msg)
				}
			}
		}
	}
}

func memrefsOf(a interp.Arg) []*interp.Memref {
	if a.Group != nil {
		return a.Group.Memrefs
	}
	if a.Memref != nil {
		return []*interp.Memref{a.Memref}
	}
	return nil
}

// seededArgs makes f's arguments; the same function gives the same bytes.
func seededArgs(f *ir.Func) []interp.Arg {
	r := rand.New(rand.NewPCG(1, 42))
	args := make([]interp.Arg, len(f.Params))
	for i, p := range f.Params {
		switch t := p.Type; t.Kind() {
		case ir.KindMemref:
			args[i].Memref = filled(t, r)
		case ir.KindGroup:
			args[i].Group = &interp.Group{}
			for range groups {
				args[i].Group.Memrefs = append(args[i].Group.Memrefs, filled(t.Elem(), r))
			}
		default:
			args[i] = interp.Arg{Int: 2, Float: 0.75, Complex: complex(0.5, -0.25)}
		}
	}
	return args
}

// filled is a packed memref of type t ("?" = groups) with values from r:
// integers in [0, 10), reals and both complex parts in [-1, 1).
func filled(t *ir.Type, r *rand.Rand) *interp.Memref {
	shape := append([]int64{}, t.Shape()...)
	for i, s := range shape {
		if s == ir.Dynamic {
			shape[i] = groups
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

// runArgs launches kernel k of module over `groups` logical work-groups
// with args bound by the ABI (groups packed into one buffer each) and
// copies every buffer back into args.
func runArgs(d device.Device, module []byte, k *opencl.Kernel, args []interp.Arg) error {
	var readBack []func() error
	var bufs []device.Buffer
	defer func() {
		for _, b := range bufs {
			b.Release()
		}
	}()
	upload := func(data []byte, back func([]byte)) (device.Arg, error) {
		b, err := d.Alloc(int64(max(len(data), 8)))
		if err != nil {
			return device.Arg{}, err
		}
		bufs = append(bufs, b)
		if back != nil {
			readBack = append(readBack, func() error {
				tmp := make([]byte, len(data))
				err := b.Read(tmp)
				back(tmp)
				return err
			})
		}
		return device.Buf(b), b.Write(data)
	}
	bind := func(a opencl.Arg) (device.Arg, error) { return abiArg(a, args, upload) }
	if err := run(d, module, k, groups, bind); err != nil {
		return err
	}
	for _, f := range readBack {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

type uploader func(data []byte, back func([]byte)) (device.Arg, error)

// abiArg is the device value of ABI argument a.
func abiArg(a opencl.Arg, args []interp.Arg, upload uploader) (device.Arg, error) {
	if a.Role == opencl.RoleGroups {
		return device.I64(groups), nil
	}
	v := args[a.Param]
	ms := memrefsOf(v)
	switch a.Role {
	case opencl.RoleScalar:
		return scalar(a.CType, v)
	case opencl.RoleData:
		return upload(ms[0].Buf.Data, func(b []byte) { copy(ms[0].Buf.Data, b) })
	case opencl.RoleShape:
		return device.I64(ms[0].Shape[a.Mode]), nil
	case opencl.RoleStride:
		return device.I64(ms[0].Stride[a.Mode]), nil
	case opencl.RoleGroupBase:
		return upload(packed(ms), func(b []byte) {
			for _, m := range ms {
				b = b[copy(m.Buf.Data, b):]
			}
		})
	case opencl.RoleGroupOffset:
		return upload(device.Bytes(packedOffsets(ms)), nil)
	case opencl.RoleGroupShape:
		return upload(device.Bytes(perEntry(ms, func(m *interp.Memref) int64 { return m.Shape[a.Mode] })), nil)
	case opencl.RoleGroupStride:
		return upload(device.Bytes(perEntry(ms, func(m *interp.Memref) int64 { return m.Stride[a.Mode] })), nil)
	case opencl.RoleGroupSize:
		return device.I64(int64(len(ms))), nil
	case opencl.RoleGroupElemOf:
		return device.I64(v.Group.Offset), nil
	}
	return device.Arg{}, fmt.Errorf("no value for argument %d (%s)", a.Param, a.Role)
}

func packed(ms []*interp.Memref) []byte {
	var b []byte
	for _, m := range ms {
		b = append(b, m.Buf.Data...)
	}
	return b
}

// perEntry lists f of every memref of a group.
func perEntry(ms []*interp.Memref, f func(*interp.Memref) int64) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = f(m)
	}
	return out
}

// packedOffsets are the element offsets of the memrefs in packed(ms).
func packedOffsets(ms []*interp.Memref) []int64 {
	out := make([]int64, len(ms))
	for i := range ms[1:] {
		out[i+1] = out[i] + int64(ms[i].Buf.Len())
	}
	return out
}

func scalar(ctype string, v interp.Arg) (device.Arg, error) {
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
	return device.Arg{}, fmt.Errorf("no test value for a scalar of C type %s", ctype)
}

// compareBuffers compares integers exactly and floating elements within
// their precision, relative to max(1, |want|).
func compareBuffers(want, got *interp.Buffer) string {
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
		if cmplx.IsNaN(w) && cmplx.IsNaN(g) {
			continue
		}
		if cmplx.Abs(w-g) > tol*math.Max(1, cmplx.Abs(w)) {
			return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
		}
	}
	return ""
}
