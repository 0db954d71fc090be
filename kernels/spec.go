package kernels

import (
	"fmt"
	"strings"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

// Op is the collective operation a recipe wraps.
type Op uint8

// The operations.
const (
	GEMMOp Op = iota + 1 // C := α op(A) op(B) + β C
	GEMVOp               // c := α op(A) b + β c
	GEROp                // C := α a bᵀ + β C
)

var opNames = map[Op]string{GEMMOp: "gemm", GEMVOp: "gemv", GEROp: "ger"}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ParseOp returns the operation called s ("gemm", "gemv" or "ger").
func ParseOp(s string) (Op, error) {
	for o, name := range opNames {
		if name == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown operation %q (want gemm, gemv or ger)", s)
}

// transposes is the number of transpose modifiers the operation's
// instruction takes.
func (o Op) transposes() int {
	switch o {
	case GEMMOp:
		return 2
	case GEMVOp:
		return 1
	}
	return 0
}

// Layout is how the batch of matrices is passed to the kernel.
type Layout uint8

// The batch layouts.
const (
	// Strided: one memref per operand whose last mode is the batch,
	// memref<T x s1 x ... x ?>.
	Strided Layout = iota + 1
	// Group: one pointer per batch entry, group<memref<T x s1 x ...> x ?>.
	Group
)

func (l Layout) String() string {
	switch l {
	case Strided:
		return "strided"
	case Group:
		return "group"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// ParseLayout returns the layout called s ("strided" or "group").
func ParseLayout(s string) (Layout, error) {
	switch s {
	case "strided":
		return Strided, nil
	case "group":
		return Group, nil
	}
	return 0, fmt.Errorf("unknown layout %q (want strided or group)", s)
}

// Spec is everything that fixes a recipe's kernel except the tuning
// parameters: the operation, its shape and types, transposes, α and β, the
// batch layout, and the precision it is compiled and verified with. The
// batch count itself is dynamic (chosen at launch).
//
// Shapes follow the operation's mathematical form: gemm computes an M×N C
// from op(A) M×K and op(B) K×N; gemv an M-vector c from op(A) M×N and an
// N-vector b (K is unused); ger an M×N C from an M-vector a and an N-vector
// b (K is unused).
type Spec struct {
	Op      Op
	M, N, K int
	DType   DType // element type of A and B (a and b)
	Acc     DType // element type of C (c); DType ⪯ Acc
	TransA  bool  // gemm and gemv: op(A) = Aᵀ
	TransB  bool  // gemm only: op(B) = Bᵀ
	Layout  Layout
	// Alpha has type DType and Beta type Acc in the kernel, as the
	// language's typing rules for gemm, gemv and ger allow; both are
	// rounded to their types when the kernel is written and when
	// references are computed.
	Alpha, Beta complex128
	// Atomic updates C atomically (the .atomic flag); Beta must then be 0
	// or 1.
	Atomic bool
	// Precision is "" (exact) or speak.TF32: an f32 gemm whose products
	// may round their inputs to tf32 (compiler.Options.Precision), verified
	// with the tf32 error bound (Expected.Check). The kernel source is the
	// same; how it is compiled and checked is not.
	Precision string
}

// MaxDim bounds every shape entry. It keeps every count of this package
// (elements, bytes, FLOPs per batch entry) far inside int64.
const MaxDim = 1 << 16

// Validate reports the first reason the spec cannot be turned into a kernel.
func (s Spec) Validate() error {
	if s.Op < GEMMOp || s.Op > GEROp {
		return fmt.Errorf("unknown operation %v", s.Op)
	}
	if err := s.validateShape(); err != nil {
		return err
	}
	if err := s.validateTypes(); err != nil {
		return err
	}
	if s.TransA && s.Op == GEROp {
		return fmt.Errorf("ger takes no transpose")
	}
	if s.TransB && s.Op != GEMMOp {
		return fmt.Errorf("%v has no matrix B to transpose", s.Op)
	}
	if s.Layout != Strided && s.Layout != Group {
		return fmt.Errorf("unknown layout %v", s.Layout)
	}
	if err := s.validatePrecision(); err != nil {
		return err
	}
	return s.validateScalars()
}

// validatePrecision: tf32 relaxes f32 products on a matrix engine, which
// only a gemm of f32 into f32 has.
func (s Spec) validatePrecision() error {
	switch {
	case s.Precision == "":
		return nil
	case s.Precision != speak.TF32:
		return &fieldError{"precision", fmt.Sprintf("%q: want %s or %s", s.Precision, speak.ExactPrecision, speak.TF32)}
	case s.Op != GEMMOp || s.DType != F32 || s.Acc != F32:
		return &fieldError{"precision", fmt.Sprintf("%s applies to f32 gemm only (--dtype f32 --acc f32), not %v %v/%v; leave it %s",
			s.Precision, s.Op, s.DType, s.Acc, speak.ExactPrecision)}
	}
	return nil
}

func (s Spec) validateShape() error {
	if s.Op != GEMMOp && s.K != 0 {
		return &fieldError{"k", fmt.Sprintf("applies only to gemm; %v is shaped by m and n", s.Op)}
	}
	dims := []struct {
		name string
		v    int
	}{{"m", s.M}, {"n", s.N}, {"k", s.K}}
	if s.Op != GEMMOp {
		dims = dims[:2]
	}
	for _, d := range dims {
		if d.v < 1 || d.v > MaxDim {
			return &fieldError{d.name, fmt.Sprintf("must be between 1 and %d, got %d", MaxDim, d.v)}
		}
	}
	return nil
}

// fieldError is a Validate error about one field (m, n, k, alpha, beta), so
// the command line can name the flag.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + " " + e.msg }

func (s Spec) validateTypes() error {
	if _, ok := dtypeNames[s.DType]; !ok {
		return fmt.Errorf("unknown element type %v", s.DType)
	}
	if _, ok := dtypeNames[s.Acc]; !ok {
		return fmt.Errorf("unknown accumulation type %v", s.Acc)
	}
	if !s.DType.PromotesTo(s.Acc) {
		return fmt.Errorf("accumulation type %v cannot hold every %v value (use one of %s)",
			s.Acc, s.DType, dtypeList(accTypes(s.DType)))
	}
	return nil
}

// accTypes lists the accumulation types d promotes to.
func accTypes(d DType) []DType {
	var out []DType
	for _, a := range DTypes {
		if d.PromotesTo(a) {
			out = append(out, a)
		}
	}
	return out
}

func (s Spec) validateScalars() error {
	for _, v := range []struct {
		name string
		z    complex128
		t    DType
	}{{"alpha", s.Alpha, s.DType}, {"beta", s.Beta, s.Acc}} {
		z := speak.FormatScalar(v.z)
		switch {
		case !isFinite(v.z):
			return &fieldError{v.name, "must be finite, got " + z}
		case imag(v.z) != 0 && !v.t.IsComplex():
			return &fieldError{v.name, fmt.Sprintf("%s is complex but has the real type %v", z, v.t)}
		case !isFinite(v.t.Round(v.z)):
			return &fieldError{v.name, fmt.Sprintf("%s overflows its type %v", z, v.t)}
		}
	}
	if s.Atomic && s.Beta != 0 && s.Beta != 1 {
		return &fieldError{"beta", "must be 0 or 1 for an atomic update, got " + speak.FormatScalar(s.Beta)}
	}
	return nil
}

// transName is the transpose suffix: "nt" for gemm, "t" for gemv, "" for ger.
func (s Spec) transName() string {
	var b strings.Builder
	for _, t := range []bool{s.TransA, s.TransB}[:s.Op.transposes()] {
		b.WriteString(transLetter(t))
	}
	return b.String()
}

func transLetter(t bool) string {
	if t {
		return "t"
	}
	return "n"
}

// contraction is the operation as C(M×N) := α Σ_K opA(M×K)·opB(K×N) + β C:
// gemv is the N=1 case and ger the K=1 case. Counts and references use it.
func (s Spec) contraction() (m, n, k int) {
	switch s.Op {
	case GEMVOp:
		return s.M, 1, s.N
	case GEROp:
		return s.M, s.N, 1
	}
	return s.M, s.N, s.K
}

// Name identifies the recipe in logs and tables: its problem's one
// spelling (speak.Problem.String), e.g. "gemm.nt f16/f32 64x64x32" or
// "ger f32 32x32 beta=1".
func (s Spec) Name() string { return s.Problem().String() }

// Problem is the identity of s as the store, the reports and the tuning
// table key it: α and β rounded to their types, as the kernel has them.
func (s Spec) Problem() speak.Problem {
	return speak.Problem{Op: s.Op.String(), Trans: s.transName(), Dtype: s.DType.String(), Acc: s.Acc.String(),
		M: s.M, N: s.N, K: s.K, Alpha: speak.FormatScalar(s.DType.Round(s.Alpha)), Beta: speak.FormatScalar(s.Acc.Round(s.Beta)),
		Atomic: s.Atomic, Layout: s.Layout.String(), Precision: s.Precision}
}

// TableKey is the tuning-table key of s on device.
func (s Spec) TableKey(device string) tuning.Key {
	return tuning.Key{Device: device, Problem: s.Problem()}
}
