package spirv

import (
	"strconv"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
)

// signature is the kernel's parameter list (docs/abi.md) and how each
// parameter id binds to the function's values once the ids exist.
type signature struct {
	types []spv.ID
	binds []func(spv.ID)
}

func (s *signature) bind(params []spv.ID) {
	for i, p := range params {
		s.binds[i](p)
	}
}

// signature builds the parameter list and records the argument ABI, in the
// order of the OpenCL C back end's kernels.
func (e *fn) signature(k *opencl.Kernel) *signature {
	n := opencl.ArgCount(e.f.Params)
	k.Args = make([]opencl.Arg, 0, n)
	s := &signature{types: make([]spv.ID, 0, n), binds: make([]func(spv.ID), 0, n)}
	add := func(a opencl.Arg, t spv.ID, bind func(spv.ID)) {
		a.Name = argName(len(k.Args))
		k.Args = append(k.Args, a)
		s.types = append(s.types, t)
		s.binds = append(s.binds, bind)
	}
	for i, p := range e.f.Params {
		switch p.Type.Kind() {
		case ir.KindMemref:
			e.memrefParam(p, i, add)
		case ir.KindGroup:
			e.groupParam(p, i, add)
		default:
			a := opencl.Arg{Role: opencl.RoleScalar, Param: i, Elem: p.Type.String(), CType: cType(p.Type, e.u.target.NativeF16)}
			add(a, e.u.arg(p.Type), func(id spv.ID) { e.vals.Set(p, e.fromArg(id, p.Type)) })
		}
	}
	return s
}

// argName is the name of argument i: "a" and its number.
func argName(i int) string {
	if i < len(argNames) {
		return argNames[i]
	}
	return "a" + strconv.Itoa(i)
}

var argNames = [...]string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12", "a13", "a14", "a15"}

// fromArg converts a scalar argument to its register value.
func (e *fn) fromArg(id spv.ID, t *ir.Type) spv.ID {
	switch {
	case t.Kind() == ir.KindBool:
		return e.op(spv.OpINotEqual, e.u.boolT(), id, e.u.i32(0))
	case t.Kind() == ir.KindF16 || t.Kind() == ir.KindBF16:
		return e.roundTo(id, t) // passed as float: round to the declared precision
	}
	return id
}

type addArg func(a opencl.Arg, t spv.ID, bind func(spv.ID))

func (e *fn) memrefParam(p *ir.Value, param int, add addArg) {
	t := p.Type
	m := e.newMemref(memref{typ: t, sc: spv.StorageClassCrossWorkgroup})
	ptr := e.u.ptr(m.sc, e.u.mem(t.Elem()))
	add(opencl.Arg{Role: opencl.RoleData, Param: param, Elem: t.Elem().String(), CType: "global " + memCType(t.Elem(), e.u.target.NativeF16) + "*"},
		ptr, func(id spv.ID) { m.ptr = id })
	m.shape = e.dynamicDims(t.Shape(), func(i int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleShape, Param: param, Mode: i, CType: "long"}, e.u.intT(64), bind)
	})
	m.stride = e.dynamicDims(t.Stride(), func(i int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleStride, Param: param, Mode: i, CType: "long"}, e.u.intT(64), bind)
	})
	e.mems.Set(p, m)
}

func (e *fn) groupParam(p *ir.Value, param int, add addArg) {
	t := p.Type
	mt := t.Elem()
	g := &group{typ: t}
	i64p := e.u.ptr(spv.StorageClassCrossWorkgroup, e.u.intT(64))
	add(opencl.Arg{Role: opencl.RoleGroupBase, Param: param, Elem: mt.Elem().String(), CType: "global " + memCType(mt.Elem(), e.u.target.NativeF16) + "*"},
		e.u.ptr(spv.StorageClassCrossWorkgroup, e.u.mem(mt.Elem())), func(id spv.ID) { g.base = id })
	add(opencl.Arg{Role: opencl.RoleGroupOffset, Param: param, CType: "global const long*"}, i64p, func(id spv.ID) { g.offsets = id })
	g.shape = e.dynamicDims(mt.Shape(), func(i int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleGroupShape, Param: param, Mode: i, CType: "global const long*"}, i64p, bind)
	})
	g.stride = e.dynamicDims(mt.Stride(), func(i int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleGroupStride, Param: param, Mode: i, CType: "global const long*"}, i64p, bind)
	})
	g.size = e.dynamicDims([]int64{t.GroupSize()}, func(_ int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleGroupSize, Param: param, CType: "long"}, e.u.intT(64), bind)
	})[0]
	g.offset = e.dynamicDims([]int64{t.GroupOffset()}, func(_ int, bind func(spv.ID)) {
		add(opencl.Arg{Role: opencl.RoleGroupElemOf, Param: param, CType: "long"}, e.u.intT(64), bind)
	})[0]
	e.groups[p] = g
}

// dynamicDims returns static entries as constants and declares an argument
// (through declare) for each dynamic one; its dim is filled in when the
// parameter ids exist.
func (e *fn) dynamicDims(vs []int64, declare func(i int, bind func(spv.ID))) []*dim {
	out := e.dimLists.take(len(vs))
	for i, v := range vs {
		d := e.dims.one()
		d.c = v
		out[i] = d
		if v == ir.Dynamic {
			declare(i, func(id spv.ID) { d.id = id })
		}
	}
	return out
}

// cType spells the OpenCL C type of a kernel argument, for Arg.CType.
func cType(t *ir.Type, nativeF16 bool) string {
	switch t.Kind() {
	case ir.KindBool:
		return "int"
	case ir.KindI8:
		return "char"
	case ir.KindI16:
		return "short"
	case ir.KindI32:
		return "int"
	case ir.KindI64, ir.KindIndex:
		return "long"
	case ir.KindF16:
		if nativeF16 {
			return "half"
		}
		return "float"
	case ir.KindBF16, ir.KindF32:
		return "float"
	case ir.KindF64:
		return "double"
	case ir.KindC32:
		return "float2"
	case ir.KindC64:
		return "double2"
	}
	return t.String()
}

// memCType spells the OpenCL C element type behind a data pointer.
func memCType(t *ir.Type, nativeF16 bool) string {
	switch t.Kind() {
	case ir.KindBool:
		return "char"
	case ir.KindF16:
		return "half"
	case ir.KindBF16:
		return "ushort"
	}
	return cType(t, nativeF16)
}
