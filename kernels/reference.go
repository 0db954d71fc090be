package kernels

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sync"

	"tltune/internal/parallel"
	"tltune/internal/speak"
)

// number is the arithmetic of a reference: float64 for real recipes,
// complex128 when the accumulation type is complex.
type number interface{ float64 | complex128 }

// plan addresses one batch entry as the contraction
// C(i,j) = α Σ_l opA(i,l)·opB(l,j) + β C(i,j) with opA(i,l) at
// A[i*aRow + l*aCol] and opB(l,j) at B[l*bRow + j*bCol].
type plan struct {
	m, n, k    int
	aRow, aCol int
	bRow, bCol int
}

func (s Spec) plan() plan {
	m, n, k := s.contraction()
	p := plan{m: m, n: n, k: k}
	switch s.Op {
	case GEMMOp:
		p.aRow, p.aCol = opStrides(s.M, s.K, s.TransA)
		p.bRow, p.bCol = opStrides(s.K, s.N, s.TransB)
	case GEMVOp: // b is a K×1 matrix
		p.aRow, p.aCol = opStrides(s.M, s.N, s.TransA)
		p.bRow, p.bCol = 1, 0
	case GEROp: // a is M×1, bᵀ is 1×N
		p.aRow, p.aCol = 1, 0
		p.bRow, p.bCol = 0, 1
	}
	return p
}

// opStrides returns the strides of op(X)(i,l), op(X) being rows×cols and X
// stored column-major (X is cols×rows when transposed).
func opStrides(rows, cols int, trans bool) (row, col int) {
	if trans {
		return cols, 1
	}
	return 1, rows
}

// Expected is the exact result of a recipe on one set of inputs, computed
// in float64 or complex128 from the inputs as the device holds them.
type Expected struct {
	Spec   Spec
	Batch  int
	Values []complex128 // every output element, packed like the output Buffer
	// tols is the tolerance of each batch entry, which depends on the
	// inputs (tolerances); nil: Spec.Tolerance() for every entry.
	tols []float64
}

// HostMemory is the host memory, in bytes, that Inputs of batch entries
// and their Reference take: the inputs in their device encoding, the
// expected output as complex128, and each of workers reference workers'
// copy of one entry's operands in the accumulation arithmetic (counted at
// the 16 bytes of complex128). A caller compares it with what the host
// can spare before it generates anything, so that a shape too large for
// the host is an error rather than a crash of the process.
func (s Spec) HostMemory(batch, workers int) int64 {
	var entry, scratch int64
	ops := s.operands()
	for _, o := range ops {
		entry += int64(o.elements()) * int64(o.dtype.Size())
		scratch += 16 * int64(o.elements())
	}
	expected := 16 * int64(ops[len(ops)-1].elements())
	return int64(batch)*(entry+expected) + int64(max(1, min(batch, workers)))*scratch
}

func (s Spec) reference(in *Inputs) (*Expected, error) {
	if err := s.checkArgs(in); err != nil {
		return nil, err
	}
	x := &Expected{Spec: s, Batch: in.Batch, Values: make([]complex128, in.Output().Len())}
	terms := make([]float64, in.Batch)
	if s.Acc.IsComplex() {
		contract[complex128](s, in, x.Values, terms)
	} else {
		contract[float64](s, in, x.Values, terms)
	}
	x.tols = s.tolerances(in, x.Values, terms)
	return x, nil
}

// tolerances are the tolerances of the batch entries on in, whose exact
// result is want: Spec.Tolerance scaled by each entry's cancellation, and
// for precision tf32 the bound of its rounded inputs added
// (tf32Tolerances).
//
// Spec.Tolerance is relative to the result, which is right while the
// result is as large as its terms' rounding errors assume: a sum of terms
// of random sign is about as large as the 2-norm of its terms. Where the
// terms cancel (Σ a·b close to −β·c, or a short sum near zero), a correct
// device's rounding errors, which follow the terms, are large relative to
// the small result: a gemv of one output per entry fails a correct kernel
// at some seeds. So each entry's tolerance grows by the ratio of the
// 2-norm of its terms, r with r² = Σ |α·a·b|² + |β·c|² element by element,
// to the 2-norm of its result, when that ratio exceeds 1. A dropped or
// misplaced term is an error of the order of a term, which still fails.
func (s Spec) tolerances(in *Inputs, want []complex128, terms []float64) []float64 {
	per, exact := len(want)/in.Batch, s.Tolerance()
	tols := make([]float64, in.Batch)
	for e := range tols {
		tols[e] = exact * cancellation(terms[e], entryNorm(want[e*per:(e+1)*per]))
	}
	if s.Precision == speak.TF32 {
		for e, bound := range s.tf32Tolerances(in, want) {
			tols[e] += bound
		}
	}
	return tols
}

// cancellation is how much larger an entry's terms are than its result
// (2-norms), at least 1. Check measures an entry whose result is zero
// absolutely, so there the terms' norm itself scales the tolerance.
func cancellation(terms, result float64) float64 {
	if result > 0 {
		return max(1, terms/result)
	}
	return max(1, terms)
}

// contract evaluates every batch entry. β = 0 means C is not read at all
// (BLAS semantics), so a NaN-poisoned C does not reach the result.
//
// Unless terms is nil, it also gets each entry's 2-norm of the terms of
// its results, r with r² = Σ_ij (Σ_l |α·opA(i,l)·opB(l,j)|² + |β·c_ij|²)
// (tolerances). Over a whole entry the products' part factors,
// Σ_l |α|²·‖opA(:,l)‖²·‖opB(l,:)‖², so it costs a pass over the operands,
// not a second contraction.
func contract[T number](s Spec, in *Inputs, out []complex128, terms []float64) {
	p := s.plan()
	A, B, C := in.Args[0], in.Args[1], in.Args[2]
	alpha, beta := fromComplex[T](s.DType.Round(s.Alpha)), fromComplex[T](s.Acc.Round(s.Beta))
	readC := s.readsC()
	// The entries are independent: each worker takes one at a time, with
	// scratch of its own.
	scratch := sync.Pool{New: func() any {
		return &entryScratch[T]{a: make([]T, A.EntryElements()), b: make([]T, B.EntryElements()),
			c: make([]T, C.EntryElements()), sums: make([]T, p.m)}
	}}
	parallel.For(in.Batch, func(e int) {
		w := scratch.Get().(*entryScratch[T])
		defer scratch.Put(w)
		a, b, c, sums := w.a, w.b, w.c, w.sums
		loadEntry(A, e, a)
		loadEntry(B, e, b)
		if readC {
			loadEntry(C, e, c)
		}
		if terms != nil {
			terms[e] = termNorm(p, a, b, c, alpha, beta, readC)
		}
		dst := out[e*len(c) : (e+1)*len(c)]
		for j := range p.n {
			// Column j of the product, summed over l in ascending order
			// for every i; the i loop innermost walks A's columns.
			clear(sums)
			for l := range p.k {
				bl := b[l*p.bRow+j*p.bCol]
				for i := range p.m {
					sums[i] += a[i*p.aRow+l*p.aCol] * bl
				}
			}
			for i, sum := range sums {
				v := alpha * sum
				if readC {
					v += beta * c[i+j*p.m]
				}
				dst[i+j*p.m] = toComplex(v)
			}
		}
	})
}

// termNorm is the 2-norm of the terms of one entry's results (contract).
func termNorm[T number](p plan, a, b, c []T, alpha, beta T, readC bool) float64 {
	var sum float64
	for l := range p.k {
		var colA, rowB float64
		for i := range p.m {
			colA += sqMag(a[i*p.aRow+l*p.aCol])
		}
		for j := range p.n {
			rowB += sqMag(b[l*p.bRow+j*p.bCol])
		}
		sum += colA * rowB
	}
	sum *= sqMag(alpha)
	if readC {
		var cs float64
		for _, v := range c {
			cs += sqMag(v)
		}
		sum += sqMag(beta) * cs
	}
	return math.Sqrt(sum)
}

// sqMag is |v|².
func sqMag[T number](v T) float64 { return sqAbs(toComplex(v)) }

// entryScratch is one worker's copy of a batch entry's operands and sums.
type entryScratch[T number] struct{ a, b, c, sums []T }

func loadEntry[T number](b *Buffer, e int, dst []T) {
	base := e * len(dst)
	for i := range dst {
		dst[i] = fromComplex[T](b.At(base + i))
	}
}

func fromComplex[T number](z complex128) T {
	var v T
	switch p := any(&v).(type) {
	case *float64:
		*p = real(z)
	case *complex128:
		*p = z
	}
	return v
}

func toComplex[T number](v T) complex128 {
	switch x := any(v).(type) {
	case float64:
		return complex(x, 0)
	case complex128:
		return x
	}
	panic("unreachable")
}

// checkArgs reports whether in fits s: argument count, types and shapes.
func (s Spec) checkArgs(in *Inputs) error {
	ops := s.operands()
	if len(in.Args) != len(ops) {
		return fmt.Errorf("%v takes %d arguments, the inputs have %d", s.Op, len(ops), len(in.Args))
	}
	for i, o := range ops {
		if err := checkBuffer(in.Args[i], o, in.Batch); err != nil {
			return err
		}
	}
	return nil
}

func checkBuffer(b *Buffer, o operand, batch int) error {
	if b.Type != o.dtype || !slices.Equal(b.Shape, o.shape) || b.Batch != batch {
		return fmt.Errorf("argument %%%s: got %v %v x %d entries, want %v %v x %d",
			o.name, b.Type, b.Shape, b.Batch, o.dtype, o.shape, batch)
	}
	if len(b.Data) != b.Len()*b.Type.Size() {
		return fmt.Errorf("argument %%%s: %d bytes for %d elements of %v", o.name, len(b.Data), b.Len(), b.Type)
	}
	return nil
}

// Tolerance is the largest relative error Check accepts for s:
//
//	tol = 4·u(dtype) + 4·u(acc)·√K
//
// with u the unit roundoff and K the reduction length (k for gemm, n for
// gemv, 1 for ger). The first term covers products and the α scaling
// rounded in the input type, the second the accumulation and the final
// store in the accumulation type, whose error grows like √K for rounding
// errors of random sign.
//
// It is the tolerance of an entry whose terms do not cancel; an entry's
// tolerance grows with its cancellation, and precision tf32 adds a bound
// that depends on the inputs (tolerances).
func (s Spec) Tolerance() float64 {
	_, _, k := s.contraction()
	return 4*s.DType.UnitRoundoff() + 4*s.Acc.UnitRoundoff()*math.Sqrt(float64(k))
}

// tf32Roundoff is the unit roundoff of tf32: 10 explicit mantissa bits,
// rounded to nearest (cvt.rna: ties away from zero, the same bound).
const tf32Roundoff = 0x1p-11

// TF32ErrorFactor is θ_K, the factor of the tf32 error bound of a sum of K
// products (K the reduction length). Each f32 input is rounded to tf32,
// ã = a(1+δ) with |δ| ≤ u = 2⁻¹¹, so the engine's exact product of two
// rounded inputs is off by |ãb̃ − ab| ≤ (2u + u²)|a||b|. The K products are
// summed in f32 in an order and with a rounding the hardware does not
// promise (tensor cores may truncate), taken here as at most one f32 ulp,
// 2⁻²³ relative, per addition: the sum is off by γ_K·Σ|ãb̃| with
// γ_K = K·2⁻²³/(1 − K·2⁻²³), and Σ|ãb̃| ≤ (1+u)²·Σ|a||b|. Together, element
// by element,
//
//	|ĉᵢⱼ − cᵢⱼ| ≤ θ_K · |α| · Σₗ |aᵢₗ||bₗⱼ|,  θ_K = 2u + u² + γ_K(1+u)²
//
// which grows like K·2⁻¹⁰·|a||b|. It is a worst case (every rounding of
// one sign): errors of random sign grow like √K and stay far below it, so
// a correct kernel always passes while a wrong fragment layout, whose
// error is of the order of the result, still fails.
func TF32ErrorFactor(k int) float64 {
	u, step := tf32Roundoff, 0x1p-23
	gamma := float64(k) * step / (1 - float64(k)*step)
	return 2*u + u*u + gamma*(1+u)*(1+u)
}

// tf32Tolerances are the tf32 parts of the tolerances of the batch entries
// of a tf32 gemm on in, whose exact result is want. The element bound of
// TF32ErrorFactor holds for the whole entry in the 2-norm Check measures,
// ‖ĉ − c‖₂ ≤ θ_K·‖|α|·|opA||opB|‖₂, so the entry's relative error is at
// most θ_K·‖|α|·|opA||opB|‖₂/‖c‖₂ (the absolute bound when ‖c‖₂ = 0);
// tolerances adds the exact problem's tolerance for the α scaling, β·C and
// the final store in f32. The ratio of the norms is about 0.75·√K for the
// recipe's inputs (uniform in [-1, 1)), far larger where an entry's sums
// cancel, which the bound follows instead of failing a correct kernel.
func (s Spec) tf32Tolerances(in *Inputs, want []complex128) []float64 {
	abs := s
	abs.Alpha, abs.Beta, abs.Atomic = complex(cmplx.Abs(s.DType.Round(s.Alpha)), 0), 0, false
	absIn := &Inputs{Seed: in.Seed, Batch: in.Batch, Args: slices.Clone(in.Args)}
	for i := range len(absIn.Args) - 1 {
		absIn.Args[i] = absIn.Args[i].absolute()
	}
	bound := make([]complex128, len(want))
	contract[float64](abs, absIn, bound, nil)
	_, _, k := s.contraction()
	theta := TF32ErrorFactor(k)
	per := len(want) / in.Batch
	tols := make([]float64, in.Batch)
	for e := range tols {
		magnitude, norm := entryNorm(bound[e*per:(e+1)*per]), entryNorm(want[e*per:(e+1)*per])
		if norm > 0 {
			magnitude /= norm
		}
		tols[e] = theta * magnitude
	}
	return tols
}

// entryNorm is the 2-norm of one entry's values.
func entryNorm(values []complex128) float64 {
	var sum float64
	for _, z := range values {
		sum += sqAbs(z)
	}
	return math.Sqrt(sum)
}

// tolerance is the largest relative error Check accepts for batch entry e.
func (x *Expected) tolerance(e int) float64 {
	if x.tols != nil {
		return x.tols[e]
	}
	return x.Spec.Tolerance()
}

// Tolerance is the largest relative error Check accepts for any batch
// entry: the loosest entry's (Spec.Tolerance() unless an entry's terms
// cancel, or for tf32).
func (x *Expected) Tolerance() float64 {
	if x.tols != nil {
		return slices.Max(x.tols)
	}
	return x.Spec.Tolerance()
}

// Verdict is the outcome of comparing a device result with the reference.
type Verdict struct {
	OK        bool
	Err       float64 // the worst entry's relative error (+Inf when a value is not finite)
	Tol       float64 // the worst entry's tolerance
	Worst     int     // batch entry with the largest error relative to its tolerance
	NonFinite int     // NaN or ±Inf values in the result; any of them fails
}

func (v Verdict) String() string {
	switch {
	case v.NonFinite > 0:
		return fmt.Sprintf("wrong: %d NaN/Inf values (first in batch entry %d)", v.NonFinite, v.Worst)
	case !v.OK:
		return fmt.Sprintf("wrong: relative error %.3g > tolerance %.3g (batch entry %d)", v.Err, v.Tol, v.Worst)
	}
	return fmt.Sprintf("ok: relative error %.3g <= tolerance %.3g", v.Err, v.Tol)
}

// Check compares the device's output with x. The error of a batch entry is
// ‖out−ref‖₂/‖ref‖₂ over its elements (‖out−ref‖₂ when ‖ref‖₂ = 0, e.g.
// α = β = 0); the verdict takes the entry worst for its tolerance, so one
// wrong entry in a large batch is not averaged away. A NaN or infinite
// output never passes.
func (x *Expected) Check(out *Buffer) (Verdict, error) {
	ops := x.Spec.operands()
	if err := checkBuffer(out, ops[len(ops)-1], x.Batch); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Worst: -1}
	per := out.EntryElements()
	// The entries' errors side by side, then the verdict in entry order.
	errs, nonFinites := make([]float64, x.Batch), make([]int, x.Batch)
	parallel.For(x.Batch, func(e int) {
		errs[e], nonFinites[e] = x.entryError(out, e*per, (e+1)*per)
	})
	for e := range x.Batch {
		err, nonFinite := errs[e], nonFinites[e]
		tol := x.tolerance(e)
		switch {
		case nonFinite > 0:
			if v.NonFinite == 0 {
				v.Worst, v.Err, v.Tol = e, math.Inf(1), tol
			}
			v.NonFinite += nonFinite
		case v.NonFinite == 0 && (v.Worst < 0 || err/tol > v.Err/v.Tol):
			v.Err, v.Tol, v.Worst = err, tol, e
		}
	}
	v.OK = v.NonFinite == 0 && v.Err <= v.Tol
	return v, nil
}

// entryError is the relative error of out's elements [from, to) and how
// many of them are not finite (which the error leaves out).
func (x *Expected) entryError(out *Buffer, from, to int) (err float64, nonFinite int) {
	var diff, norm float64
	for i := from; i < to; i++ {
		got, want := out.At(i), x.Values[i]
		if !isFinite(got) {
			nonFinite++
			continue
		}
		diff += sqAbs(got - want)
		norm += sqAbs(want)
	}
	if norm > 0 {
		diff /= norm
	}
	return math.Sqrt(diff), nonFinite
}

func sqAbs(z complex128) float64 { return real(z)*real(z) + imag(z)*imag(z) }

func isFinite(z complex128) bool {
	return !math.IsNaN(real(z)) && !math.IsInf(real(z), 0) && !math.IsNaN(imag(z)) && !math.IsInf(imag(z), 0)
}
