package interp

import (
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
// the sum (no fused multiply-add).
func madd(t *ir.Type, acc, a, b value) value {
	p, _ := arith(ir.Mul, t, a, b) // only integer div and rem can fail
	s, _ := arith(ir.Add, t, acc, p)
	return s
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

// pair reads x = a[ai] and y = b[bi] in the compute type.
func (u *update) pair(a *Memref, ai []int64, b *Memref, bi []int64) (value, value, error) {
	x, err := u.in(a, ai...)
	if err != nil {
		return x, x, err
	}
	y, err := u.in(b, bi...)
	return x, y, err
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

// opIndex maps an index of op(X) to an index of X: a transposed matrix swaps
// its two indices.
func opIndex(t ir.Transpose, order int, idx []int64) []int64 {
	if t == ir.Trans && order == 2 {
		return []int64{idx[1], idx[0]}
	}
	return idx
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
	acc := e.accumulator(in, u, ms)
	var results []value
	err := elements(out.Shape, func(idx []int64) error {
		a, err := acc(idx)
		if err != nil {
			return err
		}
		r, err := u.result(a, out, idx)
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

// accumulator returns the function giving, for an output index, the value
// that α multiplies (the sum, product or element of the definition).
func (e *exec) accumulator(in *ir.Inst, u *update, ms []*Memref) func(idx []int64) (value, error) {
	ct := u.ct
	switch in.Op {
	case ir.OpGemm: // C_ij = Σ_k op(A)_ik op(B)_kj
		a, b := ms[0], ms[1]
		return func(idx []int64) (value, error) {
			return sumOver(ct, opShape(in.TransA, a)[1], func(k int64) (value, value, error) {
				return u.pair(a, opIndex(in.TransA, 2, []int64{idx[0], k}), b, opIndex(in.TransB, 2, []int64{k, idx[1]}))
			})
		}
	case ir.OpGemv: // c_i = Σ_k op(A)_ik b_k
		a, b := ms[0], ms[1]
		return func(idx []int64) (value, error) {
			return sumOver(ct, opShape(in.TransA, a)[1], func(k int64) (value, value, error) {
				return u.pair(a, opIndex(in.TransA, 2, []int64{idx[0], k}), b, []int64{k})
			})
		}
	case ir.OpGer: // C_ij = a_i b_j
		return product(ct, func(idx []int64) (value, value, error) {
			return u.pair(ms[0], idx[:1], ms[1], idx[1:])
		})
	case ir.OpHadamardProduct: // c_idx = a_idx b_idx
		return product(ct, func(idx []int64) (value, value, error) {
			return u.pair(ms[0], idx, ms[1], idx)
		})
	case ir.OpAxpby: // B = op(A)
		a := ms[0]
		return func(idx []int64) (value, error) { return u.in(a, opIndex(in.TransA, len(a.Shape), idx)...) }
	case ir.OpSum:
		return e.sumAccumulator(in, u, ms[0])
	}
	return cumsumAccumulator(in, u, ms[0])
}

// opShape is the shape of op(X) for a matrix X.
func opShape(t ir.Transpose, x *Memref) []int64 {
	if t == ir.Trans {
		return []int64{x.Shape[1], x.Shape[0]}
	}
	return x.Shape
}

// sumOver returns Σ_{k<n} x_k·y_k in type t, summed in ascending k.
func sumOver(t *ir.Type, n int64, terms func(k int64) (value, value, error)) (value, error) {
	acc := value{}
	for k := range n {
		x, y, err := terms(k)
		if err != nil {
			return acc, err
		}
		acc = madd(t, acc, x, y)
	}
	return acc, nil
}

func product(t *ir.Type, factors func(idx []int64) (value, value, error)) func(idx []int64) (value, error) {
	return func(idx []int64) (value, error) {
		x, y, err := factors(idx)
		if err != nil {
			return x, err
		}
		p, _ := arith(ir.Mul, t, x, y)
		return p, nil
	}
}

// sumAccumulator is sum's: b_i = Σ_j op(A)_ij for a vector b, or the sum of
// all entries of the vector A for a scalar b.
func (e *exec) sumAccumulator(in *ir.Inst, u *update, a *Memref) func(idx []int64) (value, error) {
	one := convert(intVal(1), ir.I64, u.ct)
	return func(idx []int64) (value, error) {
		if len(idx) == 0 {
			return sumOver(u.ct, a.Shape[0], func(k int64) (value, value, error) {
				x, err := u.in(a, k)
				return x, one, err
			})
		}
		return sumOver(u.ct, opShape(in.TransA, a)[1], func(k int64) (value, value, error) {
			x, err := u.in(a, opIndex(in.TransA, 2, []int64{idx[0], k})...)
			return x, one, err
		})
	}
}

// cumsumAccumulator is cumsum's: B_{..j..} = Σ_{i≤j} A_{..i..} along Mode.
func cumsumAccumulator(in *ir.Inst, u *update, a *Memref) func(idx []int64) (value, error) {
	one := convert(intVal(1), ir.I64, u.ct)
	mode := in.Mode
	return func(idx []int64) (value, error) {
		src := append([]int64(nil), idx...)
		return sumOver(u.ct, idx[mode]+1, func(k int64) (value, value, error) {
			src[mode] = k
			x, err := u.in(a, src...)
			return x, one, err
		})
	}
}
