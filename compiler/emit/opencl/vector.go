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

func (e *fn) vectorLoad(in *ir.Inst) {
	m := e.memref(in.Operands[0])
	elems := e.loadVector(m, e.offsetOf(in.Operands[0], in.Operands[1:]), len(in.Results))
	for k, r := range in.Results {
		if e.u.scalar(m.typ.Elem()).halfway || m.typ.Elem().Kind() == ir.KindBF16 {
			e.define(r, elems[k])
		} else {
			e.names.Set(r, elems[k])
		}
	}
}

// loadVector loads n elements of m from element offset off (aligned for
// n elements) with one access and returns the C expression of each in its
// register type.
func (e *fn) loadVector(m *memref, off string, n int) []string {
	v := e.loadVectorBits(m, off, n)
	out := make([]string, n)
	for k := range out {
		head, tail := v.elem(e, k)
		out[k] = e.text.join(head, tail)
	}
	return out
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
	si := e.u.scalar(m.typ.Elem())
	raw, per := rawVector(si, n)
	bits := e.fresh("vec")
	// The cast pointer to the vector, written in parts.
	e.put("const ", raw, " ", bits, " = *(", m.space, " const ", raw, "*)", e.elemAddr(m, off), ";")
	return loadedVector{bits, si, per}
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

func (e *fn) vectorStore(in *ir.Inst) {
	xs, mv, idx := in.VectorStoreOperands()
	vals := make([]string, len(xs))
	for k, x := range xs {
		vals[k] = e.value(x)
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
		parts := make([]string, len(vals))
		for k, x := range vals {
			parts[k] = x
			if si.bf16 {
				parts[k] = e.u.helpers.bf16Store() + "(" + parts[k] + ")"
			}
		}
		val = "(" + raw + ")(" + joinArgs(parts...) + ")"
	}
	// The cast pointer to the vector, written in parts.
	e.put("*(", m.space, " ", raw, "*)", e.elemAddr(m, off), " = ", val, ";")
}
