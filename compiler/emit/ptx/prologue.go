package ptx

import (
	"tltune/compiler/emit/opencl"
	"tltune/compiler/ir"
)

// params declares the entry's parameters, one per OpenCL argument in the
// same order, and loads them: NVIDIA's OpenCL sets the arguments of a PTX
// entry as it sets those of the kernel NVVM compiles, pointers as 64-bit
// global addresses (.ptr .global), long as .u64, float as .f32.
func (e *fn) params() error {
	for i, a := range e.k.Args {
		name := e.k.Symbol + "_param_" + itoa(i)
		if i > 0 {
			e.decls = append(e.decls, ",\n"...)
		}
		p := e.f.Params[a.Param]
		switch a.Role {
		case opencl.RoleData:
			elem := p.Type.Elem()
			e.decls = append(e.decls, "\t.param .u64 .ptr .global .align "+i64toa(elem.Size())+" "+name...)
			e.mems.Set(p, e.newMemref(p.Type, e.def(b64, "ld.param.u64", bracket(name))))
		case opencl.RoleShape, opencl.RoleStride:
			e.decls = append(e.decls, "\t.param .u64 "+name...)
			m := e.mem(p)
			dims := m.stride
			if a.Role == opencl.RoleShape {
				dims = m.shape
			}
			dims[a.Mode] = e.def(b64, "ld.param.u64", bracket(name))
		case opencl.RoleScalar:
			if err := e.scalarParam(p, name); err != nil {
				return err
			}
		default:
			return unsupported("%s arguments", a.Role)
		}
	}
	e.decls = append(e.decls, "\n"...)
	return nil
}

// scalarParam declares and loads scalar parameter p, converted to its
// register type as the OpenCL C writer's fromArg converts it: f16 and bf16
// come as float and are rounded, bool comes as int.
func (e *fn) scalarParam(p *ir.Value, name string) error {
	var typ, ld string
	var c class
	switch p.Type.Kind() {
	case ir.KindF32, ir.KindF16, ir.KindBF16:
		typ, ld, c = ".f32", "ld.param.f32", f32
	case ir.KindF64:
		typ, ld, c = ".f64", "ld.param.f64", f64
	case ir.KindI32, ir.KindBool:
		typ, ld, c = ".u32", "ld.param.u32", b32
	case ir.KindI64, ir.KindIndex:
		typ, ld, c = ".u64", "ld.param.u64", b64
	default:
		return unsupported("%s parameters", p.Type)
	}
	e.decls = append(e.decls, "\t.param "+typ+" "+name...)
	x := e.def(c, ld, bracket(name))
	switch p.Type.Kind() {
	case ir.KindIndex, ir.KindI32, ir.KindI64:
		if c == b64 && e.narrow(p) {
			x, c = e.def(b32, "cvt.u32.u64", x), b32
		}
	case ir.KindF16:
		x = e.def(b16, "cvt.rn.f16.f32", x)
	case ir.KindBF16:
		x = e.def(b16, "cvt.rn.bf16.f32", x)
	case ir.KindBool:
		e.vals.Set(p, one(pred, e.def(pred, "setp.ne.s32", x, "0")))
		return nil
	}
	e.vals.Set(p, one(c, x))
	return nil
}

// groupID is get_group_id(d) as NVVM reads it for NVIDIA's OpenCL: the
// block index plus the environment register holding the offset of the
// launch's first block (%envreg0, %envreg1), 32 bits.
func (e *fn) groupID(d int) string {
	ctaid := e.def(b32, "mov.u32", "%ctaid."+"xy"[d:d+1])
	env := e.def(b32, "mov.b32", "%envreg"+itoa(d))
	return e.def(b32, "add.s32", ctaid, env)
}

// numGroups is get_num_groups(d): %envreg6 and %envreg7, not %nctaid,
// since the driver may launch one NDRange as several grids.
func (e *fn) numGroups(d int) string {
	return e.def(b32, "mov.b32", "%envreg"+itoa(6+d))
}

// long is a 32-bit builtin as the long C's casts make of it.
func (e *fn) long(x string) string { return e.def(b64, "cvt.u64.u32", x) }

// kernelBody writes the prologue and the body, as emitKernelBody of the
// OpenCL C writer does: subgroup id and lane, the logical work-group (one
// or BatchPerGroup of them in a loop with one exit), the split's part.
func (e *fn) kernelBody() error {
	l := e.l
	sgs, wx, b := l.SubgroupSize, l.WorkGroupSize[0], l.BatchPerGroup
	tidx := e.def(b32, "mov.u32", "%tid.x")
	tidy := e.def(b32, "mov.u32", "%tid.y")
	q := e.udivImm(32, tidx, uint64(sgs))
	e.sgid = e.def(b32, "mad.lo.s32", tidy, itoa(wx/sgs), q)
	e.lane = e.uremImm(32, tidx, uint64(sgs))
	if sgs == 16 {
		e.shflMask = e.halfWarpMask()
	}
	if e.coop {
		e.fragLanes()
	}
	if b > 1 || e.usesGroupSize {
		g, err := e.logicalGroups()
		if err != nil {
			return err
		}
		e.groups = g
	}
	var groupX string
	if l.Split > 1 {
		groupX = e.splitGroups()
	} else {
		groupX = e.long(e.groupID(0))
	}
	if b == 1 {
		e.gid = groupX
		return e.region(e.f.Body)
	}
	first := e.def(b64, "mul.lo.s64", groupX, itoa(b))
	left := e.def(b64, "sub.s64", e.groups, first)
	count := e.def(b64, "min.s64", left, itoa(b))
	j := e.def(b64, "mov.b64", "0")
	head, end := e.newLabel(), e.newLabel()
	e.enterLoop(j)
	e.putLabel(head)
	done := e.def(pred, "setp.ge.s64", j, count)
	e.branch(done, false, end)
	e.gid = e.def(b64, "add.s64", first, j)
	if err := e.scoped(e.f.Body); err != nil {
		return err
	}
	e.op("add.s64", j, j, "1")
	e.op("bra.uni", head)
	e.exitLoop()
	e.putLabel(end)
	return nil
}

// halfWarpMask is the member mask of the half-warp a lane is in: the
// OpenCL C writer's tl_shfl16 computes it from %laneid, since a
// work-group's rows need not start at a warp.
func (e *fn) halfWarpMask() string {
	laneid := e.def(b32, "mov.u32", "%laneid")
	half := e.def(b32, "and.b32", laneid, "16")
	return e.def(b32, "shl.b32", e.def(b32, "mov.b32", "65535"), half)
}

// splitGroups is the OpenCL C writer's splitGroups: the work-groups
// sharing a logical work-group are consecutive in dispatch order. It sets
// the part and returns the logical group, in 64 bits as the C's longs.
func (e *fn) splitGroups() string {
	gy, nx := e.long(e.groupID(1)), e.long(e.numGroups(0))
	order := e.def(b64, "mad.lo.s64", gy, nx, e.long(e.groupID(0)))
	ny := e.long(e.numGroups(1))
	logical, part := e.divRem(order, ny)
	e.part = part
	return logical
}

// divRem is the quotient and remainder of non-negative 64-bit x by y,
// divided in 32 bits where both fit, as NVVM does: ptxas writes a 64-bit
// division as a long routine, which every thread of the kernel pays, and
// a GER's threads do little else (a few stores each). The remainder is
// x - q·y: ptxas writes rem as a second division.
func (e *fn) divRem(x, y string) (q, r string) {
	q, r = e.reg(b64), e.reg(b64)
	wide, done := e.newLabel(), e.newLabel()
	high := e.def(b64, "and.b64", e.def(b64, "or.b64", x, y), "-4294967296")
	e.branch(e.def(pred, "setp.ne.s64", high, "0"), false, wide)
	x32, y32 := e.def(b32, "cvt.u32.u64", x), e.def(b32, "cvt.u32.u64", y)
	q32 := e.def(b32, "div.u32", x32, y32)
	e.op("cvt.u64.u32", q, q32)
	e.op("cvt.u64.u32", r, e.def(b32, "sub.s32", x32, e.def(b32, "mul.lo.s32", q32, y32)))
	e.op("bra.uni", done)
	e.putLabel(wide)
	e.op("div.s64", q, x, y)
	e.op("sub.s64", r, x, e.def(b64, "mul.lo.s64", q, y))
	e.putLabel(done)
	return q, r
}

// logicalGroups is the number of logical work-groups (builtin.group_size)
// as the OpenCL C writer's logicalGroups computes it.
func (e *fn) logicalGroups() (string, error) {
	l := e.l
	switch x := l.Batch; {
	case l.BatchPerGroup == 1:
	case x != nil && x.Mode == ir.GroupSizeMode:
		return "", unsupported("group parameters")
	case x != nil:
		return e.materialise(b64, e.mem(e.f.Params[x.Param]).shape[x.Mode]), nil
	default:
		return e.def(b64, "mul.wide.u32", e.numGroups(0), itoa(l.BatchPerGroup)), nil
	}
	return e.long(e.numGroups(0)), nil
}

// materialise is operand x of class c in a register.
func (e *fn) materialise(c class, x string) string {
	if isImm(x) {
		return e.pure(c, movOf(c), x)
	}
	return x
}
