package opencl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// memref is the C view of a memref value: a pointer plus C expressions
// (literals or variables) for every shape and stride entry.
type memref struct {
	typ           *ir.Type
	ptr           string
	space         string // "global" or "local"
	shape, stride []string
	swz           *swizzle // a view of a swizzled local buffer (ir.AttrSwizzle); nil otherwise
}

// swizzle is where a view of a swizzled buffer lies in it: element
// (offset off) of the view is at byte swizzled((origin + off)·size) of the
// buffer root.
type swizzle struct {
	root   string // the buffer's C array
	origin string // the view's first element, in elements from the root
	shift  int
	// ld is the buffer's leading dimension, and columns whether the view
	// starts at one of its columns: its origin a whole number of them.
	ld      int64
	columns bool
}

// elemAt returns a pointer expression p and an index i such that p[i] is
// element off of m: m's pointer and off, or for a swizzled view the
// element's swizzled address and 0.
func (e *fn) elemAt(m *memref, off string) (ptr, idx string) {
	if m.swz == nil {
		return m.ptr, off
	}
	return e.swizzledAddr(m, off), "0"
}

// elemAddr is the address of element off of m.
func (e *fn) elemAddr(m *memref, off string) string {
	if m.swz == nil {
		return e.text.join("(", m.ptr, " + ", off, ")")
	}
	return e.swizzledAddr(m, off)
}

// columnAddr returns the address of coopmatrix element (tl_r, tl_c) of a
// piece at (x, y) (coopPlace) in a view of a
// swizzled buffer whose columns are each one swizzle period long
// (contiguous rows, ld·size = 2^shift) and that starts at a column: a
// column's permutation is then fixed by its index, and its element costs an
// XOR of the row's bytes instead of the general map's shifts and masks,
// which, paid by every element an f32 fragment reads, slowed the FMA loop.
// False where the view is laid out otherwise.
func (e *fn) columnAddr(m *memref, trans bool, x, y string) (string, bool) {
	if m.swz == nil || !m.swz.columns {
		return "", false
	}
	ld := decimal(int(m.swz.ld))
	if len(m.stride) != 2 || m.stride[0] != "1" || m.stride[1] != ld || m.shape[0] != ld {
		return "", false // rows past a column's end would carry into the permutation's bits
	}
	si := e.u.scalar(m.typ.Elem())
	if m.swz.ld*int64(si.size) != 1<<m.swz.shift {
		return "", false
	}
	row, col := coopPlace(e, x, y, trans)
	colBytes := e.mul(e.text.join("(", e.add(m.swz.origin, e.mul(col, m.stride[1])), ")"), decimal(si.size))
	rowBytes := e.mul(row, decimal(si.size))
	h := e.u.helpers.swizzleColumn(m.swz.shift)
	var room [16]string
	return e.text.join(atRootByte(room[:0], m, si, h, "((uint)(", colBytes, "), (uint)(", rowBytes, "))")...), true
}

// swizzledAddr is the address of element off of a view of a swizzled
// buffer.
func (e *fn) swizzledAddr(m *memref, off string) string {
	var room [32]string
	return e.text.join(e.swizzledAddrParts(room[:0], m, off)...)
}

// swizzledAddrParts appends swizzledAddr(m, off), off given in parts, to
// parts as the parts it joins: an address of a swizzled buffer nests four
// expressions, and joining each of them copied all it nests again.
func (e *fn) swizzledAddrParts(parts []string, m *memref, off ...string) []string {
	si := e.u.scalar(m.typ.Elem())
	var room [32]string
	b := append(room[:0], e.u.helpers.swizzle(m.swz.shift), "((uint)(")
	// The byte offset, mul("(" + add(origin, off) + ")", size): the sum in
	// parentheses is no literal, so only a size of 1 folds.
	size := decimal(si.size)
	if size != "1" {
		b = append(b, "(")
	}
	b = append(addPartsOf(append(b, "("), m.swz.origin, off), ")")
	if size != "1" {
		b = append(b, ") * (", size, ")")
	}
	return atRootByte(parts, m, si, append(b, "))")...)
}

// atRootByte appends to parts the address of m's element type at byte
// offset b (in parts) of the swizzled buffer m views.
func atRootByte(parts []string, m *memref, si *scalarInfo, b ...string) []string {
	parts = append(parts, "((", m.space, " ", si.mem, "*)((", m.space, " uchar*)", m.swz.root, " + ")
	return append(append(parts, b...), "))")
}

// group is the C view of a group parameter (docs/abi.md).
type group struct {
	typ           *ir.Type
	base, offsets string
	shape, stride []string // literal, or the name of a per-entry array
	size, offset  string
}

// mul and add build index arithmetic, folding the literals 0 and 1 so the
// generated code stays readable.
func (e *fn) mul(a, b string) string {
	switch {
	case a == "0" || b == "0":
		return "0"
	case a == "1":
		return b
	case b == "1":
		return a
	}
	return e.text.join("(", a, ") * (", b, ")")
}

func (e *fn) add(a, b string) string {
	var room [3]string
	return e.text.joined(addParts(room[:0], a, b))
}

// addParts appends add(a, b) to parts, unjoined.
func addParts(parts []string, a, b string) []string {
	switch {
	case a == "0":
		return append(parts, b)
	case b == "0":
		return append(parts, a)
	}
	return append(parts, a, " + ", b)
}

// addPartsOf is addParts with b given in parts.
func addPartsOf(parts []string, a string, b []string) []string {
	switch {
	case a == "0":
		return append(parts, b...)
	case isZero(b):
		return append(parts, a)
	}
	return append(append(parts, a, " + "), b...)
}

// isZero reports whether parts join to "0".
func isZero(parts []string) bool {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n == 1 && slices.Contains(parts, "0")
}

// offset returns the element offset of index idx in m.
func (e *fn) offset(m *memref, idx []string) string {
	var room [24]string // the parts of an offset of order 4: no allocation
	return e.text.joined(offsetParts(room[:0], m, idx))
}

// offsetParts appends to parts the element offset of index idx in m, in
// the parts offset joins: the sum, by add, of the products, by mul, of
// each index and stride (the literals 0 and 1 folded as they fold them).
func offsetParts(parts []string, m *memref, idx []string) []string {
	n := len(parts)
	for i, x := range idx {
		s := m.stride[i]
		if x == "0" || s == "0" {
			continue // a zero product: add leaves the sum alone
		}
		if len(parts) > n {
			parts = append(parts, " + ")
		}
		switch {
		case x == "1":
			parts = append(parts, s)
		case s == "1":
			parts = append(parts, x)
		default:
			parts = append(parts, "(", x, ") * (", s, ")")
		}
	}
	if len(parts) == n {
		parts = append(parts, "0")
	}
	return parts
}

// alignment is ir.Alignment of memref value v, found once per function:
// every load of a piece of a panel asks, and the answer walks the chain
// of views down to the panel's allocation.
func (e *fn) alignment(v *ir.Value) int64 {
	for _, a := range e.aligns { // a kernel asks about a handful of views
		if a.v == v {
			return a.align
		}
	}
	a := ir.Alignment(e.f, v)
	e.aligns = append(e.aligns, aligned{v, a})
	return a
}

// aligned is a memref value's alignment.
type aligned struct {
	v     *ir.Value
	align int64
}

// memref returns the view of memref value v.
func (e *fn) memref(v *ir.Value) *memref {
	if m, ok := e.mems.Get(v); ok {
		return m
	}
	panic(fmt.Sprintf("opencl: memref %%%s used before it was written", v.Name))
}

// bindMemref gives v a view whose pointer is a fresh variable equal to ptr.
// Shape and stride expressions that are not literals are copied to
// variables too, so later views never re-evaluate loads.
func (e *fn) bindMemref(v *ir.Value, ptr string, shape, stride []string) {
	t := v.Type
	si := e.u.scalar(t.Elem())
	space := t.Space().String()
	name := e.fresh(v.Name)
	e.put(space, " ", si.mem, "* ", name, " = ", ptr, ";")
	m := e.slab.mems.Hold(memref{typ: t, ptr: name, space: space})
	m.shape, m.stride = e.pinShapeStride(shape, stride, t)
	e.mems.Set(v, m)
}

// pinShapeStride is pinAll of a view's shape and stride expressions (of
// memref type t), in one slice.
func (e *fn) pinShapeStride(shape, stride []string, t *ir.Type) (pinnedShape, pinnedStride []string) {
	out := e.slab.strs.Take(len(shape) + len(stride))
	n := len(shape)
	return e.pinAll(out[:n:n], shape, t.Shape()), e.pinAll(out[n:], stride, t.Stride())
}

// pinAll writes into out (of exprs' length) the static entries of static
// as literals and stores the dynamic ones of exprs in variables.
func (e *fn) pinAll(out, exprs []string, static []int64) []string {
	for i, x := range exprs {
		switch {
		case static[i] != ir.Dynamic:
			out[i] = e.text.itoa(static[i])
		case isIdent(x) || isNumber(x):
			out[i] = x
		default:
			name := e.fresh("d")
			e.put("const long ", name, " = ", x, ";")
			out[i] = name
		}
	}
	return out
}

// isNumber reports whether s is a decimal int64, as strconv.ParseInt
// would, without the error ParseInt allocates for every expression that is
// not one (most of those pinAll sees).
func isNumber(s string) bool {
	digits := s
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	if digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	if len(digits) < 19 { // every 18-digit number is an int64
		return true
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// subview writes a subview: the pointer moves to the offsets, kept modes
// keep their strides, rank-reduced modes (size 0) disappear.
func (e *fn) subview(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	rest := in.Operands[1:]
	next := func(static int64) string {
		if static != ir.Dynamic {
			return e.text.itoa(static)
		}
		v := rest[0]
		rest = rest[1:]
		if m.space == "local" {
			return e.value(v) // local memory is far smaller than 2³¹ elements
		}
		return e.wide(v)
	}
	var offsRoom, shapeRoom, strideRoom [4]string // orders up to 4 need no allocation
	offs, shape, stride := offsRoom[:0], shapeRoom[:0], strideRoom[:0]
	for i := range in.Offsets {
		offs = append(offs, next(in.Offsets[i]))
		size := next(in.Sizes[i])
		if in.Sizes[i] == 0 {
			continue
		}
		shape = append(shape, size)
		stride = append(stride, m.stride[i])
	}
	off := e.offset(m, offs)
	e.bindMemref(in.Result(), e.add(m.ptr, off), shape, stride)
	if m.swz != nil {
		origin := e.fresh("swz")
		e.put("const int ", origin, " = ", e.add(m.swz.origin, off), ";")
		e.memref(in.Result()).swz = &swizzle{root: m.swz.root, origin: origin, shift: m.swz.shift,
			ld: m.swz.ld, columns: m.swz.columns && wholeColumns(offs, m.stride, m.swz.ld)}
	}
}

// wholeColumns reports whether offsets offs along modes of strides stride
// move by whole columns of ld elements: every mode offset is zero or has a
// literal stride that ld divides.
func wholeColumns(offs, stride []string, ld int64) bool {
	for i, o := range offs {
		if o == "0" {
			continue
		}
		s, err := strconv.ParseInt(stride[i], 10, 64)
		if err != nil || ld == 0 || s%ld != 0 {
			return false
		}
	}
	return true
}

// expand writes an expand: mode Mode becomes the modes of the expand shape,
// with canonical strides inside the expanded mode. One entry of the shape
// may be inferred when the others are known.
func (e *fn) expand(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	rest := in.Operands[1:]
	mode := int(in.Mode)
	parts := make([]string, len(in.Static))
	for i, s := range in.Static {
		if s == ir.Dynamic {
			parts[i] = e.value(rest[0])
			rest = rest[1:]
		} else {
			parts[i] = e.text.itoa(s)
		}
	}
	var shape, stride []string
	shape = append(shape, m.shape[:mode]...)
	stride = append(stride, m.stride[:mode]...)
	s := m.stride[mode]
	for _, p := range parts {
		shape = append(shape, p)
		stride = append(stride, s)
		s = e.mul(s, p)
	}
	shape = append(shape, m.shape[mode+1:]...)
	stride = append(stride, m.stride[mode+1:]...)
	e.bindMemref(in.Result(), m.ptr, shape, stride)
	e.memref(in.Result()).swz = m.swz
}

// fuse writes a fuse of modes [Mode, ModeTo] into one.
func (e *fn) fuse(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	from, to := int(in.Mode), int(in.ModeTo)
	size := m.shape[from]
	for i := from + 1; i <= to; i++ {
		size = e.mul(size, m.shape[i])
	}
	shape := append(append(append([]string{}, m.shape[:from]...), size), m.shape[to+1:]...)
	stride := append(append([]string{}, m.stride[:from+1]...), m.stride[to+1:]...)
	e.bindMemref(in.Result(), m.ptr, shape, stride)
	e.memref(in.Result()).swz = m.swz
}

// loadGroup writes the load of a memref from a group.
func (e *fn) loadGroup(in *ir.Inst) {
	g := e.groups[in.Operands[0]]
	i := e.value(in.Operands[1])
	perEntry := func(exprs []string, static []int64) []string {
		out := make([]string, len(exprs))
		for k, x := range exprs {
			if static[k] == ir.Dynamic {
				out[k] = x + "[" + i + "]"
			} else {
				out[k] = x
			}
		}
		return out
	}
	mt := g.typ.Elem()
	ptr := g.base + " + " + g.offsets + "[" + i + "]"
	if g.offset != "0" {
		ptr += " + " + g.offset
	}
	e.bindMemref(in.Result(), ptr, perEntry(g.shape, mt.Shape()), perEntry(g.stride, mt.Stride()))
}

// loadElem returns the C expression reading element off of m in register
// type.
func (e *fn) loadElem(m *memref, off string) string {
	si := e.u.scalar(m.typ.Elem())
	ptr, off := e.elemAt(m, off)
	switch {
	case si.halfway:
		return e.text.join("vload_half(", off, ", ", ptr, ")")
	case si.bf16:
		return e.text.join(e.u.helpers.bf16Load(), "(", ptr, "[", off, "])")
	}
	return e.text.join(ptr, "[", off, "]")
}

// storeElem writes val (register type) to element off of m, atomically if
// asked.
func (e *fn) storeElem(m *memref, off, val string, atomic ir.AtomicMode) error {
	et := m.typ.Elem()
	si := e.u.scalar(et)
	if atomic != ir.NotAtomic {
		return e.atomicStore(m, et, si, off, val, atomic)
	}
	ptr, off := e.elemAt(m, off)
	switch {
	case si.halfway:
		e.put("vstore_half_rte(", val, ", ", off, ", ", ptr, ");")
	case si.bf16:
		e.put(ptr, "[", off, "] = ", e.u.helpers.bf16Store(), "(", val, ");")
	default:
		e.put(ptr, "[", off, "] = ", val, ";")
	}
	return nil
}

// atomicStore writes a relaxed atomic store or atomic add. Complex values
// are updated component by component (pseudo-atomic, as the reference
// allows).
func (e *fn) atomicStore(m *memref, et *ir.Type, si *scalarInfo, off, val string, atomic ir.AtomicMode) error {
	if atomic == ir.AtomicMax || atomic == ir.AtomicMin {
		old, err := e.fetchUpdate(m, off, val, atomic.Op())
		if err == nil {
			e.line("(void)%s;", old)
		}
		return err
	}
	ptr, idx := e.elemAt(m, off)
	p := "&" + ptr + "[" + idx + "]"
	space := m.space
	switch {
	case et.IsComplex():
		real := realOf(si.reg)
		e.atomicReal(real, space, "(("+space+" "+real+"*)("+p+"))", val+".x", atomic)
		e.atomicReal(real, space, "(("+space+" "+real+"*)("+p+") + 1)", val+".y", atomic)
	case et.Kind() == ir.KindF32 || et.Kind() == ir.KindF64:
		e.atomicReal(si.reg, space, p, val, atomic)
	case et.Kind() == ir.KindI32:
		e.line("%s(%s, %s);", map[bool]string{true: "atomic_add", false: "atomic_xchg"}[atomic == ir.AtomicAdd], p, val)
	case et.Kind() == ir.KindI64 || et.Kind() == ir.KindIndex:
		e.u.int64At = true
		e.line("%s(%s, %s);", map[bool]string{true: "atom_add", false: "atom_xchg"}[atomic == ir.AtomicAdd], p, val)
	default:
		return fmt.Errorf("opencl: atomic update of %s is not supported", et)
	}
	return nil
}

func (e *fn) atomicReal(real, space, p, val string, atomic ir.AtomicMode) {
	if real == "double" {
		e.u.int64At = true
	}
	var h string
	if atomic == ir.AtomicAdd {
		h = e.u.helpers.atomicAddReal(real, space)
	} else {
		h = e.u.helpers.atomicStoreReal(real, space)
	}
	e.line("%s(%s, %s);", h, p, val)
}

// alloca declares a local array at kernel scope and binds a view to it.
func (e *fn) alloca(in *ir.Inst) {
	t := in.Result().Type
	si := e.u.scalar(t.Elem())
	n := int64(1)
	for i, s := range t.Shape() {
		n = max(n, t.Stride()[i]*s)
	}
	name := e.fresh("local")
	size, align := e.text.itoa(n), ""
	if a, ok := in.Attrs.Int(ir.AttrAlignment); ok {
		align = e.text.join(" __attribute__((aligned(", e.text.itoa(a), ")))")
	}
	ptr := name
	if si.halfway {
		// half arrays need cl_khr_fp16; reserve ushorts and view them as half.
		e.head.line(1, "local ushort ", name, "_bits[", size, "]", align, ";")
		e.head.line(1, "local half* ", name, " = (local half*)", name, "_bits;")
	} else {
		e.head.line(1, "local ", si.mem, " ", name, "[", size, "]", align, ";")
	}
	m := e.slab.mems.Hold(memref{typ: t, ptr: ptr, space: "local"})
	if s, ok := in.Attrs.Int(ir.AttrSwizzle); ok {
		m.swz = &swizzle{root: ptr, origin: "0", shift: int(s)}
		if st := t.Stride(); len(st) > 1 && st[0] == 1 {
			m.swz.ld, m.swz.columns = st[1], true
		}
	}
	// Local memory's shape and stride are static: pinned, they need no
	// expressions (empty ones, without an allocation up to order 8).
	var room [8]string
	exprs := room[:]
	if k := len(t.Shape()); k > len(room) {
		exprs = make([]string, k)
	}
	m.shape, m.stride = e.pinShapeStride(exprs[:len(t.Shape())], exprs[:len(t.Stride())], t)
	e.mems.Set(in.Result(), m)
}

// index returns the C expressions of index operands.
func (e *fn) index(vs []*ir.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = e.value(v)
	}
	return out
}

// joinArgs is strings.Join with ", ".
func joinArgs(s ...string) string { return strings.Join(s, ", ") }

// swizzleColumn returns the helper that maps the byte offset of a column
// (a multiple of 2^shift) and of a row inside it (below 2^shift) to where
// the byte lives: what swizzle gives for their sum, as the row's bytes
// cannot carry into the bits the column's permutation comes from.
func (h *helperSet) swizzleColumn(shift int) string {
	name := swizzleColumnNames.name(shift)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline uint %s(uint col, uint row) {
    return col + (row ^ (((col >> %d) & 7u) << 4));
}`, name, shift)
	})
}

// swizzle returns the helper that maps a byte offset into a swizzled
// buffer to where the byte lives (ir.AttrSwizzle): the 16-byte chunk
// index within each 128-byte row is XORed with bits shift..shift+2 of the
// offset. Bits from 7 up are left alone, so the map permutes chunks inside
// each row and is its own inverse.
func (h *helperSet) swizzle(shift int) string {
	name := swizzleNames.name(shift)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline uint %s(uint b) {
    return b ^ (((b >> %d) & 7u) << 4);
}`, name, shift)
	})
}

// swizzleNames and swizzleColumnNames are the names of the swizzle
// helpers by shift: every address of a swizzled buffer asks, and joining
// the name was an allocation each.
var swizzleNames, swizzleColumnNames = spellShifts("tl_swizzle_"), spellShifts("tl_swizzle_column_")

// shiftNames are a helper's name for each shift: its prefix and the shift.
type shiftNames struct {
	prefix  string
	spelled [32]string // shifts a 32-bit byte offset can have
}

func spellShifts(prefix string) *shiftNames {
	n := &shiftNames{prefix: prefix}
	for shift := range n.spelled {
		n.spelled[shift] = prefix + decimal(shift)
	}
	return n
}

// name is the helper's name for shift.
func (n *shiftNames) name(shift int) string {
	if uint(shift) < uint(len(n.spelled)) {
		return n.spelled[shift]
	}
	return n.prefix + decimal(shift)
}
