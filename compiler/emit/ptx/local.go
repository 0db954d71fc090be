package ptx

import (
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Local memory is the shared window: each alloca is a .shared array of
// the module, named after its kernel, and its views are addressed in 32
// bits (ld.shared, st.shared, ldmatrix and cp.async take such addresses),
// as NVVM addresses the OpenCL C's local arrays.

// alloca declares the shared array of a local alloca and binds a view to
// its first element.
func (e *fn) alloca(in *ir.Inst) {
	t := in.Result().Type
	n := int64(1)
	for i, s := range t.Shape() {
		n = max(n, t.Stride()[i]*s)
	}
	align := t.Elem().Size()
	if a, ok := in.Attrs.Int(ir.AttrAlignment); ok && a > align {
		align = a
	}
	name := e.k.Symbol + "_local" + itoa(e.locals)
	e.locals++
	e.shared = append(e.shared, ".shared .align "+i64toa(align)+" .b8 "+name+"["+i64toa(n*t.Elem().Size())+"];\n"...)
	m := e.newMemref(t, e.pure(b32, "mov.u32", name))
	if s, ok := in.Attrs.Int(ir.AttrSwizzle); ok {
		m.swz = &swizzle{root: m.ptr, origin: "0", outer0: "0", shift: int(s), originPeriods8: true}
	}
	e.mems.Set(in.Result(), m)
}

// swizzle is where a view of a swizzled buffer (ir.AttrSwizzle) lies in
// it. The map XORs the 16-byte chunk index within each 128-byte row with
// bits shift..shift+2 of the byte offset; offsets along modes whose
// strides are multiples of untouched bytes (a pipeline's stages, whole
// swizzle periods of columns) pass through it unchanged, so they are kept
// apart and added after it, once per view instead of once per address.
// Element off of the view, off = inner + outer by modes, is at byte
// swizzled((origin + inner)·size) + (outer0 + outer)·size of the buffer,
// whose address is root.
type swizzle struct {
	root           string // b32, the buffer's shared address
	origin, outer0 string // b32 or immediates, in elements from root
	shift          int
	// originPeriods8: origin is known to be a multiple of 8 periods of
	// the map (8·2^shift bytes), which columnAddress needs.
	originPeriods8 bool
}

// untouched is the alignment, in bytes, of offsets that the swizzle with
// this shift passes through unchanged: such an offset neither changes the
// bits the map reads (shift..shift+2) nor the chunk bits it writes (4..6),
// nor carries into them.
func (s *swizzle) untouched() int64 { return int64(1) << max(s.shift+3, 7) }

// split sorts the modes of m (a view of a swizzled buffer) into those
// whose offsets the swizzle passes through (outer) and the others.
func (s *swizzle) split(m *memref) (outer modes) {
	for i, st := range m.stride {
		if n, ok := immOf(st); ok && n*m.elem.Size()%s.untouched() == 0 {
			outer |= 1 << i
		}
	}
	return outer
}

// modes is a set of a memref's modes, mode i bit i (a memref has far
// fewer than 64).
type modes uint64

func (s modes) has(i int) bool { return s&(1<<i) != 0 }

// moved is the swizzle of the view of m at element offsets offs (32
// bits) along its modes.
// mults are a known multiple of each offset (0 where it is 0).
func (s *swizzle) moved(e *fn, m *memref, offs []string, mults []int64) *swizzle {
	outer := s.split(m)
	var bufs [4][4]string
	in, out, inS, outS := bufs[0][:0], bufs[1][:0], bufs[2][:0], bufs[3][:0]
	periods8 := s.originPeriods8
	for i, o := range offs {
		if outer.has(i) {
			out, outS = append(out, o), append(outS, m.stride[i])
			continue
		}
		in, inS = append(in, o), append(inS, m.stride[i])
		st, static := immOf(m.stride[i])
		periods8 = periods8 && static && (mults[i] == 0 || mults[i]*st*m.elem.Size()%(8<<s.shift) == 0)
	}
	return &swizzle{root: s.root, shift: s.shift, originPeriods8: periods8,
		origin: e.sum32(s.origin, e.linear(in, inS, 32)), outer0: e.sum32(s.outer0, e.linear(out, outS, 32))}
}

// columnsPerPeriod is the leading dimension of m, a view of a swizzled
// buffer, and how many of its columns one period of the map (2^shift
// bytes) holds, where that is a whole number: contiguous rows, ld·size a
// power of two from a 16-byte chunk to the period. Within such a column
// the map XORs a row's bytes with a mask that the column's place in 8
// periods fixes.
func (m *memref) columnsPerPeriod() (ld, n int64, ok bool) {
	if len(m.stride) < 2 || m.stride[0] != "1" {
		return 0, 0, false
	}
	ld, ok = immOf(m.stride[1])
	bytes := ld * m.elem.Size()
	if !ok || bytes < 16 || bytes&(bytes-1) != 0 || bytes > int64(1)<<m.swz.shift {
		return 0, 0, false
	}
	return ld, int64(1) << m.swz.shift / bytes, true
}

// columnAddress is the address of element (row, col) of m, a view of a
// swizzled buffer whose columns lie within periods of the map
// (columnsPerPeriod), starting at a multiple of 8 periods, whose row is
// within its column and whose column's register part is a multiple of 8
// periods (colAligned(8·columns a period) holds): the map's bits then
// come from col's constant part alone, so the row's bytes are XORed with
// a constant once per lane and the rest of the mask folds into the
// column's constant offset, as NVVM folds the OpenCL C's per-column map
// (swizzleColumn). ok is false where m is not such a view.
func (e *fn) columnAddress(m *memref, row, col affine, colAligned func(n int64) bool) (address, bool) {
	if m.swz == nil {
		return address{}, false
	}
	ld, perPeriod, ok := m.columnsPerPeriod()
	if !ok || !m.swz.originPeriods8 || len(m.shape) != 2 || m.shape[0] != i64toa(ld) ||
		col.base != "" && (colAligned == nil || !colAligned(8*perPeriod)) {
		return address{}, false
	}
	size := m.elem.Size()
	colBytes, within := col.off*ld*size, ld*size-1
	mask := swizzleBits(colBytes, m.swz.shift)
	rowBytes := e.scaled(e.operand(row), size)
	if mask&within != 0 {
		rowBytes = e.pure(b32, "xor.b32", rowBytes, i64toa(mask&within))
	}
	colElems := e.sum32(m.swz.origin, e.scaled(operandOr0(col.base), ld))
	base := e.sum32(m.swz.root, e.scaled(e.sum32(m.swz.outer0, colElems), size))
	return e.plusBytes(e.sum32(base, rowBytes), (colBytes^mask)&^within, 32), true
}

// alignedBase is columnAddress's colAligned for column a = v + constant:
// a's register part is a multiple of n where v is and a's constant part
// is (ir.Divisible knows v, not the part affineOf splits off).
func alignedBase(v *ir.Value, a affine) func(n int64) bool {
	return func(n int64) bool { return a.off%n == 0 && ir.Divisible(v, n) }
}

// swizzledAddress is the address of the element at indices idx (32
// bits) of m, a view of a swizzled buffer.
func (e *fn) swizzledAddress(m *memref, idx []affine) address {
	outer := m.swz.split(m)
	var affs [2][4]affine
	var strs [2][4]string
	in, out, inS, outS := affs[0][:0], affs[1][:0], strs[0][:0], strs[1][:0]
	for i, a := range idx {
		if outer.has(i) {
			out, outS = append(out, a), append(outS, m.stride[i])
		} else {
			in, inS = append(in, a), append(inS, m.stride[i])
		}
	}
	a, o := e.offsetOf(inS, in, 32), e.offsetOf(outS, out, 32)
	size := m.elem.Size()
	after := a.off*size + o.off*size
	before := int64(0)
	if a.off*size%m.swz.untouched() != 0 {
		before, after = a.off*size, o.off*size
	}
	bytes := e.sum32(e.scaled(e.sum32(m.swz.origin, operandOr0(a.base)), size), i64toa(before))
	base := e.sum32(m.swz.root, e.scaled(e.sum32(m.swz.outer0, operandOr0(o.base)), size))
	var at string
	if n, ok := immOf(bytes); ok {
		at = e.sum32(base, i64toa(n^swizzleBits(n, m.swz.shift)))
	} else {
		at = e.sum32(base, e.pure(b32, "xor.b32", bytes, e.swizzleMask(bytes, m.swz.shift)))
	}
	return e.plusBytes(at, after, 32)
}

// swizzleBits is what the map XORs byte offset n with: bits
// shift..shift+2 moved to the chunk bits 4..6. swizzleMask writes it for
// a register.
func swizzleBits(n int64, shift int) int64 { return ((n >> shift) & 7) << 4 }

// swizzleMask is swizzleBits of register x, by a shift and a mask as
// NVVM writes it (ptxas writes bfe as two instructions, then the shl).
func (e *fn) swizzleMask(x string, shift int) string {
	return e.pure(b32, "and.b32", e.pure(b32, "shr.u32", x, itoa(shift-4)), "112") // shift ≥ 7 (ir.AttrSwizzle)
}

// operandOr0 is register x, or 0 where there is none.
func operandOr0(x string) string {
	if x == "" {
		return "0"
	}
	return x
}

// sum32 is x + y of 32 bits, folded where both are immediates or one is
// zero.
func (e *fn) sum32(x, y string) string {
	xn, xok := immOf(x)
	yn, yok := immOf(y)
	switch {
	case xok && yok:
		return i64toa(xn + yn)
	case xok && xn == 0:
		return y
	case yok && yn == 0:
		return x
	case xok:
		return e.pure(b32, "add.s32", y, x)
	}
	return e.pure(b32, "add.s32", x, y)
}

// barrier is the work-group barrier: bar.sync orders local memory among
// the work-group's threads; a global fence adds membar.cta before it.
func (e *fn) barrier(in *ir.Inst) {
	if in.Fence&ir.FenceGlobal != 0 {
		e.op("membar.cta")
	}
	e.op("bar.sync", "0")
}

// asyncCopy is one cp.async of 4, 8 or 16 bytes from global to shared
// memory, the count of valid elements as its source size (cp.async fills
// the rest with zeros), as the OpenCL C writer's tl_cp_async helpers:
// 16-byte copies bypass L1 (.cg), narrower ones cannot (.ca).
func (e *fn) asyncCopy(in *ir.Inst) error {
	if e.t.Async != target.AsyncPTX {
		return unsupported("async_copy without cp.async")
	}
	src, srcIdx, dst, dstIdx, valid := in.AsyncCopyOperands()
	size := src.Type.Elem().Size()
	bytes := in.Count * size
	if bytes != 4 && bytes != 8 && bytes != 16 {
		return unsupported("async_copy of %d bytes", bytes)
	}
	cache := "ca"
	if bytes == 16 {
		cache = "cg"
	}
	to, from := e.address(dst, dstIdx), e.address(src, srcIdx)
	srcSize := ""
	if n, ok := e.immediate(valid); !ok || n != in.Count {
		srcSize = e.scaled(e.intAs(valid, 32), size)
	}
	e.begin("cp.async.", cache, ".shared.global")
	e.at(to)
	e.at(from)
	e.arg(i64toa(bytes))
	if srcSize != "" {
		e.arg(srcSize)
	}
	e.end()
	return nil
}
