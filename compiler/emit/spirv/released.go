package spirv

import (
	"fmt"

	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// The instructions tltune has from the released tinytc (docs/language.md,
// Extensions), as the OpenCL C back end writes them: relaxed device-scope
// atomics, with memory barriers for acquire and release orders; a work-
// item's share of a coopmatrix is its elements in the row-per-lane layout.

// releasedInst writes the released tinytc's instructions; it reports false
// for other instructions.
func (e *fn) releasedInst(in *ir.Inst) (bool, error) {
	switch in.Op {
	case ir.OpAtomicLoad:
		m := e.memref(in.Operands[0])
		e.fence(in.Semantics == ir.SequentiallyConsistent)
		e.vals.Set(in.Result(), e.loadElem(m, e.offset(m, e.indices(in.Operands[1:]))))
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Release)
	case ir.OpAtomicStore, ir.OpAtomicUpdate:
		m := e.memref(in.Operands[1])
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		mode := ir.Atomic
		if in.Op == ir.OpAtomicUpdate {
			mode = updateMode(in.Arith)
		}
		old := e.atomicStore(m, e.offset(m, e.indices(in.Operands[2:])), e.value(in.Operands[0]), mode)
		if in.Op == ir.OpAtomicUpdate {
			e.vals.Set(in.Result(), old)
		}
		e.fence(in.Semantics == ir.SequentiallyConsistent || in.Op == ir.OpAtomicUpdate && in.Semantics != ir.Relaxed && in.Semantics != ir.Release)
	case ir.OpAssociated:
		e.vals.Set(in.Result(), e.associated(in.Operands[0]))
	case ir.OpCoopMatrixAtomicLoad:
		e.fence(in.Semantics == ir.SequentiallyConsistent)
		e.coopLoad(in)
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Release)
	case ir.OpCoopMatrixAtomicStore:
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		st := *in
		st.Atomic = ir.Atomic
		e.coopStore(&st)
		e.fence(in.Semantics == ir.SequentiallyConsistent)
	case ir.OpCoopMatrixAtomicUpdate:
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Acquire)
		e.coopUpdate(in)
		e.fence(in.Semantics != ir.Relaxed && in.Semantics != ir.Release)
	case ir.OpCoopMatrixConstruct:
		x := e.value(in.Operands[0])
		out := e.idLists.take(e.perLane(in.Result()))
		for k := range out {
			out[k] = x
		}
		e.coops[in.Result()] = out
	case ir.OpCoopMatrixExtract, ir.OpCoopMatrixInsert:
		a := e.coop(in.Operands[len(in.Operands)-1])
		if in.Mode >= int64(len(a)) {
			return true, fmt.Errorf("spirv: component %d of a share of %d components", in.Mode, len(a))
		}
		if in.Op == ir.OpCoopMatrixExtract {
			e.vals.Set(in.Result(), a[in.Mode])
			break
		}
		out := append([]spv.ID(nil), a...)
		out[in.Mode] = e.value(in.Operands[0])
		e.coops[in.Result()] = out
	case ir.OpCoopMatrixPrefetch:
		// A hint.
	case ir.OpCoopMatrixReduce:
		return true, e.coopReduce(in)
	case ir.OpCoopMatrixApply:
		return true, e.coopApply(in)
	default:
		return false, nil
	}
	return true, nil
}

func updateMode(op ir.ArithOp) ir.AtomicMode {
	switch op {
	case ir.Max:
		return ir.AtomicMax
	case ir.Min:
		return ir.AtomicMin
	}
	return ir.AtomicAdd
}

// fence writes a memory barrier over global and local memory when asked.
// The generic target's module goes through SPIR 1.2 to OpenCL 1.2 runtimes
// whose kernel library has no fence (PoCL 3.1 lacks mem_fence there), so it
// has none: there acquire and release orders are only as strong as the
// runtime's relaxed atomics. The OpenCL C back end writes the fences on
// every target.
func (e *fn) fence(when bool) {
	if !when || e.u.target.Shuffle != target.ShuffleIntel {
		return
	}
	sem := spv.MemorySemanticsAcquireRelease | spv.MemorySemanticsWorkgroupMemory | spv.MemorySemanticsCrossWorkgroupMemory
	e.b.Emit(spv.OpMemoryBarrier, 0, uint32(e.u.i32(int64(spv.ScopeWorkgroup))), uint32(e.u.i32(int64(sem))))
}

// associated is whether the data pointer of a global memref or the base of
// a group is not null (local memory always is).
func (e *fn) associated(v *ir.Value) spv.ID {
	u := e.u
	var ptr spv.ID
	if g, ok := e.groups[v]; ok {
		ptr = g.base
	} else if m := e.memref(v); m.sc == spv.StorageClassCrossWorkgroup {
		ptr = m.ptr
	}
	if ptr == 0 {
		return u.constBool(true)
	}
	return e.op(spv.OpINotEqual, u.boolT(), e.op(spv.OpConvertPtrToU, u.intT(64), ptr), u.i64(0))
}

// coopUpdate writes cooperative_matrix_atomic_add (max, min), collecting
// the old values (zero where a check skips the element).
func (e *fn) coopUpdate(in *ir.Inst) {
	a := e.coop(in.Operands[0])
	m := e.memref(in.Operands[1])
	x, y := e.index(in.Operands[2]), e.index(in.Operands[3])
	t := in.Result().Type
	et := t.Elem()
	out := e.idLists.take(e.perLane(in.Result()))
	acc := e.newAccessor(m, x, y, in.Result(), in.TransA == ir.Trans, in.Checked)
	e.eachElement(in.Result(), func(k, ri, ci int, r, c *dim, partial spv.ID) {
		off, cond := acc.at(ri, ci, r, c, partial)
		out[k] = e.guarded(cond, e.u.reg(et), e.u.zero(et), func() spv.ID {
			return e.atomicStore(m, off, a[k], updateMode(in.Arith))
		})
	})
	e.coops[in.Result()] = out
}

// coopReduce writes cooperative_matrix_reduce: within each lane's rows for
// a row reduction; over the lane's rows, then the subgroup, for columns.
func (e *fn) coopReduce(in *ir.Inst) error {
	a := e.coop(in.Operands[0])
	t := in.Operands[0].Type
	et := t.Elem()
	cols := int(t.Cols())
	combine := func(acc, x spv.ID) spv.ID {
		v, _ := e.binary(in.Arith, et, acc, x)
		return v
	}
	slots := ceilDiv(int(t.Rows()), e.launch.SubgroupSize)
	if in.Mode == 0 {
		out := e.idLists.take(slots)
		for i := range out {
			out[i] = a[i*cols]
			for c := 1; c < cols; c++ {
				out[i] = combine(out[i], a[i*cols+c])
			}
		}
		e.coops[in.Result()] = out
		return nil
	}
	ident, err := e.identity(map[ir.ArithOp]ir.Op{ir.Add: ir.OpSubgroupAdd, ir.Max: ir.OpSubgroupMax, ir.Min: ir.OpSubgroupMin}[in.Arith], et)
	if err != nil {
		return err
	}
	out := e.idLists.take(cols)
	for c := range cols {
		part := ident
		for i := range slots {
			v := combine(part, a[i*cols+c])
			if _, partial := e.row(i, int(t.Rows())); partial != 0 {
				v = e.op(spv.OpSelect, e.u.reg(et), partial, v, part)
			}
			part = v
		}
		src := &ir.Value{Type: et}
		e.vals.Set(src, part)
		sg := ir.NewInst(map[ir.ArithOp]ir.Op{ir.Add: ir.OpSubgroupAdd, ir.Max: ir.OpSubgroupMax, ir.Min: ir.OpSubgroupMin}[in.Arith], []*ir.Value{src}, et)
		sg.Scan = ir.Reduce
		if err := e.subgroupOp(sg); err != nil {
			return err
		}
		out[c] = e.value(sg.Result())
	}
	e.coops[in.Result()] = out
	return nil
}

// coopApply writes the region once per element this lane holds, with the
// element's row, column and value as its arguments.
func (e *fn) coopApply(in *ir.Inst) error {
	a := e.coop(in.Operands[0])
	t := in.Operands[0].Type
	et := t.Elem()
	body := in.Body()
	out := e.idLists.take(len(a))
	var err error
	e.eachElement(in.Operands[0], func(k, _, _ int, r, c *dim, partial spv.ID) {
		out[k] = e.guarded(partial, e.u.reg(et), a[k], func() spv.ID {
			e.vals.Set(body.Args[0], e.convertInt(e.dimID(r), 64, 32))
			e.vals.Set(body.Args[1], e.u.i32(c.c))
			e.vals.Set(body.Args[2], a[k])
			sink := &yieldSink{}
			e.yields[body] = sink
			if rerr := e.region(body); rerr != nil && err == nil {
				err = rerr
			}
			if len(sink.vals) != 1 || len(sink.vals[0]) != 1 {
				return a[k]
			}
			return sink.vals[0][0]
		})
	})
	e.coops[in.Result()] = out
	return err
}
