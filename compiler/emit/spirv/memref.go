package spirv

import (
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// dim is a shape or stride entry: a constant c, or the i64 value id when
// id != 0.
type dim struct {
	c  int64
	id spv.ID
}

// memref is a memref value: a pointer to its first element plus its shape
// and strides.
type memref struct {
	typ           *ir.Type
	sc            spv.StorageClass
	ptr           spv.ID
	shape, stride []*dim
	ptrT          spv.ID // the pointer type, once ptrType made it
	blockPtrT     spv.ID // the pointer type of its block I/O, once blockAddr made it
}

// group is a group parameter (docs/abi.md): base buffer, per-entry element
// offsets, per-entry arrays for dynamic shape and stride entries.
type group struct {
	typ           *ir.Type
	base, offsets spv.ID
	shape, stride []*dim // static, or the id of the per-entry array
	size, offset  *dim
}

// constDim is the constant dim c. Dims are never modified once made
// (only a parameter's are bound, and those are made in dynamicDims), so
// small constants, which the unrolled element loops make by the
// thousand, are shared.
func constDim(c int64) *dim {
	if 0 <= c && c < int64(len(smallDims)) {
		return &smallDims[c]
	}
	return &dim{c: c}
}

var smallDims = func() (ds [1024]dim) {
	for i := range ds {
		ds[i].c = int64(i)
	}
	return ds
}()

// dimID is d as an i64 value.
func (e *fn) dimID(d *dim) spv.ID {
	if d.id != 0 {
		return d.id
	}
	return e.u.i64(d.c)
}

// mul and add are index arithmetic that folds constants, so static views
// compute their offsets at compile time.
func (e *fn) mul(a, b *dim) *dim {
	switch {
	case a.id == 0 && b.id == 0:
		return constDim(a.c * b.c)
	case a.id == 0 && a.c == 1:
		return b
	case b.id == 0 && b.c == 1:
		return a
	case a.id == 0 && a.c == 0 || b.id == 0 && b.c == 0:
		return constDim(0)
	}
	return e.newDim(e.op(spv.OpIMul, e.u.intT(64), e.dimID(a), e.dimID(b)))
}

func (e *fn) add(a, b *dim) *dim {
	switch {
	case a.id == 0 && b.id == 0:
		return constDim(a.c + b.c)
	case a.id == 0 && a.c == 0:
		return b
	case b.id == 0 && b.c == 0:
		return a
	}
	return e.newDim(e.op(spv.OpIAdd, e.u.intT(64), e.dimID(a), e.dimID(b)))
}

// newDim is the dim of value id, carved from a chunk: element loops make
// one per address computed.
func (e *fn) newDim(id spv.ID) *dim {
	d := e.dims.one()
	d.id = id
	return d
}

// index is an index value as a dim.
func (e *fn) index(v *ir.Value) *dim {
	if v.Def != nil && v.Def.Op == ir.OpConstant && v.Type.IsInteger() {
		return constDim(v.Def.Const.Int)
	}
	id := e.value(v)
	if v.Type.Bits() != 64 {
		id = e.op(spv.OpSConvert, e.u.intT(64), id)
	}
	return e.newDim(id)
}

// offset is the element offset of indices idx in m.
func (e *fn) offset(m *memref, idx []*dim) *dim {
	off := constDim(0)
	for i, x := range idx {
		off = e.add(off, e.mul(x, m.stride[i]))
	}
	return off
}

func (e *fn) memref(v *ir.Value) *memref {
	m, _ := e.mems.Get(v)
	return m
}

// ptrType is the pointer type of m's elements.
func (e *fn) ptrType(m *memref) spv.ID {
	if m.ptrT == 0 { // asked for every element access: the type lookup hashes
		m.ptrT = e.u.ptr(m.sc, e.u.mem(m.typ.Elem()))
	}
	return m.ptrT
}

// advance returns ptr moved by off elements (pointer type pt).
func (e *fn) advance(pt, ptr spv.ID, off *dim) spv.ID {
	if off.id == 0 && off.c == 0 {
		return ptr
	}
	return e.op(spv.OpPtrAccessChain, pt, ptr, e.dimID(off))
}

// elemPtr is the address of element off of m.
func (e *fn) elemPtr(m *memref, off *dim) spv.ID {
	if off.id == 0 && off.c == 0 {
		return m.ptr
	}
	return e.op(spv.OpInBoundsPtrAccessChain, e.ptrType(m), m.ptr, e.dimID(off))
}

func (e *fn) subview(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	rest := in.Operands[1:]
	next := func(static int64) *dim {
		if static != ir.Dynamic {
			return constDim(static)
		}
		v := rest[0]
		rest = rest[1:]
		return e.index(v)
	}
	n := len(in.Offsets)
	offs, shape, stride := e.dimLists.take(n)[:0], e.dimLists.take(n)[:0], e.dimLists.take(n)[:0]
	for i := range in.Offsets {
		offs = append(offs, next(in.Offsets[i]))
		size := next(in.Sizes[i])
		if in.Sizes[i] == 0 {
			continue // rank-reducing
		}
		shape = append(shape, size)
		stride = append(stride, m.stride[i])
	}
	e.bindView(in.Result(), m, e.advance(e.ptrType(m), m.ptr, e.offset(m, offs)), shape, stride)
}

// bindView gives v a view of m's storage with a new pointer, shape and
// strides; static entries of v's type win over computed ones.
func (e *fn) bindView(v *ir.Value, m *memref, ptr spv.ID, shape, stride []*dim) {
	t := v.Type
	pin := func(ds []*dim, static []int64) []*dim {
		for i := range ds {
			if static[i] != ir.Dynamic {
				ds[i] = constDim(static[i])
			}
		}
		return ds
	}
	e.mems.Set(v, e.newMemref(memref{typ: t, sc: m.sc, ptr: ptr, shape: pin(shape, t.Shape()), stride: pin(stride, t.Stride())}))
}

// newMemref returns a memref that is m, carved from a chunk.
func (e *fn) newMemref(m memref) *memref {
	p := e.memrefs.one()
	*p = m
	return p
}

// expand splits mode Mode into the modes of the expand shape, with
// canonical strides inside the expanded mode.
func (e *fn) expand(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	rest := in.Operands[1:]
	mode := int(in.Mode)
	n := len(m.shape) - 1 + len(in.Static)
	shape := append(e.dimLists.take(n)[:0], m.shape[:mode]...)
	stride := append(e.dimLists.take(n)[:0], m.stride[:mode]...)
	s := m.stride[mode]
	rt := in.Result().Type
	for i, st := range in.Static {
		p := constDim(st)
		switch {
		case st == ir.Dynamic && len(rest) > 0:
			p = e.index(rest[0])
			rest = rest[1:]
		case st == ir.Dynamic: // inferred: the result type knows it when static
			p = constDim(rt.Shape()[mode+i])
		}
		shape = append(shape, p)
		stride = append(stride, s)
		s = e.mul(s, p)
	}
	shape = append(shape, m.shape[mode+1:]...)
	stride = append(stride, m.stride[mode+1:]...)
	e.bindView(in.Result(), m, m.ptr, shape, stride)
}

// fuse merges modes [Mode, ModeTo] into one.
func (e *fn) fuse(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	from, to := int(in.Mode), int(in.ModeTo)
	size := m.shape[from]
	for i := from + 1; i <= to; i++ {
		size = e.mul(size, m.shape[i])
	}
	n := len(m.shape) - (to - from)
	shape := append(append(append(e.dimLists.take(n)[:0], m.shape[:from]...), size), m.shape[to+1:]...)
	stride := append(append(e.dimLists.take(n)[:0], m.stride[:from+1]...), m.stride[to+1:]...)
	e.bindView(in.Result(), m, m.ptr, shape, stride)
}

// loadGroup binds the memref entry i of a group.
func (e *fn) loadGroup(in *ir.Inst) {
	g := e.groups[in.Operands[0]]
	i := e.index(in.Operands[1])
	i64 := e.u.intT(64)
	i64p := e.u.ptr(spv.StorageClassCrossWorkgroup, i64)
	entry := func(arr spv.ID) spv.ID {
		return e.op(spv.OpLoad, i64, e.advance(i64p, arr, i))
	}
	perEntry := func(ds []*dim) []*dim {
		out := e.dimLists.take(len(ds))
		for k, d := range ds {
			out[k] = d
			if d.id != 0 {
				out[k] = e.newDim(entry(d.id))
			}
		}
		return out
	}
	mt := g.typ.Elem()
	m := e.newMemref(memref{typ: mt, sc: spv.StorageClassCrossWorkgroup, ptr: g.base})
	off := e.add(e.newDim(entry(g.offsets)), g.offset)
	e.bindView(in.Result(), m, e.advance(e.ptrType(m), g.base, off), perEntry(g.shape), perEntry(g.stride))
}

// alloca declares a Workgroup array and binds a view of its first element.
func (e *fn) alloca(in *ir.Inst) {
	t := in.Result().Type
	n := int64(1)
	for i, s := range t.Shape() {
		n = max(n, t.Stride()[i]*s)
	}
	elem := e.u.mem(t.Elem())
	arr := e.u.b.Type(spv.OpTypeArray, uint32(elem), uint32(e.u.i32(n)))
	v := e.u.b.GlobalVariable(e.u.ptr(spv.StorageClassWorkgroup, arr), spv.StorageClassWorkgroup)
	if a, ok := in.Attrs.Int(ir.AttrAlignment); ok {
		e.u.b.Decorate(v, spv.DecorationAlignment, uint32(a))
	}
	m := e.newMemref(memref{typ: t, sc: spv.StorageClassWorkgroup})
	m.ptr = e.op(spv.OpInBoundsAccessChain, e.ptrType(m), v, e.u.i32(0))
	m.shape, m.stride = e.dimLists.take(len(t.Shape())), e.dimLists.take(len(t.Shape()))
	for i := range t.Shape() {
		m.shape[i] = constDim(t.Shape()[i])
		m.stride[i] = constDim(t.Stride()[i])
	}
	e.mems.Set(in.Result(), m)
}

func (e *fn) size(in *ir.Inst) {
	v := in.Operands[0]
	var d *dim
	if g, ok := e.groups[v]; ok {
		d = g.size
	} else {
		d = e.memref(v).shape[in.Mode]
	}
	e.vals.Set(in.Result(), e.convertInt(e.dimID(d), 64, in.Result().Type.Bits()))
}

// convertInt changes the width of an integer.
func (e *fn) convertInt(id spv.ID, from, to int) spv.ID {
	if from == to {
		return id
	}
	return e.op(spv.OpSConvert, e.u.intT(to), id)
}

// loadElem reads element off of m as a register value.
func (e *fn) loadElem(m *memref, off *dim) spv.ID {
	t := m.typ.Elem()
	u := e.u
	switch {
	case u.halfway(t):
		return e.ext(u.floatT(32), spv.CLVloadHalf, e.dimID(off), m.ptr)
	case t.Kind() == ir.KindBF16:
		bits := e.op(spv.OpUConvert, u.intT(32), e.op(spv.OpLoad, u.intT(16), e.elemPtr(m, off)))
		return e.op(spv.OpBitcast, u.floatT(32), e.op(spv.OpShiftLeftLogical, u.intT(32), bits, u.i32(16)))
	case t.Kind() == ir.KindBool:
		return e.op(spv.OpINotEqual, u.boolT(), e.op(spv.OpLoad, u.intT(8), e.elemPtr(m, off)), u.constInt(8, 0))
	}
	return e.op(spv.OpLoad, u.reg(t), e.elemPtr(m, off))
}

// storeElem writes register value x to element off of m, atomically if
// asked.
func (e *fn) storeElem(m *memref, off *dim, x spv.ID, atomic ir.AtomicMode) {
	t := m.typ.Elem()
	u := e.u
	if atomic != ir.NotAtomic {
		e.atomicStore(m, off, x, atomic)
		return
	}
	switch {
	case u.halfway(t):
		e.b.Emit(spv.OpExtInst, u.void(), uint32(u.clStd), uint32(spv.CLVstoreHalf), uint32(x), uint32(e.dimID(off)), uint32(m.ptr))
		return
	case t.Kind() == ir.KindBF16:
		x = e.bf16Bits(x)
	case t.Kind() == ir.KindBool:
		x = e.op(spv.OpSelect, u.intT(8), x, u.constInt(8, 1), u.constInt(8, 0))
	}
	e.b.Emit(spv.OpStore, 0, uint32(e.elemPtr(m, off)), uint32(x))
}

// bf16Bits rounds f32 x to bfloat16 (nearest even) and returns the 16 bits.
func (e *fn) bf16Bits(x spv.ID) spv.ID {
	u := e.u
	i32 := u.intT(32)
	b := e.op(spv.OpBitcast, i32, x)
	odd := e.op(spv.OpBitwiseAnd, i32, e.op(spv.OpShiftRightLogical, i32, b, u.i32(16)), u.i32(1))
	r := e.op(spv.OpIAdd, i32, e.op(spv.OpIAdd, i32, b, u.i32(0x7fff)), odd)
	return e.op(spv.OpUConvert, u.intT(16), e.op(spv.OpShiftRightLogical, i32, r, u.i32(16)))
}
