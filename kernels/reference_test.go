package kernels

import (
	"math"
	"math/cmplx"
	"strings"
	"testing"
)

// A 2×2×2 gemm worked by hand: A = [1 2; 3 4], B = [5 6; 7 8] (row-wise
// here, column-major in memory), α = 2, β = -1, C = [1 1; 1 1].
func TestReferenceByHand(t *testing.T) {
	r, err := GEMM(Spec{M: 2, N: 2, K: 2, DType: F64, Acc: F64, Layout: Strided, Alpha: 2, Beta: -1})
	if err != nil {
		t.Fatal(err)
	}
	in, err := r.Inputs(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	setAll(in.Args[0], 1, 3, 2, 4) // column-major
	setAll(in.Args[1], 5, 7, 6, 8)
	setAll(in.Args[2], 1, 1, 1, 1)
	x, err := r.Reference(in)
	if err != nil {
		t.Fatal(err)
	}
	// AB = [19 22; 43 50]; 2AB - C = [37 43; 85 99].
	for i, want := range []complex128{37, 85, 43, 99} {
		if x.Values[i] != want {
			t.Errorf("C[%d] = %v, want %v", i, x.Values[i], want)
		}
	}
}

func setAll(b *Buffer, vs ...complex128) {
	for i, v := range vs {
		b.Set(i, v)
	}
}

// naive recomputes a recipe's result from explicit op(A), op(B) matrices
// built element by element from the stored layout, independently of plan.
func naive(s Spec, in *Inputs, e int) []complex128 {
	A, B, C := in.Args[0], in.Args[1], in.Args[2]
	at := func(b *Buffer, i int) complex128 { return b.At(e*b.EntryElements() + i) }
	var opA, opB func(i, l int) complex128
	m, n, k := s.M, s.N, s.K
	switch s.Op {
	case GEMMOp:
		opA = matrix(A, at, s.TransA)
		opB = matrix(B, at, s.TransB)
	case GEMVOp:
		n, k = 1, s.N
		opA = matrix(A, at, s.TransA)
		opB = func(l, _ int) complex128 { return at(B, l) }
	case GEROp:
		k = 1
		opA = func(i, _ int) complex128 { return at(A, i) }
		opB = func(_, j int) complex128 { return at(B, j) }
	}
	out := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			var sum complex128
			for l := range k {
				sum += opA(i, l) * opB(l, j)
			}
			v := s.DType.Round(s.Alpha) * sum
			if s.Beta != 0 {
				v += s.Acc.Round(s.Beta) * at(C, i+j*m)
			}
			out[i+j*m] = v
		}
	}
	return out
}

// matrix returns op(X)(i, l) for the stored column-major X.
func matrix(x *Buffer, at func(*Buffer, int) complex128, trans bool) func(i, l int) complex128 {
	rows := x.Shape[0]
	if trans {
		return func(i, l int) complex128 { return at(x, l+i*rows) }
	}
	return func(i, l int) complex128 { return at(x, i+l*rows) }
}

// Every variant's reference agrees with the naive recomputation on several
// batch entries (entries are distinct, so a wrong entry offset shows), at
// the small shape of variants and at degenerate and ragged larger ones.
func TestReferenceMatchesNaive(t *testing.T) {
	specs := variants()
	for _, shape := range [][3]int{{1, 1, 1}, {1, 9, 4}, {33, 1, 17}, {64, 48, 65}} {
		for _, s := range variants() {
			// One scalar kind and layout suffice here: neither changes
			// the indexing the larger shapes exercise.
			if (s.DType == F32 || s.DType == C64) && s.Alpha == 0.5 && s.Layout == Strided {
				s.M, s.N = shape[0], shape[1]
				if s.Op == GEMMOp {
					s.K = shape[2]
				}
				specs = append(specs, s)
			}
		}
	}
	for _, s := range specs {
		in, x := inputsAndReference(t, s, 3)
		per := in.Output().EntryElements()
		for e := range 3 {
			want := naive(s, in, e)
			for i, w := range want {
				if got := x.Values[e*per+i]; cmplx.Abs(got-w) > 1e-12*(1+cmplx.Abs(w)) {
					t.Fatalf("%s: entry %d element %d = %v, want %v", s.Name(), e, i, got, w)
				}
			}
		}
	}
}

func TestInputsSeeded(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 4, N: 3, K: 2, DType: BF16, Acc: F32, Layout: Group, Alpha: 1, Beta: 1}
	a, _ := s.inputs(42, 2)
	b, _ := s.inputs(42, 2)
	c, _ := s.inputs(43, 2)
	for i := range a.Args {
		if string(a.Args[i].Data) != string(b.Args[i].Data) {
			t.Errorf("argument %d differs between two draws with seed 42", i)
		}
		if string(a.Args[i].Data) == string(c.Args[i].Data) {
			t.Errorf("argument %d is the same for seeds 42 and 43", i)
		}
	}
	if a.Seed != 42 {
		t.Errorf("seed not recorded: %d", a.Seed)
	}
	for i := range a.Args[0].Len() {
		v := real(a.Args[0].At(i))
		if v < -1 || v > 1 || complex(v, 0) != BF16.Round(complex(v, 0)) {
			t.Fatalf("A[%d] = %v is not a bf16 value in [-1, 1]", i, v)
		}
	}
}

// With β = 0 the output starts as NaN, and the reference must not read it.
func TestBetaZeroPoisonsOutput(t *testing.T) {
	s := Spec{Op: GEROp, M: 3, N: 2, DType: F16, Acc: F16, Layout: Strided, Alpha: 1}
	in, _ := s.inputs(1, 2)
	for i := range in.Output().Len() {
		if !math.IsNaN(real(in.Output().At(i))) {
			t.Fatalf("output element %d = %v, want NaN", i, in.Output().At(i))
		}
	}
	x, _ := s.reference(in)
	for i, v := range x.Values {
		if !isFinite(v) {
			t.Fatalf("reference element %d = %v: the reference read the poisoned output", i, v)
		}
	}
}

func TestBufferRoundTrip(t *testing.T) {
	for _, d := range DTypes {
		b := &Buffer{Type: d, Shape: []int{3}, Batch: 1, Data: make([]byte, 3*d.Size())}
		want := []complex128{0.1, -2.5, 65504}
		if d.IsComplex() {
			want = []complex128{0.1 + 0.2i, -2.5 - 1i, 3i}
		}
		for i, z := range want {
			b.Set(i, z)
			if got := b.At(i); got != d.Round(z) {
				t.Errorf("%v: stored %v, read %v, want %v", d, z, got, d.Round(z))
			}
		}
	}
	// The f16 encoding is IEEE binary16: 1.0 is 0x3c00, little-endian.
	b := &Buffer{Type: F16, Shape: []int{1}, Batch: 1, Data: make([]byte, 2)}
	b.Set(0, 1)
	if b.Data[0] != 0x00 || b.Data[1] != 0x3c {
		t.Errorf("f16 1.0 encodes as % x, want 00 3c", b.Data)
	}
}

func TestReferenceRejectsMismatchedInputs(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 4, N: 4, K: 4, DType: F32, Acc: F32, Layout: Strided, Alpha: 1}
	in, _ := s.inputs(1, 2)
	other := s
	other.K = 5
	if _, err := other.reference(in); err == nil || !strings.Contains(err.Error(), "argument %A") {
		t.Errorf("reference of a 4x4x5 gemm on 4x4x4 inputs: err = %v", err)
	}
}
