package interp

import (
	"fmt"

	"tltune/compiler/ir"
)

// The instructions tltune has from the released tinytc (docs/language.md,
// Extensions). Work-items never run concurrently here, so every atomic
// instruction is simply its plain counterpart, whatever its memory scope
// and semantics.

// releasedInst executes the released tinytc's mixed instructions and those
// SPMD ones that need no meeting of the subgroup; it reports false for
// other instructions.
func (e *exec) releasedInst(in *ir.Inst, env *env) (bool, error) {
	switch in.Op {
	case ir.OpAtomicLoad:
		return true, e.load(in, env)
	case ir.OpAtomicStore:
		return true, e.store(in, env)
	case ir.OpAtomicUpdate:
		m := env.get(in.Operands[1]).ref.(*Memref)
		idx := indices(in, env, 2)
		old, err := m.get(idx...)
		if err != nil {
			return true, err
		}
		v, _ := arith(in.Arith, in.Operands[0].Type, old, env.get(in.Operands[0]))
		env.set(in.Result(), old)
		return true, m.set(v, idx...)
	case ir.OpAssociated:
		env.set(in.Result(), boolVal(env.get(in.Operands[0]).ref != nil))
		return true, nil
	case ir.OpCoopMatrixPrefetch:
		return true, nil // a hint
	case ir.OpCoopMatrixExtract:
		a := env.get(in.Operands[0]).ref.(*coopMatrix)
		i, j, err := e.shareElement(a, in.Mode)
		if err != nil {
			return true, err
		}
		env.set(in.Result(), a.at(i, j))
		return true, nil
	case ir.OpCoopMatrixReduce:
		env.set(in.Result(), value{ref: reduce(in, env.get(in.Operands[0]).ref.(*coopMatrix))})
		return true, nil
	case ir.OpCoopMatrixApply:
		return true, e.coopApply(in, env)
	case ir.OpCoopMatrixConstruct, ir.OpCoopMatrixInsert, ir.OpCoopMatrixAtomicLoad,
		ir.OpCoopMatrixAtomicStore, ir.OpCoopMatrixAtomicUpdate:
		return true, e.subgroupOp(in, env)
	}
	return false, nil
}

// shareElement is the matrix element behind component k of the work-item's
// share: the lane holds rows lane, lane + sgs, ..., each with every column,
// row by row (the layout of the back ends where no matrix engine claims
// the value).
func (e *exec) shareElement(a *coopMatrix, k int64) (i, j int64, err error) {
	sgs := int64(e.m.sgSize)
	i, j = int64(e.item.lane)+k/a.cols*sgs, k%a.cols
	if k < 0 || i >= a.rows {
		return 0, 0, fmt.Errorf("component %d of lane %d's share of a %dx%d matrix does not exist (subgroups of %d)", k, e.item.lane, a.rows, a.cols, sgs)
	}
	return i, j, nil
}

// reduce sums (or takes the maximum or minimum of) the rows (Mode 0) or
// the columns (Mode 1) of a, in ascending order.
func reduce(in *ir.Inst, a *coopMatrix) *coopMatrix {
	t := in.Result().Type
	r := newCoopMatrix(t, value{})
	et := a.typ.Elem()
	for i := range r.rows {
		for j := range r.cols {
			var acc value
			n := a.cols
			if in.Mode == 1 {
				n = a.rows
			}
			for k := range n {
				var x value
				if in.Mode == 1 {
					x = a.at(k, j)
				} else {
					x = a.at(i, k)
				}
				if k == 0 {
					acc = x
					continue
				}
				acc, _ = arith(in.Arith, et, acc, x)
			}
			r.data[i+j*r.rows] = acc
		}
	}
	return r
}

// coopApply runs the region once for each component of the work-item's
// share, with that work-item's values, and meets the subgroup to assemble
// the matrix from every lane's components.
func (e *exec) coopApply(in *ir.Inst, env *env) error {
	a := env.get(in.Operands[0]).ref.(*coopMatrix)
	body := in.Body()
	mine := &coopMatrix{typ: a.typ, rows: a.rows, cols: a.cols, data: make([]value, len(a.data))}
	for k := range ceilDivInt(a.rows, int64(e.m.sgSize)) * a.cols {
		i, j, err := e.shareElement(a, k)
		if err != nil {
			continue // a padding row
		}
		inner := env.child()
		inner.set(body.Args[0], intVal(i))
		inner.set(body.Args[1], intVal(j))
		inner.set(body.Args[2], a.at(i, j))
		out, err := e.region(body, inner)
		if err != nil {
			return err
		}
		mine.data[i+j*a.rows] = out[0]
	}
	r, err := e.item.meet(in, []value{{ref: mine}})
	if err != nil {
		return err
	}
	env.set(in.Result(), r)
	return nil
}

func ceilDivInt(a, b int64) int64 { return (a + b - 1) / b }

// performReleased resolves the meetings of the released tinytc's
// cooperative-matrix instructions.
func (s *scheduler) performReleased(in *ir.Inst, lanes []*workItem) error {
	switch in.Op {
	case ir.OpCoopMatrixAtomicLoad:
		return s.coopLoad(in, lanes)
	case ir.OpCoopMatrixAtomicStore:
		return s.coopStore(in, lanes)
	case ir.OpCoopMatrixAtomicUpdate:
		old, err := s.coopStoreOld(in, lanes)
		for _, w := range lanes {
			w.result = value{ref: old}
		}
		return err
	case ir.OpCoopMatrixConstruct:
		if err := uniform(lanes, 0, "the scalar"); err != nil {
			return err
		}
		r := value{ref: newCoopMatrix(in.Result().Type, lanes[0].args[0])}
		for _, w := range lanes {
			w.result = r
		}
	case ir.OpCoopMatrixInsert:
		if err := uniform(lanes, 1, "the matrix"); err != nil {
			return err
		}
		a := lanes[0].args[1].ref.(*coopMatrix)
		r := &coopMatrix{typ: a.typ, rows: a.rows, cols: a.cols, data: append([]value(nil), a.data...)}
		sgs := int64(len(lanes))
		for l, w := range lanes {
			if i, j := int64(l)+in.Mode/a.cols*sgs, in.Mode%a.cols; i < a.rows {
				r.data[i+j*a.rows] = w.args[0]
			}
		}
		for _, w := range lanes {
			w.result = value{ref: r}
		}
	case ir.OpCoopMatrixApply:
		a := lanes[0].args[0].ref.(*coopMatrix)
		r := &coopMatrix{typ: a.typ, rows: a.rows, cols: a.cols, data: make([]value, len(a.data))}
		for idx := range r.data {
			r.data[idx] = lanes[int64(idx)%a.rows%int64(len(lanes))].args[0].ref.(*coopMatrix).data[idx]
		}
		for _, w := range lanes {
			w.result = value{ref: r}
		}
	default:
		return fmt.Errorf("no subgroup operation %s", in.Mnemonic())
	}
	return nil
}
