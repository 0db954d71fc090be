package ptx

import (
	"math"
	"strconv"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/ir"
)

// memref is a memref as PTX operands: the address of its first element
// and its shape and stride entries, immediates where static and 64-bit
// registers (the long arguments) where dynamic. A global memref's address
// is 64 bits; local memory (local.go) is the shared window, addressed in
// 32 bits, and a view of a swizzled buffer has swz instead of ptr.
type memref struct {
	elem          *ir.Type
	ptr           string
	shared        bool
	swz           *swizzle
	shape, stride []string
}

// space is the PTX state space of m's elements.
func (m *memref) space() string {
	if m.shared {
		return "shared"
	}
	return "global"
}

// addrWidth is the bits of m's addresses and element offsets: local
// memory is far smaller than 2^31 bytes.
func (m *memref) addrWidth() int {
	if m.shared {
		return 32
	}
	return 64
}

// newMemref is the view of a memref of type t at ptr, its dynamic entries
// left for the arguments to fill.
func (e *fn) newMemref(t *ir.Type, ptr string) *memref {
	m := e.slab.mems.Hold(memref{elem: t.Elem(), ptr: ptr, shared: t.Space() == ir.Local})
	m.shape, m.stride = e.slab.strs.Take(len(t.Shape())), e.slab.strs.Take(len(t.Stride()))
	for i, s := range t.Shape() {
		m.shape[i] = i64toa(s)
	}
	for i, s := range t.Stride() {
		m.stride[i] = i64toa(s)
	}
	return m
}

// mem returns the view of memref value v; groups have none.
func (e *fn) mem(v *ir.Value) *memref {
	if m, ok := e.mems.Get(v); ok && m != nil {
		return m
	}
	panic(unsupported("memref %%%s of type %s (only memrefs of parameters and local memory)", v.Name, v.Type))
}

// subview moves the pointer to the offsets, computed in 64 bits as the
// OpenCL C writer computes global offsets; kept modes keep their strides.
func (e *fn) subview(in *ir.Inst) {
	m := e.mem(in.Operands[0])
	rest := in.Operands[1:]
	var multBuf [4]int64
	mults := multBuf[:0] // a known multiple of each offset (0: it is 0)
	next := func(static int64, offset bool) string {
		if static != ir.Dynamic {
			if offset {
				mults = append(mults, static)
			}
			return i64toa(static)
		}
		v := rest[0]
		rest = rest[1:]
		if offset {
			mults = append(mults, ir.KnownMultiple(v))
		}
		return e.intAs(v, m.addrWidth())
	}
	var bufs [2][4]string
	offs, strides := bufs[0][:0], bufs[1][:0]
	sub := e.slab.mems.Hold(memref{elem: m.elem, shared: m.shared})
	sub.shape, sub.stride = e.slab.strs.Take(len(in.Offsets))[:0], e.slab.strs.Take(len(in.Offsets))[:0]
	for i := range in.Offsets {
		offs = append(offs, next(in.Offsets[i], true))
		strides = append(strides, m.stride[i])
		size := next(in.Sizes[i], false)
		if in.Sizes[i] == 0 {
			continue
		}
		sub.shape = append(sub.shape, size)
		sub.stride = append(sub.stride, m.stride[i])
	}
	w := m.addrWidth()
	if m.swz != nil {
		sub.swz = m.swz.moved(e, m, offs, mults)
	} else {
		sub.ptr = e.advance(m, e.linear(offs, strides, w), w)
	}
	e.mems.Set(in.Result(), sub)
}

// offset is the element offset of index idx in memref value mv as a
// register part plus a constant (the indices' constants times static
// strides, for the brackets), of 32 bits where the OpenCL C writer's
// offsetOf computes the offset in int (every index narrow, every stride
// static, every term and the sum provably an int32) and the register
// part is an int32 too, else of 64.
func (e *fn) offset(mv *ir.Value, idx []*ir.Value) affine {
	m := e.mem(mv)
	strides := mv.Type.Stride()
	w := m.addrWidth()
	if _, inInt, sum := opencl.OffsetInInt(&e.ranges, idx, strides); inInt && !m.shared {
		var c int64
		for i, v := range idx {
			c += e.constOf(v) * strides[i]
		}
		if (ir.Range{Lo: sum.Lo - c, Hi: sum.Hi - c}).Fits32() {
			w = 32
		}
	}
	var buf [4]affine
	return e.offsetOf(m.stride, e.affines(buf[:0], idx, w), w)
}

// affines appends the indices idx as affine operands of w bits to as.
func (e *fn) affines(as []affine, idx []*ir.Value, w int) []affine {
	for _, v := range idx {
		as = append(as, e.affineOf(v, w))
	}
	return as
}

// offsetOf is the element offset of the element at indices idx (of w
// bits) along modes of the strides as a register part plus a constant.
func (e *fn) offsetOf(strides []string, idx []affine, w int) affine {
	var c int64
	var buf [4]string
	xs := buf[:0]
	for i, a := range idx {
		s, static := immOf(strides[i])
		switch {
		case !static:
			xs = append(xs, e.operand(a))
		case a.base == "":
			xs, c = append(xs, "0"), c+a.off*s
		default:
			xs, c = append(xs, a.base), c+a.off*s
		}
	}
	reg := e.linear(xs, strides, w)
	if n, ok := immOf(reg); ok {
		return affine{off: c + n, w: w}
	}
	return affine{reg, c, w}
}

// constOf is the constant of integer value v: the immediate, or the
// constant an affine value holds apart.
func (e *fn) constOf(v *ir.Value) int64 {
	x := e.get(v)
	if n, ok := immOf(x.x()); ok {
		return n
	}
	return x.off
}

// linear is Σ xs[i]·ss[i] in w bits: immediate products fold into one
// constant, the rest are multiply-adds, each written once per scope.
func (e *fn) linear(xs, ss []string, w int) string {
	var c int64
	acc := ""
	for i, x := range xs {
		s := ss[i]
		xi, xImm := immOf(x)
		si, sImm := immOf(s)
		switch {
		case xImm && sImm:
			c += xi * si
		case xImm && xi == 0 || sImm && si == 0:
		default:
			if xImm { // the register first
				x, s, sImm, si = s, x, true, xi
			}
			switch {
			case sImm && si == 1 && acc == "":
				acc = x
			case sImm && si == 1:
				acc = e.pure(widthClass(w), addS.of(w), acc, x)
			case acc == "":
				acc = e.pure(widthClass(w), mulLoS.of(w), x, s)
			default:
				acc = e.pure(widthClass(w), madLoS.of(w), x, s, acc)
			}
		}
	}
	switch {
	case acc == "":
		return i64toa(c)
	case c != 0:
		return e.pure(widthClass(w), addS.of(w), acc, i64toa(c))
	}
	return acc
}

// advance is m's pointer moved by off elements (off of w bits).
func (e *fn) advance(m *memref, off string, w int) string {
	size := m.elem.Size()
	if m.shared {
		return e.pure(b32, "add.s32", m.ptr, e.scaled(e.resize(off, w, 32), size))
	}
	if n, ok := immOf(off); ok {
		if n == 0 {
			return m.ptr
		}
		return e.pure(b64, "add.s64", m.ptr, i64toa(n*size))
	}
	var bytes string
	if w == 32 {
		bytes = e.pure(b64, "mul.wide.s32", off, i64toa(size))
	} else {
		bytes = e.pure(b64, "mul.lo.s64", off, i64toa(size))
	}
	return e.pure(b64, "add.s64", m.ptr, bytes)
}

// scaled is 32-bit operand x times size.
func (e *fn) scaled(x string, size int64) string {
	if n, ok := immOf(x); ok {
		return i64toa(n * size)
	}
	if size == 1 {
		return x
	}
	return e.pure(b32, "mul.lo.s32", x, i64toa(size))
}

// address is the PTX address of element idx of memref value mv: the
// offset's constant part folds into the brackets, an immediate of 32
// bits.
func (e *fn) address(mv *ir.Value, idx []*ir.Value) address {
	m := e.mem(mv)
	if m.swz != nil {
		var buf [4]affine
		return e.swizzledAddress(m, e.affines(buf[:0], idx, 32))
	}
	return e.addressAt(m, e.offset(mv, idx))
}

// elementAddress is the address of the element of m at indices idx (of w
// bits).
func (e *fn) elementAddress(m *memref, idx []affine, w int) address {
	if m.swz != nil {
		return e.swizzledAddress(m, idx)
	}
	return e.addressAt(m, e.offsetOf(m.stride, idx, w))
}

// addressAt is the address of element a of m, not a swizzled view.
func (e *fn) addressAt(m *memref, a affine) address {
	ptr := m.ptr
	if a.base != "" {
		ptr = e.advance(m, a.base, a.w)
	}
	return e.plusBytes(ptr, a.off*m.elem.Size(), m.addrWidth())
}

// plusBytes is the address ptr (of w bits) plus a constant number of
// bytes, in the brackets where it is an immediate of 32 bits.
func (e *fn) plusBytes(ptr string, bytes int64, w int) address {
	if bytes < math.MinInt32 || bytes > math.MaxInt32 {
		return address{ptr: e.pure(widthClass(w), addS.of(w), ptr, i64toa(bytes))}
	}
	return address{ptr, bytes}
}

// address is a PTX address operand: [ptr], or [ptr+off] (off an
// immediate of 32 bits), written as an instruction's operand without
// being spelled apart.
type address struct {
	ptr string
	off int64
}

// append appends a as spelled to b.
func (a address) append(b []byte) []byte {
	b = append(b, '[')
	b = append(b, a.ptr...)
	if a.off != 0 {
		b = append(b, '+')
		b = strconv.AppendInt(b, a.off, 10)
	}
	return append(b, ']')
}

// memType is how elements of type t travel: the PTX type of one component
// of memory, components per element and their register class.
func memType(t *ir.Type) (typ string, per int, c class) {
	switch t.Kind() {
	case ir.KindF16, ir.KindBF16:
		return "b16", 1, b16
	case ir.KindF32:
		return "f32", 1, f32
	case ir.KindF64:
		return "f64", 1, f64
	case ir.KindC32:
		return "f32", 2, f32
	case ir.KindC64:
		return "f64", 2, f64
	case ir.KindI32:
		return "u32", 1, b32
	case ir.KindI64, ir.KindIndex:
		return "u64", 1, b64
	}
	panic(unsupported("memory of %s", t))
}

func (e *fn) load(in *ir.Inst) error {
	r := in.Result()
	if r.Type == ir.Index && e.narrow(r) {
		return unsupported("a narrow index load")
	}
	addr := e.address(in.Operands[0], in.Operands[1:])
	v := e.fresh(r)
	e.access("ld", e.mem(in.Operands[0]).space(), addr, r.Type, v.each())
	e.vals.Set(r, v)
	return nil
}

func (e *fn) store(in *ir.Inst) error {
	if in.Atomic != ir.NotAtomic {
		return unsupported("atomic stores")
	}
	x := in.Operands[0]
	addr := e.address(in.Operands[1], in.Operands[2:])
	var buf [2]string
	e.access("st", e.mem(in.Operands[1]).space(), addr, x.Type, e.registers(buf[:0], x))
	return nil
}

// registers appends value v's registers to regs, an integer immediate
// moved into one (st takes registers).
func (e *fn) registers(regs []string, v *ir.Value) []string {
	x := e.value(v)
	if isImm(x.x()) {
		return append(regs, e.def(x.cls, movOf(x.cls), x.x()))
	}
	return append(regs, x.each()...)
}

func (e *fn) vectorLoad(in *ir.Inst) error {
	addr := e.address(in.Operands[0], in.Operands[1:])
	var buf [8]string
	regs := buf[:0]
	for _, r := range in.Results {
		v := e.fresh(r)
		e.vals.Set(r, v)
		regs = append(regs, v.each()...)
	}
	e.access("ld", e.mem(in.Operands[0]).space(), addr, in.Results[0].Type, regs)
	return nil
}

func (e *fn) vectorStore(in *ir.Inst) error {
	xs, mv, idx := in.VectorStoreOperands()
	addr := e.address(mv, idx)
	var buf [8]string
	regs := buf[:0]
	for _, x := range xs {
		regs = e.registers(regs, x)
	}
	e.access("st", e.mem(mv).space(), addr, xs[0].Type, regs)
	return nil
}

// access writes one ld or st of the components regs of elements of type
// t at addr of state space space: up to four components in one vector
// access (the lowering aligns vectors to their size), eight 16-bit ones as
// four 32-bit words.
func (e *fn) access(kind, space string, addr address, t *ir.Type, regs []string) {
	typ, _, _ := memType(t)
	n := len(regs)
	switch {
	case n == 1, n == 2, n == 4:
		e.guardedAccess("", kind, space, typ, addr, regs...)
	case n == 8 && typ == "b16":
		e.packedAccess(kind, space, addr, regs)
	default:
		panic(unsupported("a vector of %d %s", n, typ))
	}
}

// vectorTypes are the prefixes of the types of vector accesses by their
// number of components.
var vectorTypes = [...]string{2: "v2.", 4: "v4."}

// guardedAccess writes ld.SPACE.TYPE reg, [addr] or st.SPACE.TYPE [addr],
// reg under predicate guard ("" for none), a vector access (.v2, .v4) of
// regs where there are several.
func (e *fn) guardedAccess(guard, kind, space, typ string, addr address, regs ...string) {
	at, after, vec := "", "", vectorTypes[0]
	if guard != "" {
		at, after = "@", " "
	}
	if len(regs) > 1 {
		vec = vectorTypes[len(regs)]
	}
	e.begin(at, guard, after, kind, ".", space, ".", vec, typ)
	if kind == "st" {
		e.at(addr)
	}
	if len(regs) > 1 {
		e.group(regs...)
	} else {
		e.arg(regs[0])
	}
	if kind == "ld" {
		e.at(addr)
	}
	e.end()
}

// packedAccess moves eight 16-bit components as four 32-bit words (PTX
// vectors have at most four components), two halves per word, the first
// in the low half as memory has it.
func (e *fn) packedAccess(kind, space string, addr address, regs []string) {
	var words [4]string
	for i := range words {
		words[i] = e.reg(b32)
	}
	if kind == "st" {
		for i, w := range words {
			e.begin("mov.b32")
			e.arg(w)
			e.group(regs[2*i], regs[2*i+1])
			e.end()
		}
	}
	e.guardedAccess("", kind, space, "b32", addr, words[:]...)
	if kind == "ld" {
		for i, w := range words {
			e.begin("mov.b32")
			e.group(regs[2*i], regs[2*i+1])
			e.arg(w)
			e.end()
		}
	}
}
