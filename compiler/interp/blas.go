package interp

import (
	"fmt"

	"tltune/compiler/ir"
)

// accType is the type a collective with output element type out computes
// in: out itself, or its widest relative under Accumulate64.
func (m *machine) accType(out *ir.Type) *ir.Type {
	if !m.acc64 {
		return out
	}
	switch {
	case out.IsFloat():
		return ir.F64
	case out.IsComplex():
		return ir.C64
	}
	return ir.I64
}

// madd returns acc + a·b in type t, rounding after the product and after
// the sum (no fused multiply-add), exactly as arith would.
func madd(t *ir.Type, acc, a, b value) value {
	switch {
	case t.IsFloat():
		return floatVal(roundFloat(t, acc.f+roundFloat(t, a.f*b.f)))
	case t.IsComplex():
		return complexVal(roundComplex(t, acc.c+roundComplex(t, a.c*b.c)))
	}
	return intVal(wrap(t, acc.i+wrap(t, a.i*b.i)))
}

// update is the common tail of every collective: out := α·acc + β·out,
// computed in type ct and rounded into the output element type. With β = 0
// the old output is not read (it may hold NaN), as in BLAS; with the atomic
// flag and β = 1 it is an atomic add of α·acc, which is the same here
// because nothing runs concurrently.
type update struct {
	ct, out     *ir.Type
	alpha, beta value
	betaZero    bool
}

func (e *exec) newUpdate(in *ir.Inst, env *env) *update {
	alpha, _, beta, out := in.BLASOperands()
	ot := out.Type.Elem()
	ct := e.m.accType(ot)
	b := env.get(beta)
	return &update{
		ct: ct, out: ot,
		alpha:    convert(env.get(alpha), alpha.Type, ct),
		beta:     convert(b, beta.Type, ct),
		betaZero: sameValue(convert(b, beta.Type, ir.C64), value{}),
	}
}

// in converts element idx of memref x to the compute type.
func (u *update) in(x *Memref, idx ...int64) (value, error) {
	v, err := x.get(idx...)
	return convert(v, x.Buf.Elem, u.ct), err
}

func (u *update) result(acc value, out *Memref, idx []int64) (value, error) {
	r, _ := arith(ir.Mul, u.ct, u.alpha, acc)
	if !u.betaZero {
		old, err := u.in(out, idx...)
		if err != nil {
			return value{}, err
		}
		r = madd(u.ct, r, u.beta, old)
	}
	return convert(r, u.ct, u.out), nil
}

// opView reads op(X) for a vector or matrix X in the compute type:
// element (i, k) lies at pos + i·rs + k·cs of the buffer. Every memref value
// was checked to lie inside its buffer when it was made (argument binding,
// subview, expand, fuse, alloca), so in-shape reads need no bounds check.
type opView struct {
	buf        *Buffer
	pos        int64
	rs, cs     int64
	rows, cols int64
	ct         *ir.Type
}

func newOpView(m *Memref, t ir.Transpose, ct *ir.Type) opView {
	v := opView{buf: m.Buf, pos: m.Offset, ct: ct, rows: 1, cols: 1}
	if len(m.Shape) > 0 {
		v.rs, v.rows = m.Stride[0], m.Shape[0]
	}
	if len(m.Shape) > 1 {
		v.cs, v.cols = m.Stride[1], m.Shape[1]
		if t == ir.Trans {
			v.rs, v.cs, v.rows, v.cols = v.cs, v.rs, v.cols, v.rows
		}
	}
	return v
}

func (v *opView) at(i, k int64) value {
	return convert(v.buf.load(v.pos+i*v.rs+k*v.cs), v.buf.Elem, v.ct)
}

// blas evaluates a collective linear-algebra instruction by its definition.
// All outputs are computed before any is written, so an output that
// overlaps an input still sees the input's old values.
func (e *exec) blas(in *ir.Inst, env *env) error {
	u := e.newUpdate(in, env)
	_, inputs, _, outV := in.BLASOperands()
	out := env.get(outV).ref.(*Memref)
	ms := make([]*Memref, len(inputs))
	for i, v := range inputs {
		ms[i] = env.get(v).ref.(*Memref)
	}
	if err := conform(in, ms, out); err != nil {
		return err
	}
	acc := e.accumulator(in, u.ct, ms)
	var results []value
	err := elements(out.Shape, func(idx []int64) error {
		r, err := u.result(acc(idx), out, idx)
		results = append(results, r)
		return err
	})
	if err != nil {
		return err
	}
	i := 0
	return elements(out.Shape, func(idx []int64) error {
		i++
		return out.set(results[i-1], idx...)
	})
}

// conform checks at run time the size rules that the verifier checks of
// static sizes (ir.Misfits). A dynamic size may break one, and the
// definition would read out of an operand's shape then.
func conform(in *ir.Inst, ms []*Memref, out *Memref) error {
	shapes := make([][]int64, len(ms))
	for i, m := range ms {
		shapes[i] = m.Shape
	}
	if broken := ir.Misfits(in.Op, in.TransA, in.TransB, shapes, out.Shape); len(broken) > 0 {
		return fmt.Errorf("%s; the sizes given at run time do not fit", broken[0])
	}
	return nil
}

// accumulator returns the function giving, for an output index, the value
// that α multiplies (the sum, product or element of the definition).
func (e *exec) accumulator(in *ir.Inst, ct *ir.Type, ms []*Memref) func(idx []int64) value {
	zero := value{}
	a := newOpView(ms[0], in.TransA, ct)
	switch in.Op {
	case ir.OpGemm: // C_ij = Σ_k op(A)_ik op(B)_kj
		b := newOpView(ms[1], in.TransB, ct)
		return func(idx []int64) value {
			acc := zero
			for k := range a.cols {
				acc = madd(ct, acc, a.at(idx[0], k), b.at(k, idx[1]))
			}
			return acc
		}
	case ir.OpGemv: // c_i = Σ_k op(A)_ik b_k
		b := newOpView(ms[1], ir.NoTrans, ct)
		return func(idx []int64) value {
			acc := zero
			for k := range a.cols {
				acc = madd(ct, acc, a.at(idx[0], k), b.at(k, 0))
			}
			return acc
		}
	case ir.OpGer: // C_ij = a_i b_j
		b := newOpView(ms[1], ir.NoTrans, ct)
		return func(idx []int64) value { return madd(ct, zero, a.at(idx[0], 0), b.at(idx[1], 0)) }
	case ir.OpHadamardProduct: // c_ij = a_ij b_ij
		b := newOpView(ms[1], ir.NoTrans, ct)
		return func(idx []int64) value {
			i, j := at2(idx)
			return madd(ct, zero, a.at(i, j), b.at(i, j))
		}
	case ir.OpAxpby: // B = op(A)
		return func(idx []int64) value { return a.at(at2(idx)) }
	case ir.OpSum: // b_i = Σ_j op(A)_ij, or b = Σ_i a_i for a vector A
		return func(idx []int64) value {
			if len(idx) == 0 {
				return sumOver(ct, a.rows, func(k int64) value { return a.at(k, 0) })
			}
			return sumOver(ct, a.cols, func(k int64) value { return a.at(idx[0], k) })
		}
	}
	// cumsum: B_{..j..} = Σ_{i≤j} A_{..i..} along Mode, for any order
	src, mode := ms[0], in.Mode
	return func(idx []int64) value {
		pos := src.Offset
		for k, i := range idx {
			if int64(k) != mode {
				pos += i * src.Stride[k]
			}
		}
		return sumOver(ct, idx[mode]+1, func(k int64) value {
			return convert(src.Buf.load(pos+k*src.Stride[mode]), src.Buf.Elem, ct)
		})
	}
}

// at2 returns the first two entries of an index of order up to 2 (missing
// entries are 0).
func at2(idx []int64) (int64, int64) {
	var i, j int64
	if len(idx) > 0 {
		i = idx[0]
	}
	if len(idx) > 1 {
		j = idx[1]
	}
	return i, j
}

// sumOver returns Σ_{k<n} term(k) in type t, summed in ascending k.
func sumOver(t *ir.Type, n int64, term func(k int64) value) value {
	one := convert(intVal(1), ir.I64, t)
	acc := value{}
	for k := range n {
		acc = madd(t, acc, term(k), one)
	}
	return acc
}
