package hostcall

import (
	"slices"
	"strings"
	"testing"

	"tltune/compiler/interp"
	"tltune/compiler/ir"
)

// counting returns a buffer of n f32 elements holding 0, 1, 2, ...
func counting(n int) *interp.Buffer {
	b := interp.NewBuffer(ir.F32, n)
	for i := range n {
		b.SetFloat(i, float64(i))
	}
	return b
}

// at reads element idx of a neutral view: element off + Σ idx·stride of blob.
func at(blob *Blob, off int64, stride, idx []int64) float64 {
	for k := range idx {
		off += idx[k] * stride[k]
	}
	return (&interp.Buffer{Elem: ir.F32, Data: blob.Data}).Float(int(off))
}

// sameElements checks that the neutral view (blob, off, stride) reaches the
// elements the interpreter's view m reaches, shifted by extra elements (a
// group's offset), index by index.
func sameElements(t *testing.T, what string, m *interp.Memref, extra int64, blob *Blob, off int64, stride []int64) {
	t.Helper()
	m.Each(func(idx []int64, pos int) {
		if got, want := at(blob, off, stride, idx), m.Buf.Float(pos+int(extra)); got != want {
			t.Errorf("%s element %v: got %v, want %v", what, idx, got, want)
		}
	})
}

// A memref at an offset with non-packed strides starts its blob at its
// first element and shares the interpreter's memory.
func TestFromInterpMemrefView(t *testing.T) {
	m := &interp.Memref{Buf: counting(40), Offset: 5, Shape: []int64{3, 4}, Stride: []int64{2, 9}}
	x, err := FromInterp([]interp.Arg{{Float: 2}, {Memref: m}})
	if err != nil {
		t.Fatal(err)
	}
	if x.Params[0].Float != 2 {
		t.Errorf("scalar %v, want 2", x.Params[0].Float)
	}
	got := x.Params[1].Memref
	sameElements(t, "memref", m, 0, got.Data, 0, got.Stride)
	got.Data.Data[0] = 0xff // a device result read back lands in the interpreter's buffer
	if m.Buf.Data[5*4] != 0xff {
		t.Errorf("the blob does not share the interpreter's buffer")
	}
}

// Members of one buffer keep their places; each has its own dynamic shape
// and strides, and the dynamic group offset applies on top.
func TestFromInterpGroupOneBuffer(t *testing.T) {
	buf := counting(64)
	g := &interp.Group{Offset: 3, Memrefs: []*interp.Memref{
		{Buf: buf, Offset: 0, Shape: []int64{2, 3}, Stride: []int64{1, 2}},
		{Buf: buf, Offset: 20, Shape: []int64{4, 2}, Stride: []int64{1, 10}},
		{Buf: buf, Offset: 7, Shape: []int64{1, 1}, Stride: []int64{1, 1}},
	}}
	x, err := FromInterp([]interp.Arg{{Group: g}})
	if err != nil {
		t.Fatal(err)
	}
	out := x.Params[0].Group
	if len(x.packed) != 0 || &out.Base.Data[0] != &buf.Data[0] {
		t.Errorf("a group of one buffer was copied")
	}
	for i, m := range g.Memrefs {
		sameElements(t, "member", m, g.Offset, out.Base, out.Offsets[i]+out.Offset, out.Strides[i])
		if !slices.Equal(out.Shapes[i], m.Shape) {
			t.Errorf("member %d shape %v, want %v", i, out.Shapes[i], m.Shape)
		}
	}
}

// Members in separate buffers are packed into one base; CopyBack returns
// device results to each buffer.
func TestFromInterpGroupPacked(t *testing.T) {
	a, b := counting(6), counting(12)
	g := &interp.Group{Memrefs: []*interp.Memref{
		{Buf: a, Offset: 1, Shape: []int64{5}, Stride: []int64{1}},
		{Buf: b, Offset: 0, Shape: []int64{4}, Stride: []int64{3}},
		{Buf: a, Offset: 0, Shape: []int64{2}, Stride: []int64{1}},
	}}
	x, err := FromInterp([]interp.Arg{{Group: g}})
	if err != nil {
		t.Fatal(err)
	}
	out := x.Params[0].Group
	if len(out.Base.Data) != len(a.Data)+len(b.Data) {
		t.Fatalf("base of %d bytes, want each distinct buffer once (%d)", len(out.Base.Data), len(a.Data)+len(b.Data))
	}
	for i, m := range g.Memrefs {
		sameElements(t, "member", m, 0, out.Base, out.Offsets[i], out.Strides[i])
	}
	result := &interp.Buffer{Elem: ir.F32, Data: out.Base.Data}
	result.SetFloat(int(out.Offsets[1]+3*3), 99) // as a device would write member 1, element 3
	x.CopyBack()
	if b.Float(9) != 99 || a.Float(0) != 0 {
		t.Errorf("after CopyBack b[9] = %v, a[0] = %v; want 99 and 0", b.Float(9), a.Float(0))
	}
}

// Parameters that view one buffer share a blob when they start at the same
// element; the ABI cannot express anything else.
func TestFromInterpAliasing(t *testing.T) {
	buf := counting(16)
	view := func(off int64, stride int64) *interp.Memref {
		return &interp.Memref{Buf: buf, Offset: off, Shape: []int64{4}, Stride: []int64{stride}}
	}
	x, err := FromInterp([]interp.Arg{{Memref: view(0, 1)}, {Memref: view(0, 2)}, {Group: &interp.Group{Memrefs: []*interp.Memref{view(4, 1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := x.Params; p[0].Memref.Data != p[1].Memref.Data || p[0].Memref.Data != p[2].Group.Base {
		t.Errorf("views of one buffer from element 0 got separate blobs")
	}
	other := counting(4)
	for _, c := range []struct {
		args []interp.Arg
		want string
	}{
		{[]interp.Arg{{Memref: view(0, 1)}, {Memref: view(2, 1)}}, "parameter 1: views the buffer of parameter 0 from another element"},
		{[]interp.Arg{{Memref: view(0, 1)}, {Group: &interp.Group{Memrefs: []*interp.Memref{
			{Buf: other, Shape: []int64{4}, Stride: []int64{1}}, view(0, 1)}}}}, "a member views the buffer of parameter 0"},
		{[]interp.Arg{{Memref: &interp.Memref{Buf: buf, Offset: 15, Shape: []int64{4}, Stride: []int64{-1}}}}, "negative strides"},
		{[]interp.Arg{{Group: &interp.Group{Memrefs: []*interp.Memref{nil}}}}, "member 0 is missing"},
	} {
		if _, err := FromInterp(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
