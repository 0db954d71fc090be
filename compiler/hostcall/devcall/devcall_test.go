package devcall

import (
	"math/rand/v2"
	"slices"
	"testing"

	"tltune/compiler"
	"tltune/compiler/check"
	"tltune/compiler/hostcall"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/device"
	"tltune/internal/devtest"
)

// scaleAll scales, per work-group, a column of a memref with a dynamic
// shape and stride, a complex column (a float2 scalar argument) and a group
// member with a dynamic shape, stride and offset.
const scaleAll = `func @scale(%a: f32, %z: c32, %A: memref<f32x?x?, strided<1,?>>, %Z: memref<c32x4x?>,
            %G: group<memref<f64x?x3, strided<1,?>>x?, offset: ?>) {
  %g = builtin.group_id : index
  %n = size %A[0] : index
  %ag = subview %A[0:%n, %g] : memref<f32x?>
  %zero = constant 0.0 : f32
  axpby.n %a, %ag, %zero, %ag
  %zg = subview %Z[0:4, %g] : memref<c32x4>
  %zc = constant [0.0, 0.0] : c32
  axpby.n %z, %zg, %zc, %zg
  %m = load %G[%g] : memref<f64x?x3, strided<1,?>>
  %two = constant 2.0 : f64
  %zd = constant 0.0 : f64
  axpby.n %two, %m, %zd, %m
}
`

const groups = 3

// args are the interpreter arguments of scaleAll: A is a view at an offset
// with a padded stride, the group's members live in one buffer at scattered
// places with shapes of their own.
func args() []interp.Arg {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(b *interp.Buffer) *interp.Buffer {
		for i := range b.Len() {
			if b.Elem.IsComplex() {
				b.SetComplex(i, complex(r.Float64(), r.Float64()))
			} else {
				b.SetFloat(i, r.Float64())
			}
		}
		return b
	}
	pool := fill(interp.NewBuffer(ir.F64, 80))
	g := &interp.Group{Offset: 2}
	for i := range groups {
		g.Memrefs = append(g.Memrefs, &interp.Memref{Buf: pool, Offset: int64(20 * i), Shape: []int64{int64(i + 1), 3}, Stride: []int64{1, 5}})
	}
	return []interp.Arg{
		{Float: 1.5},
		{Complex: complex(0.5, -1)},
		{Memref: &interp.Memref{Buf: fill(interp.NewBuffer(ir.F32, 40)), Offset: 3, Shape: []int64{5, groups}, Stride: []int64{1, 7}}},
		{Memref: &interp.Memref{Buf: fill(interp.NewBuffer(ir.C32, 4*groups)), Shape: []int64{4, groups}, Stride: []int64{1, 4}}},
		{Group: g},
	}
}

func TestRunAgreesWithInterpreter(t *testing.T) {
	d := devtest.OpenCL(t)
	prog, errs := syntax.Parse([]byte(scaleAll))
	if len(errs) == 0 {
		errs = check.Program(prog, nil)
	}
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res, err := compiler.Compile([]byte(scaleAll), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatal(err)
	}
	want := args()
	if err := interp.Run(prog.Funcs[0], want, interp.Options{Groups: groups}); err != nil {
		t.Fatal(err)
	}
	got := args()
	x, err := hostcall.FromInterp(got)
	if err != nil {
		t.Fatal(err)
	}
	call, kern := boundKernel(t, d, res, x.Params, groups)
	if err := Run(d, kern, call); err != nil {
		t.Fatal(err)
	}
	x.CopyBack()
	for i, w := range want {
		if w.Memref == nil && w.Group == nil {
			continue
		}
		wb, gb := bufferOf(w), bufferOf(got[i])
		if !slices.Equal(wb.Data, gb.Data) {
			t.Errorf("parameter %d differs from the interpreter", i)
		}
	}
	if untouched := args()[2].Memref.Buf; !slices.Equal(untouched.Data[:12], got[2].Memref.Buf.Data[:12]) {
		t.Errorf("elements before the view's offset changed")
	}
}

// boundKernel binds params to res's kernel for groups work-groups and
// builds the kernel on d, released when the test ends.
func boundKernel(t *testing.T, d device.Device, res *compiler.Result, params []hostcall.Param, groups int64) (*hostcall.Call, device.Kernel) {
	t.Helper()
	k := &res.Kernels[0]
	call, err := hostcall.Bind(k, params, groups)
	if err != nil {
		t.Fatal(err)
	}
	kern, release, err := Build(d, res.OpenCL, k.Symbol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return call, kern
}

func bufferOf(a interp.Arg) *interp.Buffer {
	if a.Group != nil {
		return a.Group.Memrefs[0].Buf
	}
	return a.Memref.Buf
}

// Blobs stay resident across calls: binding the same values to the kernel
// again uploads nothing new.
func TestBuffersReuse(t *testing.T) {
	d := devtest.OpenCL(t)
	res, err := compiler.Compile([]byte(scaleAll), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := hostcall.FromInterp(args())
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuffers(d)
	defer b.Release()
	for range 2 {
		call, err := hostcall.Bind(&res.Kernels[0], x.Params, groups)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Args(call); err != nil {
			t.Fatal(err)
		}
		if len(b.bufs) != len(call.Blobs) {
			t.Fatalf("%d resident buffers for a call of %d blobs", len(b.bufs), len(call.Blobs))
		}
	}
	if err := b.ReadBack(&hostcall.Blob{Data: make([]byte, 4)}); err == nil {
		t.Errorf("reading back a blob never uploaded succeeded")
	}
}

// copyEntries copies X's entries to Y's, one per work-group.
const copyEntries = `func @copy(%X: memref<f32x4x?>, %Y: memref<f32x4x?>) {
  %g = builtin.group_id : index
  %x = subview %X[0:4, %g] : memref<f32x4>
  %y = subview %Y[0:4, %g] : memref<f32x4>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  axpby.n %one, %x, %zero, %y
}
`

// TestRepeatedBlob: a blob whose Data is one period of a larger buffer
// (hostcall.Blob.Repeat) reaches the kernel repeated over the whole
// buffer, the last period cut short, and cannot be read back.
func TestRepeatedBlob(t *testing.T) {
	d := devtest.OpenCL(t)
	res, err := compiler.Compile([]byte(copyEntries), compiler.Options{Target: "generic"})
	if err != nil {
		t.Fatal(err)
	}
	const entries = 5
	period := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // three entries' worth
	x := &hostcall.Blob{Data: slices.Clone(device.Bytes(period)), Repeat: entries * 4 * 4}
	out := make([]float32, entries*4)
	y := &hostcall.Blob{Data: device.Bytes(out)}
	memref := func(b *hostcall.Blob) hostcall.Param {
		return hostcall.Param{Memref: &hostcall.Memref{Data: b, Shape: []int64{4, entries}, Stride: []int64{1, 4}}}
	}
	call, kern := boundKernel(t, d, res, []hostcall.Param{memref(x), memref(y)}, entries)
	b := NewBuffers(d)
	defer b.Release()
	ev, err := b.Launch(kern, call)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := b.ReadBack(y); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := period[i%len(period)]; v != want {
			t.Fatalf("element %d = %g, want %g (all: %v)", i, v, want, out)
		}
	}
	if err := b.ReadBack(x); err == nil {
		t.Error("a repeated blob was read back")
	}
}
