package hostcall

import (
	"slices"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
)

// everyRole has a parameter of every kind the ABI expands: scalars, a memref
// with a dynamic shape and a dynamic stride, and a group with a dynamic
// member shape and stride, size and offset.
const everyRole = `func @k(%a: f32, %n: i32, %flag: bool, %z: c32, %A: memref<f32x?x4, strided<1,?>>,
        %G: group<memref<f64x?x3, strided<1,?>>x?, offset: ?>) {
  %g = builtin.group_id : index
}
`

func compileKernel(t *testing.T, src string) *compiler.Kernel {
	t.Helper()
	res, err := compiler.Compile([]byte(src), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatal(err)
	}
	return &res.Kernels[0]
}

// decode reads a bound argument back as the interpreter would see it.
func decode(t *testing.T, a Arg) *interp.Buffer {
	t.Helper()
	if a.Blob != nil {
		return &interp.Buffer{Elem: ir.I64, Data: a.Blob.Data}
	}
	ct := cTypes[a.CType]
	if ct == nil || int64(len(a.Scalar)) != ct.Size() {
		t.Fatalf("argument %s: %d bytes for C type %s", a.Name, len(a.Scalar), a.CType)
	}
	return &interp.Buffer{Elem: ct, Data: a.Scalar}
}

func longs(t *testing.T, a Arg) []int64 {
	t.Helper()
	b := decode(t, a)
	out := make([]int64, b.Len())
	for i := range out {
		out[i] = b.Int(i)
	}
	return out
}

func TestBindEveryRole(t *testing.T) {
	k := compileKernel(t, everyRole)
	data := &Blob{Data: make([]byte, 4*(1+2*1+3*10))}    // 3x4 floats at strides (1, 10)
	base := &Blob{Data: make([]byte, 8*(2+5+6*7+2*3*2))} // two members, offset 2
	params := []Param{
		{Float: 1.5}, {Int: -7}, {Int: 5}, {Complex: complex(0.5, -2)},
		{Memref: &Memref{Data: data, Shape: []int64{3, 4}, Stride: []int64{1, 10}}},
		{Group: &Group{Base: base, Offsets: []int64{0, 30}, Offset: 2,
			Shapes: [][]int64{{5, 3}, {2, 3}}, Strides: [][]int64{{1, 7}, {1, 2}}}},
	}
	call, err := Bind(k, params, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[opencl.ArgRole][]any{}
	for _, a := range call.Args {
		var v any
		switch b := decode(t, a); {
		case a.Blob == data || a.Blob == base:
			v = a.Blob
		case a.Blob != nil:
			v = longs(t, a)
		case b.Elem.IsComplex():
			v = b.Complex(0)
		case b.Elem.IsFloat():
			v = b.Float(0)
		default:
			v = b.Int(0)
		}
		want[a.Role] = append(want[a.Role], v)
	}
	check := func(role opencl.ArgRole, vals ...any) {
		t.Helper()
		got := want[role]
		if len(got) != len(vals) {
			t.Errorf("%s: got %v, want %v", role, got, vals)
			return
		}
		for i := range vals {
			g, w := got[i], vals[i]
			if gs, ok := g.([]int64); ok {
				if !slices.Equal(gs, w.([]int64)) {
					t.Errorf("%s[%d]: got %v, want %v", role, i, g, w)
				}
			} else if g != w {
				t.Errorf("%s[%d]: got %v (%T), want %v (%T)", role, i, g, g, w, w)
			}
		}
	}
	check(opencl.RoleScalar, 1.5, int64(-7), int64(1), complex(0.5, -2))
	check(opencl.RoleData, data)
	check(opencl.RoleShape, int64(3))
	check(opencl.RoleStride, int64(10))
	check(opencl.RoleGroupBase, base)
	check(opencl.RoleGroupOffset, []int64{0, 30})
	check(opencl.RoleGroupShape, []int64{5, 2})
	check(opencl.RoleGroupStride, []int64{7, 2})
	check(opencl.RoleGroupSize, int64(2))
	check(opencl.RoleGroupElemOf, int64(2))
	if last := call.Args[len(call.Args)-1]; last.Role != opencl.RoleGroupElemOf {
		t.Errorf("last argument %s (%s), want the group's offset: the tinytc arguments end there", last.Name, last.Role)
	}
	if len(call.Blobs) != 5 || call.Blobs[0] != data || call.Blobs[1] != base {
		t.Errorf("blobs %d, want data, base, offsets, shape and stride arrays in order", len(call.Blobs))
	}
	if w := call.Written(); len(w) != 2 || w[0] != data || w[1] != base {
		t.Errorf("written blobs %v, want the memref data and the group base only", w)
	}
	if g := call.GlobalSize(); g != k.GlobalSize(3) {
		t.Errorf("global size %v, want %v", g, k.GlobalSize(3))
	}
}

// A blob shared by two parameters is one buffer of the call, and a group's
// const arrays are built once for every kernel it is bound to.
func TestBindSharesBlobs(t *testing.T) {
	k := compileKernel(t, `func @k(%x: memref<f32x4>, %y: memref<f32x4>, %G: group<memref<f32x?>x2>) {
  %g = builtin.group_id : index
}
`)
	shared := &Blob{Data: make([]byte, 16)}
	m := &Memref{Data: shared, Shape: []int64{4}, Stride: []int64{1}}
	g := &Group{Base: shared, Offsets: []int64{0, 2}, Shapes: [][]int64{{2}, {2}}, Strides: [][]int64{{1}, {1}}}
	params := []Param{{Memref: m}, {Memref: m}, {Group: g}}
	first, err := Bind(k, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Bind(k, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Blobs) != 3 || first.Blobs[0] != shared {
		t.Fatalf("blobs %v: want the shared data once, the offsets and the shape array", first.Blobs)
	}
	if !slices.Equal(first.Blobs, second.Blobs) {
		t.Errorf("binding the same group twice made new const arrays")
	}
}

// A scalar is rounded to its declared type before it is stored in its C
// type, as the interpreter rounds a parameter: an f16 passed as float.
func TestBindRoundsToDeclaredType(t *testing.T) {
	for _, c := range []struct {
		ctype, elem string
		in          Param
		want        float64
	}{
		{"float", "f16", Param{Float: 1 + 1.0/4096}, 1},
		{"float", "bf16", Param{Float: 1 + 1.0/512}, 1},
		{"half", "f16", Param{Float: 3 + 1.0/2048}, 3},
		{"double", "f64", Param{Float: 1 + 1.0/4096}, 1 + 1.0/4096},
	} {
		k := &compiler.Kernel{Name: "k", Args: []compiler.Arg{{Name: "x", CType: c.ctype, Role: opencl.RoleScalar, Elem: c.elem}}}
		call, err := Bind(k, []Param{c.in}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(t, call.Args[0]).Float(0); got != c.want {
			t.Errorf("%s %s %v: got %v, want %v", c.elem, c.ctype, c.in.Float, got, c.want)
		}
	}
}

func TestBindErrors(t *testing.T) {
	k := compileKernel(t, everyRole)
	good := func() []Param {
		return []Param{{}, {}, {}, {},
			{Memref: &Memref{Data: &Blob{Data: make([]byte, 4*12)}, Shape: []int64{3, 4}, Stride: []int64{1, 3}}},
			{Group: &Group{Base: &Blob{Data: make([]byte, 8*6)}, Offsets: []int64{0}, Shapes: [][]int64{{2, 3}}, Strides: [][]int64{{1, 2}}}}}
	}
	for _, c := range []struct {
		name   string
		break_ func(p []Param) []Param
		groups int64
		want   string
	}{
		{"no groups", func(p []Param) []Param { return p }, 0, "0 work-groups"},
		{"too few", func(p []Param) []Param { return p[:4] }, 1, "parameter 4 has no value"},
		{"memref missing", func(p []Param) []Param { p[4].Memref = nil; return p }, 1, "parameter 4 is a memref"},
		{"group missing", func(p []Param) []Param { p[5].Group = nil; return p }, 1, "parameter 5 is a group"},
		{"memref past its data", func(p []Param) []Param { p[4].Memref.Stride[1] = 4; return p }, 1, "reach elements 0..14 of a buffer of 12 f32"},
		{"memref order", func(p []Param) []Param { p[4].Memref.Shape = []int64{3}; return p }, 1, "1 shape and 2 stride entries"},
		{"member past the base", func(p []Param) []Param { p[5].Group.Offset = 1; return p }, 1, "member 0: shape [2 3], strides [1 2] at element 1"},
		{"member mode", func(p []Param) []Param { p[5].Group.Shapes[0] = nil; return p }, 1, "member 0: 0 shape and 2 stride entries"},
		{"members", func(p []Param) []Param { p[5].Group.Shapes = nil; return p }, 1, "group of 1 offsets, 0 shapes"},
	} {
		_, err := Bind(k, c.break_(good()), c.groups)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
