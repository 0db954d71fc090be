package main

// 'tltune run --precision tf32': the device may round the inputs of f32
// products to tf32, so its f32 results are compared with the interpreter's
// within the tf32 error bound that tuning verifies with
// (kernels.TF32ErrorFactor), element by element:
//
//	|ĉ − c| ≤ θ · |α| · Σₗ |aₗ||bₗ|
//
// The right-hand side's sums are the interpreter's result on the absolute
// values of the arguments (scalars included), as tuning computes them with
// a contraction of absolute values; and since run measures an element's
// error as |ĉ − c| / max(1, |c|), the tolerance of an f32 element is its
// type's plus θ · magnitude / max(1, |c|). θ is θ_K for a function with one
// f32 product, and (1 + θ_K)ⁿ − 1 for n of them, since a chain such as
// (X·W)·V compounds their errors; K is the longest reduction
// (tf32Products). This bounds the results of sums of products with
// non-negative coefficients (gemm, gemv, ger, with any α and β given as
// arguments); a function that subtracts, or whose constants are negative,
// can make the magnitudes smaller than the sums they stand for, and a
// correct result then fails, loudly, rather than a wrong one passing.

import (
	"math"
	"math/cmplx"

	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/kernels"
)

// tf32Bound is what the tf32 tolerances of one run need: θ and the
// magnitude of every element (the interpreter's run on absolute values).
type tf32Bound struct {
	theta     float64
	magnitude *boundArgs
}

// newTF32Bound runs fn in the interpreter, with opts, on the absolute
// values of a fresh set of arguments from b.
func (f *runFlags) newTF32Bound(fn *ir.Func, b *argBinder, opts interp.Options) (*tf32Bound, error) {
	abs, err := b.bind()
	if err != nil {
		return nil, err
	}
	abs.absolute()
	if err := f.interpret(fn, abs, opts); err != nil {
		return nil, err
	}
	k, n := tf32Products(fn, abs)
	return &tf32Bound{theta: math.Pow(1+kernels.TF32ErrorFactor(k), float64(n)) - 1, magnitude: abs}, nil
}

// absolute replaces every floating and complex value of the arguments (a
// complex one part by part) by its magnitude; integers, which may size or
// index, stay.
func (a *boundArgs) absolute() {
	for i := range a.args {
		a.args[i].Float = math.Abs(a.args[i].Float)
		a.args[i].Complex = complex(math.Abs(real(a.args[i].Complex)), math.Abs(imag(a.args[i].Complex)))
		for _, m := range a.views[i] {
			buf := m.Buf
			m.Each(func(_ []int64, pos int) {
				switch {
				case buf.Elem.IsComplex():
					z := buf.Complex(pos)
					buf.SetComplex(pos, complex(math.Abs(real(z)), math.Abs(imag(z))))
				case buf.Elem.IsFloat():
					buf.SetFloat(pos, math.Abs(buf.Float(pos)))
				}
			})
		}
	}
}

// tf32Products counts fn's f32 products, which the matrix engine may
// round to tf32: its f32 gemm collectives and cooperative_matrix_mul_add
// instructions (the only ones lowered to the engine); and k is the longest
// reduction of them, the K of θ_K: the static K of each gemm. A dynamic K,
// or a cooperative_matrix_mul_add of the function's own (whose loop sets
// how far it reduces), makes k the longest mode of the f32 arguments
// instead: a reduction reads its operands along one of their modes.
func tf32Products(fn *ir.Func, a *boundArgs) (k, n int) {
	k, known := 1, true
	fn.Body.Walk(func(in *ir.Inst) bool {
		switch {
		case in.Op == ir.OpGemm:
			_, ins, _, _ := in.BLASOperands()
			if ins[0].Type.Elem().Kind() != ir.KindF32 {
				break
			}
			n++
			kMode := 1
			if in.TransA == ir.Trans {
				kMode = 0
			}
			if size := ins[0].Type.Shape()[kMode]; size == ir.Dynamic {
				known = false
			} else {
				k = max(k, int(size))
			}
		case in.Op == ir.OpCoopMatrixMulAdd && in.Operands[0].Type.Elem().Kind() == ir.KindF32:
			n++
			known = false
		}
		return true
	})
	if known {
		return k, n
	}
	for i, p := range fn.Params {
		if a.isAggregate(i) && elemType(p).Kind() == ir.KindF32 {
			for _, size := range a.shapeOfViews(i) {
				k = max(k, int(size))
			}
		}
	}
	return k, n
}

// tolerances are the tolerances of the elements of one argument: its
// type's, and where the argument is f32 in a tf32 run, the tf32 bound of
// each element on top.
type tolerances struct {
	base      float64
	theta     float64
	magnitude []*interp.Memref // the argument's views in the run on absolute values; nil: base alone
}

// tolerancesOf are the tolerances of argument i (parameter p).
func tolerancesOf(p *ir.Value, i int, bound *tf32Bound) tolerances {
	t := tolerances{base: tolerance(elemType(p))}
	if bound != nil && bound.theta > 0 && elemType(p).Kind() == ir.KindF32 {
		t.theta, t.magnitude = bound.theta, bound.magnitude.views[i]
	}
	return t
}

// at is the tolerance of the element at pos of view v, whose interpreted
// value is want.
func (t tolerances) at(v, pos int, want complex128) float64 {
	if t.magnitude == nil {
		return t.base
	}
	return t.base + t.theta*cmplx.Abs(t.magnitude[v].Buf.Complex(pos))/math.Max(1, cmplx.Abs(want))
}
