package opencl

import (
	"fmt"
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// Vector memory access. vector_load and vector_store become one access of
// an OpenCL vector type through a cast pointer, not vloadn/vstoren: those
// only require element alignment, so a compiler must split them, whereas
// the cast promises the vector's alignment (which the instruction's
// semantics guarantee) and becomes one 128-bit load or store. The elements
// travel as the memory's own bits (ushort for f16 without cl_khr_fp16 and
// for bf16, two components per complex element) and are converted
// component by component, as scalar loads and stores convert them.

// rawVector is the OpenCL vector type holding n elements as they are in
// memory, and the number of its components per element.
func rawVector(si *scalarInfo, n int) (typ string, per int) {
	comp := si.mem
	per = 1
	switch {
	case si.halfway:
		comp = "ushort"
	case si.kind == kindComplex:
		comp, per = realOf(si.mem), 2
	}
	if names, ok := vectorNames[comp]; ok && n*per < len(names) {
		return names[n*per], per
	}
	return comp + strconv.Itoa(n*per), per
}

// vectorNames spells the vector types of the components memory holds,
// once: every vector access asks, and joining the name anew was an
// allocation each. (By pointer: a lookup copied the whole array.)
var vectorNames = func() map[string]*[17]string {
	m := map[string]*[17]string{}
	for _, comp := range []string{"char", "short", "int", "long", "half", "ushort", "float", "double"} {
		names := new([17]string)
		for n := range names {
			names[n] = comp + strconv.Itoa(n)
		}
		m[comp] = names
	}
	return m
}()

// components names components [k·per, (k+1)·per) of a vector: ".s3",
// ".s45", ".sab".
func components(k, per int) string {
	if per == 1 {
		return oneComponent[k]
	}
	var b strings.Builder
	b.WriteString(".s")
	for i := k * per; i < (k+1)*per; i++ {
		b.WriteByte("0123456789abcdef"[i])
	}
	return b.String()
}

var oneComponent = [16]string{".s0", ".s1", ".s2", ".s3", ".s4", ".s5", ".s6", ".s7",
	".s8", ".s9", ".sa", ".sb", ".sc", ".sd", ".se", ".sf"}

// oneComponentEnd is oneComponent ending a statement.
var oneComponentEnd = [16]string{".s0;", ".s1;", ".s2;", ".s3;", ".s4;", ".s5;", ".s6;", ".s7;",
	".s8;", ".s9;", ".sa;", ".sb;", ".sc;", ".sd;", ".se;", ".sf;"}

func (e *fn) vectorLoad(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	var room [16]string // the widest vector: no allocation
	elems := e.loadVector(room[:0], m, e.offsetOf(in.Operands[0], in.Operands[1:]), len(in.Results))
	for k, r := range in.Results {
		if e.u.scalar(m.typ.Elem()).halfway || m.typ.Elem().Kind() == ir.KindBF16 {
			e.define(r, elems[k])
		} else {
			e.names.Set(r, elems[k])
		}
	}
}

// loadVector loads n elements of m from element offset off (aligned for
// n elements) with one access and appends the C expression of each in its
// register type to dst.
func (e *fn) loadVector(dst []string, m *memref, off string, n int) []string {
	v := e.loadVectorBits(m, off, n)
	for k := range n {
		head, tail := v.elem(e, k)
		dst = append(dst, e.text.join(head, tail))
	}
	return dst
}

// loadedVector is a vector loadVectorBits loaded: its variable, holding
// the memory's bits, and the elements' type.
type loadedVector struct {
	bits string
	si   *scalarInfo
	per  int // components per element
}

// loadVectorBits writes the load of n elements of m from element offset
// off (aligned for n elements) into a variable of their memory's bits.
func (e *fn) loadVectorBits(m *memref, off string, n int) loadedVector {
	r := e.vectorReader(m, n)
	return r.load(e, off)
}

// vectorReader is what the loads of n-element vectors from one memref
// share, spelled once: a replicated load writes dozens of them.
type vectorReader struct {
	m      *memref
	si     *scalarInfo
	per    int
	decl   string // "const float4 "
	cast   string // " = *(local const float4*)", the vector's pointer follows
	offset string // what the element offset follows when m is not swizzled: "(PTR + "
}

func (e *fn) vectorReader(m *memref, n int) vectorReader {
	si := e.u.scalar(m.typ.Elem())
	raw, per := rawVector(si, n)
	r := vectorReader{m: m, si: si, per: per, decl: e.text.join("const ", raw, " "),
		cast: e.text.join(" = *(", m.space, " const ", raw, "*)")}
	if m.swz == nil {
		r.offset = e.text.join("(", m.ptr, " + ")
	}
	return r
}

// load writes the load of the vector at element offset off (in parts, as
// joined) into a variable of the memory's bits.
func (r *vectorReader) load(e *fn, off ...string) loadedVector {
	bits := e.fresh("vec")
	var room [48]string // elemAddr, in parts
	parts := append(room[:0], r.decl, bits, r.cast)
	if r.offset == "" {
		e.put(append(e.swizzledAddrParts(parts, r.m, off...), ";")...)
		return loadedVector{bits, r.si, r.per}
	}
	parts = append(append(parts, r.offset), off...)
	e.put(append(parts, ");")...)
	return loadedVector{bits, r.si, r.per}
}

// elem is the C expression of element k in its register type, in two
// parts to concatenate (so that a caller writing it need not).
func (v loadedVector) elem(e *fn, k int) (head, tail string) {
	switch {
	case v.si.halfway:
		return fmt.Sprintf("vload_half(%d, (const private half*)&%s)", k, v.bits), ""
	case v.si.bf16:
		return e.u.helpers.bf16Load() + "(" + v.bits + components(k, v.per) + ")", ""
	}
	return v.bits, components(k, v.per)
}

// assign writes "DST] = " and element k, then ";", as one line: dst is
// what precedes the bracket (the element's slot of a coopmatrix, its
// index last). assigned is " = BITS" of the vector, or "" for elements
// that are converted.
func (v loadedVector) assign(e *fn, dst, index, assigned string, k int) {
	if assigned != "" && v.per == 1 {
		e.put(dst, index, assigned, oneComponentEnd[k])
		return
	}
	head, tail := v.elem(e, k)
	e.put(dst, index, "] = ", head, tail, ";")
}

// assigned is "] = BITS" where the vector's elements are its plain
// components (v.assign), else "".
func (v loadedVector) assigned(e *fn) string {
	if v.si.halfway || v.si.bf16 || v.per != 1 {
		return ""
	}
	return e.text.join("] = ", v.bits)
}

func (e *fn) vectorStore(in *ir.Inst) {
	xs, mv, idx := in.VectorStoreOperands()
	var room [16]string // the widest vector: no allocation
	vals := room[:0]
	for _, x := range xs {
		vals = append(vals, e.value(x))
	}
	e.storeVector(e.memref(mv), e.offsetOf(mv, idx), vals)
}

// storeVector stores vals (C expressions in their register type) to
// elements off, off+1, ... of m (aligned for len(vals) elements) with one
// access.
func (e *fn) storeVector(m *memref, off string, vals []string) {
	si := e.u.scalar(m.typ.Elem())
	raw, _ := rawVector(si, len(vals))
	var val string
	if si.halfway {
		// Without cl_khr_fp16 no half variable may exist: the bits are
		// written into a ushort vector.
		val = e.fresh("vec")
		e.line("%s %s;", raw, val)
		for k, x := range vals {
			e.line("vstore_half_rte(%s, %d, (private half*)&%s);", x, k, val)
		}
	} else {
		val = e.vectorValue(raw, vals, si.bf16)
	}
	// The cast pointer to the vector, written in parts.
	e.put("*(", m.space, " ", raw, "*)", e.elemAddr(m, off), " = ", val, ";")
}

// vectorValue is the C vector of C type raw made of vals, each converted
// to bf16 bits first when bf16 is set, joined in e.text.
func (e *fn) vectorValue(raw string, vals []string, bf16 bool) string {
	var room [3 + 5*16 + 1]string // the parts of the widest vector: no allocation
	parts := append(room[:0], "(", raw, ")(")
	for k, x := range vals {
		if k > 0 {
			parts = append(parts, ", ")
		}
		if bf16 {
			parts = append(parts, e.u.helpers.bf16Store(), "(", x, ")")
		} else {
			parts = append(parts, x)
		}
	}
	return e.text.join(append(parts, ")")...)
}
