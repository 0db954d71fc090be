package kernels

import (
	"math"
	"math/cmplx"
	"slices"
	"strings"
	"testing"

	"tltune/internal/speak"
)

// simulate plays a legitimate low-precision device: every product rounded
// to dtype, a sequential sum rounded to acc after each addition, the α
// scaling rounded to dtype, then β·C and the store rounded to acc. skip
// drops the last skip terms of every sum (a broken remainder loop).
func simulate(s Spec, in *Inputs, skip int) *Buffer {
	p := s.plan()
	A, B, C := in.Args[0], in.Args[1], in.Args[2]
	out := &Buffer{Name: C.Name, Type: C.Type, Shape: C.Shape, Batch: C.Batch, Data: append([]byte(nil), C.Data...)}
	alpha, beta := s.DType.Round(s.Alpha), s.Acc.Round(s.Beta)
	for e := range in.Batch {
		a, b, c := e*A.EntryElements(), e*B.EntryElements(), e*C.EntryElements()
		for j := range p.n {
			for i := range p.m {
				var sum complex128
				for l := range p.k - skip {
					prod := s.DType.Round(A.At(a+i*p.aRow+l*p.aCol) * B.At(b+l*p.bRow+j*p.bCol))
					sum = s.Acc.Round(sum + prod)
				}
				v := s.DType.Round(alpha * sum)
				if beta != 0 {
					v = s.Acc.Round(v + s.Acc.Round(beta*C.At(c+i+j*p.m)))
				}
				out.Set(c+i+j*p.m, v)
			}
		}
	}
	return out
}

var precisionPairs = [][2]DType{{F16, F16}, {F16, F32}, {BF16, BF16}, {BF16, F32}, {F32, F32}, {F32, F64}, {F64, F64}, {C32, C32}, {C32, C64}, {C64, C64}}

// The tolerance must admit every legitimate rounding of the computation,
// for short and long reductions.
func TestToleranceAdmitsLowPrecisionDevice(t *testing.T) {
	for _, pr := range precisionPairs {
		for _, k := range []int{1, 16, 300, 4096} {
			s := Spec{Op: GEMMOp, M: 4, N: 3, K: k, DType: pr[0], Acc: pr[1], Layout: Strided, Alpha: 0.75, Beta: -1.25}
			v := verdict(t, s, 0, 8)
			if !v.OK {
				t.Errorf("%s: a correctly rounding device fails: %v", s.Name(), v)
			}
		}
	}
}

// ... and reject the typical bugs at modest K.
func TestToleranceRejectsBugs(t *testing.T) {
	for _, pr := range precisionPairs {
		s := Spec{Op: GEMMOp, M: 4, N: 4, K: 16, DType: pr[0], Acc: pr[1], Layout: Strided, Alpha: 1, Beta: 1}
		if v := verdict(t, s, 1, 8); v.OK {
			t.Errorf("%s: dropping one of 16 terms passes: %v", s.Name(), v)
		}
		in, x := inputsAndReference(t, s, 8)
		transposed := s
		transposed.TransB = true
		if v := check(t, x, simulate(transposed, in, 0)); v.OK {
			t.Errorf("%s: reading B transposed passes: %v", s.Name(), v)
		}
		out := simulate(s, in, 0)
		per := out.EntryElements() * out.Type.Size()
		copy(out.Data[5*per:6*per], out.Data[4*per:5*per]) // entry 5 written with entry 4's result
		if v := check(t, x, out); v.OK || v.Worst != 5 {
			t.Errorf("%s: one wrong batch entry of 8: %v (worst %d)", s.Name(), v, v.Worst)
		}
	}
}

// TestToleranceAdmitsCancellation: entries whose result nearly cancels
// (β·c close to −α·Σ a·b, one output each) pass when computed by a
// correctly rounding device of every precision, where a tolerance relative
// to the result alone failed them; dropping a term still fails. Before
// the tolerance followed cancellation, tuning a gemv of one row failed
// correct kernels at some seeds.
func TestToleranceAdmitsCancellation(t *testing.T) {
	for _, pr := range precisionPairs {
		s := Spec{Op: GEMMOp, M: 1, N: 1, K: 16, DType: pr[0], Acc: pr[1], Layout: Strided, Alpha: 0.75, Beta: -1}
		in, err := s.inputs(5, 8)
		if err != nil {
			t.Fatal(err)
		}
		A, B, C := in.Args[0], in.Args[1], in.Args[2]
		for e := range in.Batch {
			var sum complex128
			for l := range s.K {
				sum += A.At(e*s.K+l) * B.At(e*s.K+l)
			}
			C.Set(e, 0.75*sum) // rounded to acc: the result is the rounding left over
		}
		x, err := s.reference(in)
		if err != nil {
			t.Fatal(err)
		}
		if v := check(t, x, simulate(s, in, 0)); !v.OK {
			t.Errorf("%s: a correctly rounding device fails where the result cancels: %v", s.Name(), v)
		}
		if v := check(t, x, simulate(s, in, 1)); v.OK {
			t.Errorf("%s: dropping one of 16 terms passes where the result cancels: %v", s.Name(), v)
		}
	}
}

// roundTF32 rounds an f32 value to tf32 as cvt.rna does: to the nearest
// value with 10 explicit mantissa bits, ties away from zero.
func roundTF32(x float64) float64 {
	bits := math.Float32bits(float32(x))
	return float64(math.Float32frombits((bits + 1<<12) &^ (1<<13 - 1)))
}

// withInputs is in with its A and B replaced by f(A) and f(B).
func withInputs(in *Inputs, f func(complex128) complex128) *Inputs {
	out := &Inputs{Seed: in.Seed, Batch: in.Batch, Args: slices.Clone(in.Args)}
	for i := range 2 {
		b := *in.Args[i]
		b.Data = slices.Clone(b.Data)
		for j := range b.Len() {
			b.Set(j, f(b.At(j)))
		}
		out.Args[i] = &b
	}
	return out
}

// tf32Device plays mma.sync with tf32 inputs: A and B rounded to tf32, the
// products (exact in f32) summed in f32, then α, β·C and the store in f32.
func tf32Device(s Spec, in *Inputs, skip int) *Buffer {
	return simulate(s, withInputs(in, func(z complex128) complex128 { return complex(roundTF32(real(z)), 0) }), skip)
}

// TestTF32Tolerance: a result rounded as a tf32 engine rounds passes only
// with precision tf32, for short and long reductions; so does one off by
// 0.9 times the worst-case bound in every element (1.5 times fails); the
// bugs of TestToleranceRejectsBugs still fail.
func TestTF32Tolerance(t *testing.T) {
	for _, k := range []int{1, 16, 300, 4096} {
		s := Spec{Op: GEMMOp, M: 4, N: 3, K: k, DType: F32, Acc: F32, Layout: Strided, Alpha: 0.75, Beta: -1.25, Precision: speak.TF32}
		in, x := inputsAndReference(t, s, 8)
		exact := s
		exact.Precision = ""
		_, xExact := inputsAndReference(t, exact, 8)
		out := tf32Device(s, in, 0)
		if v := check(t, x, out); !v.OK {
			t.Errorf("%s: a tf32 device fails: %v", s.Name(), v)
		}
		if v := check(t, xExact, out); v.OK {
			t.Errorf("%s: a tf32 device passes as exact: %v", exact.Name(), v)
		}
		for factor, pass := range map[float64]bool{0.9: true, 1.5: false} {
			if v := check(t, x, offByBound(t, s, in, x, factor)); v.OK != pass {
				t.Errorf("%s: off by %g times the bound in every element: %v", s.Name(), factor, v)
			}
		}
	}
	s := Spec{Op: GEMMOp, M: 4, N: 4, K: 16, DType: F32, Acc: F32, Layout: Strided, Alpha: 1, Beta: 1, Precision: speak.TF32}
	in, x := inputsAndReference(t, s, 8)
	if v := check(t, x, tf32Device(s, in, 1)); v.OK {
		t.Errorf("%s: dropping one of 16 terms passes: %v", s.Name(), v)
	}
	transposed := s
	transposed.TransB = true
	if v := check(t, x, tf32Device(transposed, in, 0)); v.OK {
		t.Errorf("%s: reading B transposed passes: %v", s.Name(), v)
	}
}

// offByBound is the exact result plus factor times the element bound of
// TF32ErrorFactor, θ_K·|α|·Σ|a||b|, in every element.
func offByBound(t *testing.T, s Spec, in *Inputs, x *Expected, factor float64) *Buffer {
	t.Helper()
	abs := s
	abs.Alpha, abs.Beta, abs.Precision = complex(cmplx.Abs(s.Alpha), 0), 0, ""
	xa, err := abs.reference(withInputs(in, func(z complex128) complex128 { return complex(cmplx.Abs(z), 0) }))
	if err != nil {
		t.Fatal(err)
	}
	theta := TF32ErrorFactor(s.K)
	out := *in.Output()
	out.Data = slices.Clone(out.Data)
	for i := range out.Len() {
		out.Set(i, x.Values[i]+complex(factor*theta, 0)*xa.Values[i])
	}
	return &out
}

func TestNaNNeverPasses(t *testing.T) {
	s := Spec{Op: GEMVOp, M: 8, N: 8, DType: F32, Acc: F32, Layout: Group, Alpha: 1}
	in, x := inputsAndReference(t, s, 4)
	out := simulate(s, in, 0)
	out.Set(3*8+2, complex(math.NaN(), 0))
	out.Set(3*8+5, complex(math.Inf(-1), 0))
	v := check(t, x, out)
	if v.OK || v.NonFinite != 2 || v.Worst != 3 || !strings.Contains(v.String(), "2 NaN/Inf") {
		t.Errorf("NaN and -Inf in entry 3: %+v (%v)", v, v)
	}
	// A kernel that ignored β = 0 and read the poisoned C leaves NaN.
	if v := check(t, x, in.Output()); v.OK {
		t.Errorf("the untouched NaN-poisoned output passes: %v", v)
	}
}

// α = β = 0: the reference is zero, so the error is absolute.
func TestZeroReference(t *testing.T) {
	s := Spec{Op: GEROp, M: 3, N: 3, DType: F64, Acc: F64, Layout: Strided}
	in, x := inputsAndReference(t, s, 2)
	out := simulate(s, in, 0)
	if v := check(t, x, out); !v.OK || v.Err != 0 {
		t.Errorf("exact zeros: %v", v)
	}
	out.Set(4, 1e-3)
	if v := check(t, x, out); v.OK {
		t.Errorf("1e-3 where 0 is expected passes: %v", v)
	}
}

func TestCheckRejectsWrongBuffer(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 2, N: 2, K: 2, DType: F32, Acc: F32, Layout: Strided, Alpha: 1}
	in, x := inputsAndReference(t, s, 2)
	wrong := *in.Output()
	wrong.Type = F64
	if _, err := x.Check(&wrong); err == nil {
		t.Error("an f64 buffer is accepted for an f32 output")
	}
}

func inputsAndReference(t *testing.T, s Spec, batch int) (*Inputs, *Expected) {
	t.Helper()
	in, err := s.inputs(uint64(batch)*977, batch)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.reference(in)
	if err != nil {
		t.Fatal(err)
	}
	return in, x
}

func verdict(t *testing.T, s Spec, skip, batch int) Verdict {
	t.Helper()
	in, x := inputsAndReference(t, s, batch)
	return check(t, x, simulate(s, in, skip))
}

func check(t *testing.T, x *Expected, out *Buffer) Verdict {
	t.Helper()
	v, err := x.Check(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
