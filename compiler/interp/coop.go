package interp

import (
	"fmt"

	"tltune/compiler/ir"
)

// coopMatrix is the value of a cooperative matrix: the whole rows×cols
// matrix (column-major), held identically by every lane of the subgroup.
// Values are immutable once built.
type coopMatrix struct {
	typ        *ir.Type
	rows, cols int64
	data       []value
}

func newCoopMatrix(t *ir.Type, fill value) *coopMatrix {
	c := &coopMatrix{typ: t, rows: t.Rows(), cols: t.Cols(), data: make([]value, t.Rows()*t.Cols())}
	for i := range c.data {
		c.data[i] = fill
	}
	return c
}

func (c *coopMatrix) at(i, j int64) value { return c.data[i+j*c.rows] }

// apply returns the matrix of f applied to every entry (same type).
func (c *coopMatrix) apply(f func(value) value) *coopMatrix {
	r := &coopMatrix{typ: c.typ, rows: c.rows, cols: c.cols, data: make([]value, len(c.data))}
	for i, v := range c.data {
		r.data[i] = f(v)
	}
	return r
}

// mulAdd computes D := A·B + C entry by entry, accumulating in C's component
// type (f64/c64/i64 under Accumulate64) in ascending k, then casting to D's.
func (e *exec) mulAdd(in *ir.Inst, env *env) *coopMatrix {
	a := env.get(in.Operands[0]).ref.(*coopMatrix)
	b := env.get(in.Operands[1]).ref.(*coopMatrix)
	c := env.get(in.Operands[2]).ref.(*coopMatrix)
	dt := in.Result().Type
	ct := e.m.accType(c.typ.Elem())
	d := newCoopMatrix(dt, value{})
	for j := range c.cols {
		for i := range c.rows {
			acc := convert(c.at(i, j), c.typ.Elem(), ct)
			for k := range a.cols {
				acc = madd(ct, acc, convert(a.at(i, k), a.typ.Elem(), ct), convert(b.at(k, j), b.typ.Elem(), ct))
			}
			d.data[i+j*d.rows] = convert(acc, ct, dt.Elem())
		}
	}
	return d
}

// coopPosition reads and checks the uniform memref and position operands of
// a cooperative matrix load or store (operand indices first, first+1, first+2).
func coopPosition(lanes []*workItem, first int) (m *Memref, x, y int64, err error) {
	for i, what := range []string{"the memref", "the row position", "the column position"} {
		if err := uniform(lanes, first+i, what); err != nil {
			return nil, 0, 0, err
		}
	}
	args := lanes[0].args
	return args[first].ref.(*Memref), args[first+1].i, args[first+2].i, nil
}

// inBounds applies the checked flag: rows checks the row index r against
// the memref's first mode, cols the column index c against its second.
func inBounds(chk ir.Checked, m *Memref, r, c int64) bool {
	rowsOK := r >= 0 && r < m.Shape[0]
	colsOK := c >= 0 && c < m.Shape[1]
	switch chk {
	case ir.RowsChecked:
		return rowsOK
	case ir.ColsChecked:
		return colsOK
	case ir.BothChecked:
		return rowsOK && colsOK
	}
	return true
}

// coopLoad loads A_ij = M[x+i, y+j] (transposed: M[x+j, y+i]); a checked
// entry outside the memref reads as zero. The reference states the check of
// the transposed load in terms of the loaded matrix's rows and columns,
// which are the memref's columns and rows: the same as checking the memref
// index actually used, as done here.
func (s *scheduler) coopLoad(in *ir.Inst, lanes []*workItem) error {
	m, x, y, err := coopPosition(lanes, 0)
	if err != nil {
		return err
	}
	t := in.Result().Type
	a := newCoopMatrix(t, value{})
	for j := range a.cols {
		for i := range a.rows {
			r, c := x+i, y+j
			if in.TransA == ir.Trans {
				r, c = x+j, y+i
			}
			if !inBounds(checkedMemrefModes(in.Checked, in.TransA), m, r, c) {
				continue
			}
			v, err := m.get(r, c)
			if err != nil {
				return fmt.Errorf("entry (%d,%d): %w", i, j, err)
			}
			a.data[i+j*a.rows] = v
		}
	}
	for _, w := range lanes {
		w.result = value{ref: a}
	}
	return nil
}

// checkedMemrefModes translates a load's checked flag, which names the rows
// and columns of the loaded matrix, into the memref modes it checks.
func checkedMemrefModes(c ir.Checked, t ir.Transpose) ir.Checked {
	if t == ir.Trans {
		switch c {
		case ir.RowsChecked:
			return ir.ColsChecked
		case ir.ColsChecked:
			return ir.RowsChecked
		}
	}
	return c
}

// coopStore writes M[x+i, y+j] := A_ij (transposed: M[x+j, y+i]), or
// combines A_ij with the element (atomic_add, _max, _min), skipping checked
// entries outside the memref, once for the subgroup.
func (s *scheduler) coopStore(in *ir.Inst, lanes []*workItem) error {
	_, err := s.coopStoreOld(in, lanes)
	return err
}

// coopStoreOld is coopStore, and returns the matrix of the elements before
// the store (zero where a check skipped one), which an atomic update
// returns.
func (s *scheduler) coopStoreOld(in *ir.Inst, lanes []*workItem) (*coopMatrix, error) {
	if err := uniform(lanes, 0, "the stored matrix"); err != nil {
		return nil, err
	}
	m, x, y, err := coopPosition(lanes, 1)
	if err != nil {
		return nil, err
	}
	a := lanes[0].args[0].ref.(*coopMatrix)
	old := newCoopMatrix(a.typ, value{})
	et := a.typ.Elem()
	update := in.Atomic > ir.Atomic || in.Op == ir.OpCoopMatrixAtomicUpdate
	op := in.Atomic.Op()
	if in.Op == ir.OpCoopMatrixAtomicUpdate {
		op = in.Arith
	}
	for j := range a.cols {
		for i := range a.rows {
			r, c := x+i, y+j
			if in.TransA == ir.Trans {
				r, c = x+j, y+i
			}
			if !inBounds(checkedMemrefModes(in.Checked, in.TransA), m, r, c) {
				continue
			}
			v := a.at(i, j)
			if update {
				prev, err := m.get(r, c)
				if err != nil {
					return nil, fmt.Errorf("entry (%d,%d): %w", i, j, err)
				}
				old.data[i+j*a.rows] = prev
				v, _ = arith(op, et, prev, v)
			}
			if err := m.set(v, r, c); err != nil {
				return nil, fmt.Errorf("entry (%d,%d): %w", i, j, err)
			}
		}
	}
	return old, nil
}
