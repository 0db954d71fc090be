package interp

import (
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// iota returns a packed memref of f32 whose element (i, j, ...) holds its
// linear position.
func iotaMemref(shape ...int64) *Memref {
	m := NewMemref(ir.F32, shape...)
	for i := range m.Buf.Len() {
		m.Buf.SetFloat(i, float64(i))
	}
	return m
}

func TestViews(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f32x4x3>, %V: memref<f32x12>, %out: memref<f32x8>) {
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %c2 = constant 2 : index
  %c3 = constant 3 : index
  %c4 = constant 4 : index
  %c5 = constant 5 : index
  %c6 = constant 6 : index
  %c7 = constant 7 : index
  ; column 1, rows 1..2: A[1,1] = 5, A[2,1] = 6
  %col = subview %A[1:2, %c1] : memref<f32x2>
  %a = load %col[%c0] : f32
  %b = load %col[%c1] : f32
  store %a, %out[%c0]
  store %b, %out[%c1]
  ; a dynamic 2x2 block at (2, 1): element (1,1) is A[3,2] = 11
  %blk = subview %A[%c2:%c2, %c1:2] : memref<f32x?x2,strided<1,4>>
  %c = load %blk[%c1, %c1] : f32
  store %c, %out[%c2]
  %n = size %blk[0] : index
  %nf = cast %n : f32
  store %nf, %out[%c3]
  ; V viewed as 4x3: (2,1) is element 6
  %e = expand %V[0 -> %c4 x 3] : memref<f32x?x3>
  %d = load %e[%c2, %c1] : f32
  store %d, %out[%c4]
  ; A fused into one mode: element 7
  %f = fuse %A[0, 1] : memref<f32x12>
  %g = load %f[%c7] : f32
  store %g, %out[%c5]
  ; the fused view of an expanded view is the original vector
  %ef = fuse %e[0, 1] : memref<f32x?>
  %h = load %ef[%c3] : f32
  store %h, %out[%c6]
  %m = size %e[0] : index
  %mf = cast %m : f32
  store %mf, %out[%c7]
}`)
	out := NewMemref(ir.F32, 8)
	err := Run(fn, []Arg{{Memref: iotaMemref(4, 3)}, {Memref: iotaMemref(12)}, {Memref: out}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf, 5.0, 6.0, 11.0, 2.0, 6.0, 7.0, 3.0, 4.0)
}

// Strided arguments with dynamic shapes and strides: a 2x3 view with leading
// dimension 5 inside a larger buffer.
func TestDynamicStrides(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f32x?x?,strided<1,?>>, %out: memref<f32x2>) {
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %c2 = constant 2 : index
  %a = load %A[%c1, %c2] : f32
  store %a, %out[%c0]
  %n = size %A[1] : index
  %nf = cast %n : f32
  store %nf, %out[%c1]
}`)
	buf := iotaMemref(20).Buf
	A := &Memref{Buf: buf, Offset: 3, Shape: []int64{2, 3}, Stride: []int64{1, 5}}
	out := NewMemref(ir.F32, 2)
	if err := Run(fn, []Arg{{Memref: A}, {Memref: out}}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf, 3.0+1+2*5, 3.0)
}

func TestGroupsAllocaAtomics(t *testing.T) {
	fn := parseFunc(t, `func @t(%G: group<memref<f32x2>x?, offset: ?>, %acc: memref<f32>, %out: memref<f32x?>) {
  %gid = builtin.group_id : index
  %m = load %G[%gid] : memref<f32x2>
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %x = load %m[%c1] : f32
  %tmp = alloca : memref<f32x2, local>
  store %x, %tmp[%c0]
  %y = load %tmp[%c0] : f32
  store %y, %out[%gid]
  store.atomic_add %y, %acc[]
  %n = size %G[0] : index
  %nf = cast %n : f32
  store.atomic %nf, %m[%c0]
}`)
	// Member g holds 10g, 10g+1, 10g+2; with offset 1 the kernel sees
	// (10g+1, 10g+2) and reads 10g+2.
	g := &Group{Offset: 1}
	for i := range 3 {
		g.Memrefs = append(g.Memrefs, vec(ir.F32, 10.0*float64(i), 10.0*float64(i)+1, 10.0*float64(i)+2))
		g.Memrefs[i].Shape = []int64{2}
	}
	acc := NewMemref(ir.F32)
	acc.Buf.SetFloat(0, 0.5)
	out := NewMemref(ir.F32, 3)
	if err := Run(fn, []Arg{{Group: g}, {Memref: acc}, {Memref: out}}, Options{Groups: 3}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf, 2.0, 12.0, 22.0)
	checkBuffer(t, "acc", acc.Buf, 0.5+2+12+22)
	checkBuffer(t, "member 1", g.Memrefs[1].Buf, 10.0, 3.0, 12.0)
}

func TestBuiltins(t *testing.T) {
	fn := parseFunc(t, `func @t(%out: memref<i32x4x?>, %ids: memref<i32x16>) attributes {subgroup_size=4, work_group_size=[8, 2]} {
  %gid = builtin.group_id : index
  %gs = builtin.group_size : index
  %ns = builtin.num_subgroups : i32
  %ss = builtin.subgroup_size : i32
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %c2 = constant 2 : index
  %c3 = constant 3 : index
  %g = cast %gid : i32
  %s = cast %gs : i32
  store %g, %out[%c0, %gid]
  store %s, %out[%c1, %gid]
  store %ns, %out[%c2, %gid]
  store %ss, %out[%c3, %gid]
  parallel {
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %base = arith.mul %sg, %ss : i32
    %id = arith.add %base, %lane : i32
    %i = cast %id : index
    %h = constant 100 : i32
    %v0 = arith.mul %sg, %h : i32
    %v = arith.add %v0, %lane : i32
    store %v, %ids[%i]
  }
}`)
	out := NewMemref(ir.I32, 4, 2)
	ids := NewMemref(ir.I32, 16)
	if err := Run(fn, []Arg{{Memref: out}, {Memref: ids}}, Options{Groups: 2, SubgroupSize: 16}); err != nil {
		t.Fatal(err)
	}
	// the attributes win over the options: 8x2 work-items in subgroups of 4
	checkBuffer(t, "out", out.Buf, 0, 2, 4, 4, 1, 2, 4, 4)
	var want []any
	for i := range 16 {
		want = append(want, (i/4)*100+i%4)
	}
	checkBuffer(t, "ids", ids.Buf, want...)
}

// Undefined behaviour is reported with the instruction's position.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"load out of bounds", `
  %c4 = constant 4 : index
  %x = load %A[%c4] : f32`, "3:3: load: index [4] out of bounds of shape [4]"},
		{"division by zero", `
  %z = constant 0 : i32
  %x = arith.div %z, %z : i32`, "integer div by zero"},
		{"subview out of bounds", `
  %c3 = constant 3 : index
  %v = subview %A[%c3:2] : memref<f32x2>`, "slice 3:2 of mode 0 exceeds its size 4"},
		{"divergent subgroup operation", `
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %c2 = constant 2 : i32
    %lt = cmp.lt %lane, %c2 : bool
    if %lt {
      %s = subgroup_add.reduce %lane : i32
    }
  }`, "lane 2 is finished, not at this instruction (divergent control flow)"},
		{"barrier not reached by all", `
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %c2 = constant 2 : i32
    %lt = cmp.lt %lane, %c2 : bool
    if %lt {
      barrier
    }
  }`, "barrier not reached by every work-item: work-item 2 is finished"},
		{"vector out of bounds", `
  %c2 = constant 2 : index
  %x0, %x1, %x2, %x3 = vector_load %A[%c2] : f32`, "3:3: vector_load: vector of 4 elements from [2]: index [5] out of bounds"},
		{"misaligned vector", `
  %c1 = constant 1 : index
  %x0, %x1 = vector_load %A[%c1] : f32`, "vector of 8 bytes from index [1] starts at byte 4 of a buffer aligned to 128 bytes: not 8-byte aligned"},
		{"misaligned local vector", `
  %c0 = constant 0 : index
  %x0, %x1 = vector_load %A[%c0] : f32
  %tmp = alloca {alignment=4} : memref<f32x4, local>
  vector_store %x0, %x1, %tmp[%c0]`, "aligned to 4 bytes: not 8-byte aligned"},
		{"non-uniform shuffle mask", `
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %s = subgroup_shuffle_xor %lane, %lane : i32
  }`, "the mask is not dynamically uniform"},
		{"shuffle partner outside the subgroup", `
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %m = constant 4 : i32
    %s = subgroup_shuffle_xor %lane, %m : i32
  }`, "lane 0 XOR mask 4 is lane 4, outside the subgroup of 4"},
		{"non-uniform broadcast index", `
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %s = subgroup_broadcast %lane, %lane : i32
  }`, "the lane index is not dynamically uniform"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "func @t(%A: memref<f32x4>) attributes {subgroup_size=4, work_group_size=[4, 1]} {" + c.body + "\n}"
			err := Run(parseFunc(t, src), []Arg{{Memref: NewMemref(ir.F32, 4)}}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// Vector accesses move consecutive elements of mode 0, also in local
// memory aligned by its attribute.
func TestVectorAccess(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f32x4x2>, %B: memref<c32x4>) {
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %c2 = constant 2 : index
  %x0, %x1, %x2, %x3 = vector_load %A[%c0, %c1] : f32
  %tmp = alloca {alignment=16} : memref<f32x8, local>
  vector_store %x3, %x2, %x1, %x0, %tmp[%c0]
  %y0, %y1 = vector_load %tmp[%c2] : f32
  vector_store %y0, %y1, %A[%c2, %c0]
  %z0, %z1 = vector_load %B[%c2] : c32
  vector_store %z1, %z0, %B[%c0]
}`)
	a, b := NewMemref(ir.F32, 4, 2), vec(ir.C32, 1i, 2i, 3i, 4i)
	for i := range 8 {
		a.Buf.SetFloat(i, float64(i))
	}
	if err := Run(fn, []Arg{{Memref: a}, {Memref: b}}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "A", a.Buf, 0.0, 1.0, 5.0, 4.0, 4.0, 5.0, 6.0, 7.0)
	checkBuffer(t, "B", b.Buf, 4i, 3i, 3i, 4i)
}

// A parameter's alignment attribute is a promise the interpreter checks.
func TestAlignmentAttribute(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f32x4> {alignment=16}, %G: group<memref<f32x2>x?> {alignment=8}) { }`)
	buf := NewBuffer(ir.F32, 16)
	view := func(off int64, n int64) *Memref {
		return &Memref{Buf: buf, Offset: off, Shape: []int64{n}, Stride: []int64{1}}
	}
	group := func(offs ...int64) *Group {
		g := &Group{}
		for _, o := range offs {
			g.Memrefs = append(g.Memrefs, view(o, 2))
		}
		return g
	}
	if err := Run(fn, []Arg{{Memref: view(4, 4)}, {Group: group(0, 2, 6)}}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []Arg
		want string
	}{
		{[]Arg{{Memref: view(2, 4)}, {Group: group(0)}}, "argument 0 (%A) of @t: first element at byte 8 of a buffer aligned to 128 bytes: not aligned to the 16 bytes"},
		{[]Arg{{Memref: view(0, 4)}, {Group: group(0, 3)}}, "memref 1 of the group: first element at byte 12"},
	} {
		if err := Run(fn, c.args, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func TestArgumentChecks(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<f32x4x?>) { }`)
	for _, c := range []struct {
		arg  Arg
		want string
	}{
		{Arg{}, "memref parameter without a memref"},
		{Arg{Memref: NewMemref(ir.F64, 4, 2)}, "want a buffer of f32"},
		{Arg{Memref: NewMemref(ir.F32, 3, 2)}, "shape [3 2] does not match"},
		{Arg{Memref: &Memref{Buf: NewBuffer(ir.F32, 7), Shape: []int64{4, 2}, Stride: []int64{1, 4}}}, "reach elements 0..7 of a buffer of 7"},
	} {
		if err := Run(fn, []Arg{c.arg}, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}
