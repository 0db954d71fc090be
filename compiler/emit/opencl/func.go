package opencl

import (
	"fmt"
	"strconv"
	"strings"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// fn is the state of one kernel being written.
type fn struct {
	u      *unit
	f      *ir.Func
	launch Launch
	body   *code // from codes
	// head is the kernel's head, up to its opening brace, followed by its
	// local-memory arrays, declared at kernel scope as OpenCL 1.2
	// requires (from codes).
	head   *code
	indent int
	next   int
	// The value tables (names, mems, ranges) and the text expressions
	// are joined in: the program's, reset for each kernel.
	*workspace
	frag   coopSet             // coopmatrix values in the matrix engine's fragment layout
	engine *target.MatrixShape // the matrix engine the fragments are for (nil: none)
	frags  fragments
	packed coopSet // fragment values held two 16-bit elements per uint (packedValues)
	// replicated: B operands every lane holds whole (replicatedValues).
	replicated coopSet
	// scratch, tiles: the local arrays of emulated shuffles and of the
	// emulated matrix engine are declared.
	scratch, tiles bool
	// blocked: rows over lanes are blocked, not interleaved (coop.go).
	blocked bool
	// usesGroupSize: the function reads builtin.group_size (noted by
	// builtinRange, which sees every builtin).
	usesGroupSize bool
}

// kernelText is a kernel written: its head with the declarations of its
// local arrays, and its body (both from codes).
type kernelText struct {
	head, body *code
}

func (k kernelText) len() int { return k.head.Len() + k.body.Len() + len(kernelEnd) }

func (k kernelText) writeTo(b *strings.Builder) {
	b.Write(k.head.Bytes())
	b.Write(k.body.Bytes())
	b.WriteString(kernelEnd)
}

const kernelEnd = "}\n\n"

// emitFunc writes the kernel of f and appends its description to out.
func (u *unit) emitFunc(f *ir.Func, l Launch, s *workspace, out *Output) (kernelText, error) {
	e, k, err := u.describe(f, l, s)
	if err != nil {
		return kernelText{}, err
	}
	if len(u.target.MMA) > 0 || l.SubgroupSize > 1 { // else no layout but rows over lanes
		coops := s.coops.collect(f)
		e.frag, e.engine = fragmentValues(coops, u.target, l.SubgroupSize)
		if e.engine != nil {
			e.frags = fragmentsOf(e.engine)
			e.packed = packedValues(coops, e.frag, e.engine)
		}
		e.replicated = replicatedValues(coops, e.frag, l.SubgroupSize)
		e.blocked = u.target.BlockedRows && !coops.numbersComponents()
	}
	ir.IndexRanges(&s.ranges, f, e.builtinRange)
	e.head, e.body = getCode(), getCode()
	e.writeHead(&k)
	if err := e.emitKernelBody(); err != nil {
		putCode(e.head)
		putCode(e.body)
		return kernelText{}, err
	}
	out.Kernels = append(out.Kernels, k)
	return kernelText{e.head, e.body}, nil
}

// describe starts the kernel of f with launch l: its writer, with the
// value tables of s readied for f and the parameters named, and its
// description (Kernels stops here).
func (u *unit) describe(f *ir.Func, l Launch, s *workspace) (*fn, Kernel, error) {
	if l.SubgroupSize < 1 || l.WorkGroupSize[0]%l.SubgroupSize != 0 {
		return nil, Kernel{}, fmt.Errorf("opencl: work-group size %v is not a multiple of subgroup size %d", l.WorkGroupSize, l.SubgroupSize)
	}
	l.BatchPerGroup = max(l.BatchPerGroup, 1)
	// The value tables sized for the function: grown from nothing, they
	// were an allocation per doubling.
	s.reset(f)
	e := &fn{u: u, f: f, launch: l, workspace: s}
	k := Kernel{Name: f.Name, Symbol: KernelSymbol(f.Name), Launch: l}
	e.params(&k)
	return e, k, nil
}

// writeHead writes the head of kernel k, up to its opening brace.
func (e *fn) writeHead(k *Kernel) {
	h := e.head
	h.WriteString("__attribute__((reqd_work_group_size(")
	h.writeInt(k.WorkGroupSize[0])
	h.WriteString(", ")
	h.writeInt(k.WorkGroupSize[1])
	h.WriteString(", 1)))\n")
	if e.u.target.ReqdSubgroupSize {
		h.WriteString("__attribute__((intel_reqd_sub_group_size(")
		h.writeInt(k.SubgroupSize)
		h.WriteString(")))\n")
	}
	h.WriteString("kernel void ")
	h.WriteString(k.Symbol)
	h.WriteByte('(')
	for i, a := range k.Args {
		if i > 0 {
			h.WriteString(", ")
		}
		h.WriteString(a.CType)
		h.WriteByte(' ')
		h.WriteString(a.Name)
	}
	h.WriteString(") {\n")
}

// emitKernelBody writes the prologue (logical group id and count, subgroup
// ids) and the function body. A physical work-group runs BatchPerGroup
// logical work-groups one after the other. The loop has one exit and a bound
// that is uniform across the work-group, so barriers inside stay legal (PoCL
// miscompiles barriers in loops left by a break).
func (e *fn) emitKernelBody() error {
	l := e.launch
	sgs, wx, b := l.SubgroupSize, l.WorkGroupSize[0], l.BatchPerGroup
	e.indent = 1
	e.put("const int tl_sgid = (int)(get_local_id(0) / ", strconv.Itoa(sgs), " + get_local_id(1) * ", strconv.Itoa(wx/sgs), ");")
	e.put("const int tl_lane = (int)(get_local_id(0) % ", strconv.Itoa(sgs), ");")
	if b > 1 || e.usesGroupSize {
		e.put("const long tl_groups = ", e.logicalGroups(), ";")
	}
	groupX := "(long)get_group_id(0)"
	if l.Split > 1 {
		groupX = e.splitGroups()
	}
	if b == 1 {
		e.put("const long tl_gid = ", groupX, ";")
		return e.region(e.f.Body)
	}
	e.put("const long tl_first = ", groupX, " * ", strconv.Itoa(b), ";")
	e.put("const long tl_count = min((long)", strconv.Itoa(b), ", tl_groups - tl_first);")
	e.line("for (long tl_j = 0; tl_j < tl_count; ++tl_j) {")
	e.indent++
	e.line("const long tl_gid = tl_first + tl_j;")
	if err := e.region(e.f.Body); err != nil {
		return err
	}
	if usesLocalMemory(e.f) {
		// The next logical group reuses local memory. Without local memory
		// logical groups share nothing and need no barrier (which would
		// make PoCL split the whole body into work-item loops).
		e.line("barrier(CLK_LOCAL_MEM_FENCE);")
	}
	e.indent--
	e.line("}")
	return nil
}

// splitGroups numbers the work-groups of a split launch so that the ones
// sharing a logical work-group are consecutive in the order the hardware
// dispatches them (x fastest): physical work-group (x, y) is the
// (y·nx + x)-th, and the i-th runs logical group i / ny, part i mod ny. The
// parts of one batch entry then run at the same time and read the entry's
// A and B panels from the L2 cache instead of one of them from memory each;
// with y the split, work-group y of logical group x is otherwise dispatched
// a whole x-row (the batch) after work-group y-1. The map is a bijection of
// the grid, so the kernel computes the same for any launch shape. It
// defines tl_part (builtin.group_id.y) and returns the expression of the
// logical group.
func (e *fn) splitGroups() string {
	e.line("const long tl_order = (long)get_group_id(1) * (long)get_num_groups(0) + (long)get_group_id(0);")
	e.line("const long tl_part = tl_order %% (long)get_num_groups(1);")
	return "tl_order / (long)get_num_groups(1)"
}

// logicalGroups is the C expression of the number of logical work-groups
// (builtin.group_size): the launch's work-groups with one per work-group,
// else the batch extent of the arguments, else the launch's work-groups
// times BatchPerGroup (docs/abi.md).
func (e *fn) logicalGroups() string {
	l := e.launch
	switch x := l.Batch; {
	case l.BatchPerGroup == 1:
	case x != nil && x.Mode == ir.GroupSizeMode:
		return "(long)" + e.groups[e.f.Params[x.Param]].size
	case x != nil:
		return "(long)" + e.memref(e.f.Params[x.Param]).shape[x.Mode]
	default:
		return fmt.Sprintf("(long)get_num_groups(0) * %d", l.BatchPerGroup)
	}
	return "(long)get_num_groups(0)"
}

// line writes one indented line of C, formatted as fmt.Fprintf would.
func (e *fn) line(format string, a ...any) {
	if len(a) == 0 && strings.IndexByte(format, '%') < 0 {
		e.put(format) // nothing to format
		return
	}
	e.writeIndent()
	if !simpleFormat(format, a) {
		fmt.Fprintf(e.body, format, a...)
	} else {
		writeSimple(e.body, format, a)
	}
	e.body.WriteByte('\n')
}

// put writes one indented line of C made of parts: the most frequent
// lines, written without formatting or boxing their parts.
func (e *fn) put(parts ...string) { e.body.line(e.indent, parts...) }

func (e *fn) writeIndent() { e.body.set(indented(e.body.Bytes(), e.indent)) }

// simpleFormat reports whether format uses only %s with string arguments,
// %d with int or int64 ones and %%, one argument per verb: the lines the
// emitter writes, which writeSimple formats without fmt's reflection (fmt
// was a tenth of a compile).
func simpleFormat(format string, a []any) bool {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i++; i == len(format) {
			return false
		}
		switch format[i] {
		case '%':
			continue
		case 's':
			if n >= len(a) {
				return false
			}
			if _, ok := a[n].(string); !ok {
				return false
			}
		case 'd':
			if n >= len(a) {
				return false
			}
			switch a[n].(type) {
			case int, int64:
			default:
				return false
			}
		default:
			return false
		}
		n++
	}
	return n == len(a)
}

// writeSimple writes format with its arguments, which simpleFormat
// accepted.
func writeSimple(b *code, format string, a []any) {
	n := 0
	for i := 0; i < len(format); i++ {
		j := strings.IndexByte(format[i:], '%')
		if j < 0 {
			b.WriteString(format[i:])
			return
		}
		b.WriteString(format[i : i+j])
		i += j + 1
		if format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		var digits [20]byte
		switch x := a[n].(type) {
		case string:
			b.WriteString(x)
		case int:
			b.Write(strconv.AppendInt(digits[:0], int64(x), 10))
		case int64:
			b.Write(strconv.AppendInt(digits[:0], x, 10))
		}
		n++
	}
}

// fresh returns a new C identifier derived from the value's source name.
func (e *fn) fresh(hint string) string {
	e.next++
	if hint == "" || !isIdent(hint) {
		return e.text.number("v", "", e.next)
	}
	return e.text.number(hint, "_", e.next)
}

func isIdent(s string) bool {
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// ArgCount is the number of kernel arguments of parameters params
// (docs/abi.md): a memref's data and its dynamic shape and stride
// entries, a group's base and offsets, dynamic entries, size and offset,
// a scalar's value. The back ends size their argument lists with it.
func ArgCount(params []*ir.Value) int {
	n := 0
	for _, p := range params {
		t := p.Type
		switch t.Kind() {
		case ir.KindMemref:
			n += 1 + dynamic(t.Shape()) + dynamic(t.Stride())
		case ir.KindGroup:
			mt := t.Elem()
			n += 2 + dynamic(mt.Shape()) + dynamic(mt.Stride()) + dynamic([]int64{t.GroupSize(), t.GroupOffset()})
		default:
			n++
		}
	}
	return n
}

// dynamic is the number of dynamic entries of vs.
func dynamic(vs []int64) int {
	n := 0
	for _, v := range vs {
		if v == ir.Dynamic {
			n++
		}
	}
	return n
}

// params records the argument ABI in k (its parameter list: each
// argument's CType and Name).
func (e *fn) params(k *Kernel) {
	k.Args = make([]Arg, 0, ArgCount(e.f.Params))
	add := func(a Arg) string {
		k.Args = append(k.Args, a)
		return a.Name
	}
	for i, p := range e.f.Params {
		// The arguments' names go into the Kernel: not cut from e.text.
		base := strings.Clone(e.fresh(p.Name))
		switch p.Type.Kind() {
		case ir.KindMemref:
			e.mems.Set(p, e.memrefParam(p.Type, base, i, add))
		case ir.KindGroup:
			e.groups[p] = e.groupParam(p.Type, base, i, add)
		default:
			si := e.u.scalar(p.Type)
			name := add(Arg{Name: base, CType: si.arg, Role: RoleScalar, Param: i, Elem: p.Type.String()})
			e.names.Set(p, e.fromArg(name, p.Type, si))
		}
	}
}

// fromArg converts a scalar kernel argument to its register type.
func (e *fn) fromArg(name string, t *ir.Type, si *scalarInfo) string {
	switch {
	case si.arg == si.reg:
		return name
	case t.Kind() == ir.KindBool:
		return "(" + name + " != 0)"
	}
	// half or bf16 passed as float: round to the declared precision.
	return e.roundTo(name, t)
}

func (e *fn) memrefParam(t *ir.Type, base string, param int, add func(Arg) string) *memref {
	si := e.u.scalar(t.Elem())
	m := e.slab.mems.Hold(memref{typ: t, space: "global"})
	m.ptr = add(Arg{Name: base, CType: "global " + si.mem + "*", Role: RoleData, Param: param, Elem: t.Elem().String()})
	m.shape = e.dims(t.Shape(), func(i int) string {
		return add(Arg{Name: base + "_shape" + strconv.Itoa(i), CType: "long", Role: RoleShape, Param: param, Mode: i})
	})
	m.stride = e.dims(t.Stride(), func(i int) string {
		return add(Arg{Name: base + "_stride" + strconv.Itoa(i), CType: "long", Role: RoleStride, Param: param, Mode: i})
	})
	return m
}

func (e *fn) groupParam(t *ir.Type, base string, param int, add func(Arg) string) *group {
	mt := t.Elem()
	si := e.u.scalar(mt.Elem())
	g := &group{typ: t}
	g.base = add(Arg{Name: base + "_base", CType: "global " + si.mem + "*", Role: RoleGroupBase, Param: param, Elem: mt.Elem().String()})
	g.offsets = add(Arg{Name: base + "_offsets", CType: "global const long*", Role: RoleGroupOffset, Param: param})
	g.shape = e.dims(mt.Shape(), func(i int) string {
		return add(Arg{Name: base + "_shape" + strconv.Itoa(i), CType: "global const long*", Role: RoleGroupShape, Param: param, Mode: i})
	})
	g.stride = e.dims(mt.Stride(), func(i int) string {
		return add(Arg{Name: base + "_stride" + strconv.Itoa(i), CType: "global const long*", Role: RoleGroupStride, Param: param, Mode: i})
	})
	g.size = dim(t.GroupSize(), func() string {
		return add(Arg{Name: base + "_size", CType: "long", Role: RoleGroupSize, Param: param})
	})
	g.offset = dim(t.GroupOffset(), func() string {
		return add(Arg{Name: base + "_offset", CType: "long", Role: RoleGroupElemOf, Param: param})
	})
	return g
}

// dims returns the C expressions of static or dynamic entries; dynamic
// entries get a name from dyn (which also declares the argument).
func (e *fn) dims(vs []int64, dyn func(i int) string) []string {
	out := e.slab.strs.Take(len(vs))
	for i, v := range vs {
		if v == ir.Dynamic {
			out[i] = dyn(i)
		} else {
			out[i] = e.text.itoa(v)
		}
	}
	return out
}

func dim(v int64, dyn func() string) string {
	if v == ir.Dynamic {
		return dyn()
	}
	return strconv.FormatInt(v, 10)
}

// region writes the instructions of r; mul_adds sharing their B operand
// are written together (mulAddGroup).
func (e *fn) region(r *ir.Region) error {
	for i := 0; i < len(r.Insts); i++ {
		if n := e.mulAddGroup(r.Insts[i:]); n > 1 {
			e.coopMulAdds(r.Insts[i : i+n])
			i += n - 1
			continue
		}
		if err := e.inst(r.Insts[i]); err != nil {
			return err
		}
	}
	return nil
}

// value returns the C expression of a scalar or coopmatrix value.
func (e *fn) value(v *ir.Value) string {
	if s, ok := e.names.Get(v); ok {
		return s
	}
	panic(fmt.Sprintf("opencl: value %%%s used before it was written", v.Name))
}

// define declares a C variable holding expr for result v.
func (e *fn) define(v *ir.Value, expr string) { e.defineParts(v, expr) }

// defineParts is define with the expression in parts, written one after
// the other.
func (e *fn) defineParts(v *ir.Value, expr ...string) { e.defineAs(v, e.valueDecl(v), expr...) }

// defineAs is defineParts with the variable's type given as its
// declaration starts (valueDecl).
func (e *fn) defineAs(v *ir.Value, decl string, expr ...string) {
	name := e.fresh(v.Name)
	b := append(append(indented(e.body.Bytes(), e.indent), decl...), name...)
	b = appendParts(append(b, " = "...), expr)
	e.body.set(append(b, ";\n"...))
	e.names.Set(v, name)
}

// regType is the C type of a scalar or bool in a private variable.
func (e *fn) regType(t *ir.Type) string {
	if t.Kind() == ir.KindBool {
		return "bool"
	}
	return e.u.scalar(t).reg
}

// valueType is the C type of a private variable holding v.
func (e *fn) valueType(v *ir.Value) string {
	if v.Type.Kind() == ir.KindCoopmatrix {
		name, _ := e.coopType(v)
		return name
	}
	if e.narrow(v) {
		return "int"
	}
	return e.regType(v.Type)
}

// valueDecl is valueType followed by a space, as the declaration of a
// variable holding v starts.
func (e *fn) valueDecl(v *ir.Value) string {
	switch t := v.Type; {
	case t.Kind() == ir.KindCoopmatrix:
		return e.text.join(e.valueType(v), " ")
	case e.narrow(v):
		return "int "
	case t.Kind() == ir.KindBool:
		return "bool "
	default:
		return e.u.scalar(t).decl
	}
}

func (e *fn) target() *target.Target { return e.u.target }

// usesLocalMemory reports whether f allocates local memory.
func usesLocalMemory(f *ir.Func) bool {
	found := false
	f.Body.Walk(func(in *ir.Inst) bool {
		found = found || in.Op == ir.OpAlloca
		return !found
	})
	return found
}
