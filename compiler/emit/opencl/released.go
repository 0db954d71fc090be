package opencl

import (
	"fmt"

	"tltune/compiler/ir"
)

// The instructions tltune has from the released tinytc (docs/language.md,
// Extensions). OpenCL 1.2 atomics are relaxed and device-wide, which
// serves every memory scope; acquire and release orders add memory fences
// around the atomic access.

// rowLayoutOnly ties the coopmatrix values an instruction relates to the
// same layout and returns those that must keep the row-per-lane layout
// (fragmentValues): the components of a work-item's share, row and column
// reductions and the positions apply hands its region are defined in it.
func rowLayoutOnly(in *ir.Inst, uf unionFind) []*ir.Value {
	switch in.Op {
	case ir.OpCoopMatrixApply, ir.OpCoopMatrixInsert:
		a := in.Operands[len(in.Operands)-1]
		uf.union(in.Result(), a)
		return []*ir.Value{a}
	case ir.OpCoopMatrixExtract, ir.OpCoopMatrixReduce:
		return []*ir.Value{in.Operands[0]}
	case ir.OpCoopMatrixAtomicUpdate:
		uf.union(in.Result(), in.Operands[0])
	}
	return nil
}

// releasedInst writes the released tinytc's instructions; it reports false
// for other instructions.
func (e *fn) releasedInst(in *ir.Inst) (bool, error) {
	switch in.Op {
	case ir.OpAtomicLoad:
		m := e.memref(in.Operands[0])
		e.fenceBefore(in.Semantics == ir.SequentiallyConsistent)
		e.define(in.Result(), e.loadElem(m, e.offsetOf(in.Operands[0], in.Operands[1:])))
		e.fenceAfter(in.Semantics)
	case ir.OpAtomicStore:
		m := e.memref(in.Operands[1])
		e.fenceBefore(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		err := e.storeElem(m, e.offsetOf(in.Operands[1], in.Operands[2:]), e.value(in.Operands[0]), ir.Atomic)
		e.fenceAfter(map[bool]ir.MemorySemantics{true: ir.Acquire}[in.Semantics == ir.SequentiallyConsistent])
		return true, err
	case ir.OpAtomicUpdate:
		m := e.memref(in.Operands[1])
		e.fenceBefore(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		old, err := e.fetchUpdate(m, e.offsetOf(in.Operands[1], in.Operands[2:]), e.value(in.Operands[0]), in.Arith)
		if err != nil {
			return true, err
		}
		e.define(in.Result(), old)
		e.fenceAfter(in.Semantics)
	case ir.OpAssociated:
		ptr := "tl_local_memory"
		if g, ok := e.groups[in.Operands[0]]; ok {
			ptr = g.base
		} else if m := e.memref(in.Operands[0]); m.space == "global" {
			ptr = m.ptr
		}
		if ptr == "tl_local_memory" {
			e.define(in.Result(), "true")
		} else {
			e.define(in.Result(), "("+ptr+" != 0)")
		}
	case ir.OpCoopMatrixAtomicLoad:
		e.fenceBefore(in.Semantics == ir.SequentiallyConsistent)
		e.coopLoad(in)
		e.fenceAfter(in.Semantics)
	case ir.OpCoopMatrixAtomicStore, ir.OpCoopMatrixAtomicUpdate:
		e.fenceBefore(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		var err error
		if in.Op == ir.OpCoopMatrixAtomicUpdate {
			err = e.coopUpdate(in)
		} else {
			st := *in
			st.Atomic = ir.Atomic
			err = e.coopStore(&st)
		}
		if err != nil {
			return true, err
		}
		e.fenceAfter(in.Semantics)
	case ir.OpCoopMatrixConstruct:
		e.coopFill(in.Result(), e.value(in.Operands[0]))
	case ir.OpCoopMatrixExtract, ir.OpCoopMatrixInsert:
		return true, e.coopShare(in)
	case ir.OpCoopMatrixPrefetch:
		// A hint; OpenCL C's prefetch works on global pointers only and
		// gains nothing on the devices tltune targets.
	case ir.OpCoopMatrixReduce:
		return true, e.coopReduce(in)
	case ir.OpCoopMatrixApply:
		return true, e.coopApply(in)
	default:
		return false, nil
	}
	return true, nil
}

// fenceBefore writes the fence a release order needs before the access.
func (e *fn) fenceBefore(release bool) {
	if release {
		e.line("mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);")
	}
}

// fenceAfter writes the fence an acquire order needs after the access.
func (e *fn) fenceAfter(s ir.MemorySemantics) {
	if s != ir.Relaxed && s != ir.Release {
		e.line("mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);")
	}
}

// fetchUpdate combines val with element off of m atomically (add, max or
// min) and returns the C expression of the element's old value.
func (e *fn) fetchUpdate(m *memref, off, val string, op ir.ArithOp) (string, error) {
	et := m.typ.Elem()
	si := e.u.scalar(et)
	p := "&" + m.ptr + "[" + off + "]"
	name := map[ir.ArithOp]string{ir.Add: "add", ir.Max: "max", ir.Min: "min"}[op]
	switch {
	case et.IsComplex():
		real := realOf(si.reg)
		h, err := e.casFetch(real, et.ComponentType(), m.space, op)
		if err != nil {
			return "", err
		}
		q := "((" + m.space + " " + real + "*)(" + p + "))"
		return fmt.Sprintf("(%s)(%s(%s, %s.x), %s(%s + 1, %s.y))", si.reg, h, q, val, h, q, val), nil
	case et.Kind() == ir.KindF32 || et.Kind() == ir.KindF64:
		h, err := e.casFetch(si.reg, et, m.space, op)
		if err != nil {
			return "", err
		}
		return h + "(" + p + ", " + val + ")", nil
	case et.Kind() == ir.KindI32:
		return "atomic_" + name + "(" + p + ", " + val + ")", nil
	case et.Kind() == ir.KindI64 || et.Kind() == ir.KindIndex:
		e.u.int64At = true
		if op != ir.Add {
			e.u.int64Ext = true
		}
		return "atom_" + name + "(" + p + ", " + val + ")", nil
	}
	return "", fmt.Errorf("opencl: atomic update of %s is not supported", et)
}

// casFetch returns a helper that combines v with the real number at p by a
// compare-and-swap loop on its bits (OpenCL 1.2 has no floating-point
// atomics) and returns the old value.
func (e *fn) casFetch(real string, t *ir.Type, space string, op ir.ArithOp) (string, error) {
	combined, err := e.binary(op, t, "as_"+real+"(assumed)", "v")
	if err != nil {
		return "", err
	}
	bits, cas := "int", "atomic_cmpxchg"
	if real == "double" {
		bits, cas = "long", "atom_cmpxchg"
		e.u.int64At = true
	}
	name := fmt.Sprintf("tl_fetch_%s_%s_%s", op, suffix(real), space)
	return e.u.helpers.add(name, fmt.Sprintf(`static inline %[2]s %[1]s(volatile %[3]s %[2]s* p, %[2]s v) {
    volatile %[3]s %[4]s* q = (volatile %[3]s %[4]s*)p;
    %[4]s old = *q, assumed;
    do {
        assumed = old;
        old = %[5]s(q, assumed, as_%[4]s(%[6]s));
    } while (old != assumed);
    return as_%[2]s(old);
}`, name, real, space, bits, cas, combined)), nil
}

// coopShare writes extract and insert: component Mode of the work-item's
// share, which is slot Mode of its struct in the row-per-lane layout.
func (e *fn) coopShare(in *ir.Inst) error {
	a := in.Operands[len(in.Operands)-1]
	if _, n := e.coopType(a); in.Mode >= int64(n) {
		return fmt.Errorf("opencl: %s: component %d of a share of %d components", in.Mnemonic(), in.Mode, n)
	}
	if in.Op == ir.OpCoopMatrixExtract {
		e.define(in.Result(), fmt.Sprintf("%s.v[%d]", e.value(a), in.Mode))
		return nil
	}
	name, _ := e.coopDecl(in.Result())
	e.line("%s = %s;", name, e.value(a))
	e.line("%s.v[%d] = %s;", name, in.Mode, e.value(in.Operands[0]))
	return nil
}

// coopReduce writes cooperative_matrix_reduce: a row reduction within each
// lane's rows; a column reduction over the lane's rows, then over the
// subgroup's lanes.
func (e *fn) coopReduce(in *ir.Inst) error {
	a := e.value(in.Operands[0])
	t := in.Operands[0].Type
	et := t.Elem()
	rows, cols := int(t.Rows()), int(t.Cols())
	sgs := e.launch.SubgroupSize
	ident, err := e.identity(in.Arith, et)
	if err != nil {
		return err
	}
	name, _ := e.coopDecl(in.Result())
	combine := func(acc, x string) string {
		s, _ := e.binary(in.Arith, et, acc, x)
		return s
	}
	if in.Mode == 0 {
		e.coopLoop(loopI, ceilDiv(rows, sgs))
		e.line("%s tl_acc = %s.v[tl_i * %d];", e.regType(et), a, cols)
		for c := 1; c < cols; c++ {
			e.line("tl_acc = %s;", combine("tl_acc", fmt.Sprintf("%s.v[tl_i * %d + %d]", a, cols, c)))
		}
		e.line("%s.v[tl_i] = tl_acc;", name)
		e.closeLoop()
		return nil
	}
	for c := range cols {
		part := e.fresh("part")
		e.line("%s %s = %s;", e.regType(et), part, ident)
		e.coopLoop(loopI, ceilDiv(rows, sgs))
		valid := ""
		if rows%sgs != 0 {
			valid = fmt.Sprintf("if (%s < %d) ", e.slotRow(rows), rows)
		}
		e.line("%s%s = %s;", valid, part, combine(part, fmt.Sprintf("%s.v[tl_i * %d + %d]", a, cols, c)))
		e.closeLoop()
		total, err := e.subgroupReduce(in.Arith, et, part)
		if err != nil {
			return err
		}
		e.line("%s.v[%d] = %s;", name, c, total)
	}
	return nil
}

// subgroupReduce combines x over the lanes of the subgroup, through the
// instruction subgroup_add.reduce (or _max, _min) writes.
func (e *fn) subgroupReduce(op ir.ArithOp, t *ir.Type, x string) (string, error) {
	src := &ir.Value{Type: t}
	e.names.Set(src, x)
	sg := ir.NewInst(map[ir.ArithOp]ir.Op{ir.Add: ir.OpSubgroupAdd, ir.Max: ir.OpSubgroupMax, ir.Min: ir.OpSubgroupMin}[op], []*ir.Value{src}, t)
	sg.Scan = ir.Reduce
	if err := e.subgroupOp(sg); err != nil {
		return "", err
	}
	return e.value(sg.Result()), nil
}

// coopApply writes the region once, in the loop over the components this
// lane holds, with the component's row, column and value as its arguments
// and the component of the result as the target of its yield.
func (e *fn) coopApply(in *ir.Inst) error {
	a := in.Operands[0]
	body := in.Body()
	name, _ := e.coopDecl(in.Result())
	e.coopElems(a)
	e.names.Set(body.Args[0], "(int)tl_r")
	e.names.Set(body.Args[1], "(int)tl_c")
	e.names.Set(body.Args[2], e.value(a)+".v[tl_k]")
	e.yields[body] = []string{name + ".v[tl_k]"}
	err := e.region(body)
	e.closeElems()
	return err
}

// coopUpdate writes cooperative_matrix_atomic_add (max, min): every stored
// component is combined with its element atomically, and the result holds
// the elements' old values (zero where a check skips the element).
func (e *fn) coopUpdate(in *ir.Inst) error {
	a := e.value(in.Operands[0])
	m := e.memref(in.Operands[1])
	x, y := e.value(in.Operands[2]), e.value(in.Operands[3])
	e.coopFill(in.Result(), e.zero(in.Result().Type.Elem()))
	name := e.value(in.Result())
	e.coopElems(in.Operands[0])
	off, cond := e.coopAccess(m, x, y, in.TransA == ir.Trans, in.Checked)
	if cond != "" {
		e.line("if (!(%s)) continue;", cond)
	}
	old, err := e.fetchUpdate(m, off, a+".v[tl_k]", in.Arith)
	if err == nil {
		e.line("%s.v[tl_k] = %s;", name, old)
	}
	e.closeElems()
	return err
}
