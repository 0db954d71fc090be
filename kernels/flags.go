package kernels

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"tltune/internal/speak"
)

// Flags are the textual shape and type flags of `tltune gemm|gemv|ger`.
// Register them on a FlagSet, parse, then call Spec.
type Flags struct {
	M, N, K int
	DType   string
	Acc     string // empty: f32 for f16 and bf16, else the dtype
	Trans   string // gemm: nn, nt, tn, tt; gemv: n, t; ger: empty
	Layout  string
	Alpha   string
	Beta    string // a number, or "atomic" (β=1, atomic update) or "atomic:0" / "atomic:1"
	// Precision is "exact" (or empty) or "tf32"; gemm only.
	Precision string
}

// Register defines op's flags on fs with their defaults: --k only for
// gemm, --trans not for ger.
func (f *Flags) Register(fs *flag.FlagSet, op Op) {
	switch op {
	case GEMMOp:
		fs.IntVar(&f.M, "m", 0, "rows of C")
		fs.IntVar(&f.N, "n", 0, "columns of C")
		fs.IntVar(&f.K, "k", 0, "reduction length: columns of op(A), rows of op(B)")
		fs.StringVar(&f.Trans, "trans", "", "transposes of A and B: nn, nt, tn or tt (default nn)")
		fs.StringVar(&f.Precision, "precision", speak.ExactPrecision, "exact, or tf32: f32 inputs rounded to tf32 on the matrix engine (nvidia mma.sync m16n8k8), verified with the tf32 error bound; a separate problem in the store")
	case GEMVOp:
		fs.IntVar(&f.M, "m", 0, "length of c: rows of op(A)")
		fs.IntVar(&f.N, "n", 0, "length of b: columns of op(A)")
		fs.StringVar(&f.Trans, "trans", "", "transpose of A: n or t (default n)")
	default:
		fs.IntVar(&f.M, "m", 0, "rows of C: length of a")
		fs.IntVar(&f.N, "n", 0, "columns of C: length of b")
	}
	fs.StringVar(&f.DType, "dtype", "f32", "element type of the inputs: "+dtypeList(DTypes))
	fs.StringVar(&f.Acc, "acc", "", "accumulation (output) type; default f32 for f16/bf16, else --dtype")
	fs.StringVar(&f.Layout, "layout", "strided", "batch layout: strided (memref<...x?>) or group (pointer array)")
	fs.StringVar(&f.Alpha, "alpha", "1", "alpha, real or complex (1+2i)")
	fs.StringVar(&f.Beta, "beta", "0", "beta, real or complex; atomic (or atomic:1) = beta 1 with an atomic update of C, atomic:0 = atomic store")
}

// Spec turns the parsed flags into a validated Spec for op. Every error is
// one line that names the flag and what it accepts.
func (f *Flags) Spec(op Op) (Spec, error) {
	s := Spec{Op: op, M: f.M, N: f.N, K: f.K}
	var err error
	if s.DType, err = dtypeFlag("dtype", f.DType); err != nil {
		return Spec{}, err
	}
	if s.Acc, err = f.acc(s.DType); err != nil {
		return Spec{}, err
	}
	if s.TransA, s.TransB, err = parseTrans(op, f.Trans); err != nil {
		return Spec{}, err
	}
	if s.Layout, err = layoutFlag(f.Layout); err != nil {
		return Spec{}, err
	}
	if s.Alpha, err = ParseScalar(f.Alpha); err != nil {
		return Spec{}, fmt.Errorf("--alpha: %v", err)
	}
	if s.Beta, s.Atomic, err = ParseBeta(f.Beta); err != nil {
		return Spec{}, fmt.Errorf("--beta: %v", err)
	}
	if s.Precision, err = precisionFlag(f.Precision); err != nil {
		return Spec{}, err
	}
	if err := s.Validate(); err != nil {
		return Spec{}, flagError(err)
	}
	return s, nil
}

// CheckSet checks the flags among --dtype, --acc, --trans, --layout and
// --precision that are set, with the errors of Spec, and leaves the empty
// ones open. It is for commands that select stored problems by these flags
// rather than build one: a value Spec would refuse can match nothing, and
// saying so names the flag rather than an empty result.
func (f *Flags) CheckSet(op Op) error {
	var d DType // zero while --dtype is open
	var err error
	if f.DType != "" {
		if d, err = dtypeFlag("dtype", f.DType); err != nil {
			return err
		}
	}
	switch {
	case f.Acc != "" && d == 0:
		_, err = dtypeFlag("acc", f.Acc)
	case f.Acc != "":
		_, err = f.acc(d)
	}
	if err != nil {
		return err
	}
	if _, _, err := parseTrans(op, f.Trans); err != nil {
		return err
	}
	if f.Layout != "" {
		if _, err := layoutFlag(f.Layout); err != nil {
			return err
		}
	}
	_, err = precisionFlag(f.Precision)
	return err
}

// dtypeFlag parses the element type of flag --name.
func dtypeFlag(name, s string) (DType, error) {
	d, err := ParseDType(s)
	if err != nil {
		return 0, fmt.Errorf("--%s: %v", name, err)
	}
	return d, nil
}

func layoutFlag(s string) (Layout, error) {
	l, err := ParseLayout(s)
	if err != nil {
		return 0, fmt.Errorf("--layout: %v", err)
	}
	return l, nil
}

func precisionFlag(s string) (string, error) {
	p, err := ParsePrecision(s)
	if err != nil {
		return "", fmt.Errorf("--precision: %v", err)
	}
	return p, nil
}

func (f *Flags) acc(d DType) (DType, error) {
	if f.Acc == "" {
		if d == F16 || d == BF16 {
			return F32, nil
		}
		return d, nil
	}
	a, err := dtypeFlag("acc", f.Acc)
	if err != nil {
		return 0, err
	}
	if !d.PromotesTo(a) {
		return 0, fmt.Errorf("--acc %v is narrower than --dtype %v; use one of %s", a, d, dtypeList(accTypes(d)))
	}
	return a, nil
}

func parseTrans(op Op, s string) (transA, transB bool, err error) {
	want := map[Op]string{GEMMOp: "nn, nt, tn or tt", GEMVOp: "n or t", GEROp: "nothing (ger has no transposes)"}[op]
	if s == "" {
		return false, false, nil
	}
	if len(s) != op.transposes() || strings.Trim(s, "nt") != "" {
		return false, false, fmt.Errorf("--trans %q: %v takes %s", s, op, want)
	}
	return s[0] == 't', len(s) == 2 && s[1] == 't', nil
}

// ParseScalar reads a real ("0.5", "-2") or complex ("1+2i", "(1+2i)")
// number.
func ParseScalar(s string) (complex128, error) {
	z, err := strconv.ParseComplex(strings.TrimSpace(s), 128)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number (write 0.5, -2 or 1+2i)", s)
	}
	return z, nil
}

// ParseBeta reads --beta: a number, or "atomic" / "atomic:1" (β = 1 with
// an atomic update of C) or "atomic:0" (an atomic store).
func ParseBeta(s string) (beta complex128, atomic bool, err error) {
	switch s {
	case "atomic", "atomic:1":
		return 1, true, nil
	case "atomic:0":
		return 0, true, nil
	}
	if strings.HasPrefix(s, "atomic") {
		return 0, false, fmt.Errorf("%q: an atomic update of C is atomic (or atomic:1, β = 1) or atomic:0 (an atomic store)", s)
	}
	beta, err = ParseScalar(s)
	return beta, false, err
}

// ParsePrecision reads a precision as flags spell it: "exact" (or empty)
// is the problem key's "", "tf32" is speak.TF32.
func ParsePrecision(s string) (string, error) {
	switch s {
	case "", speak.ExactPrecision:
		return "", nil
	case speak.TF32:
		return speak.TF32, nil
	}
	return "", fmt.Errorf("%q: want %s or %s", s, speak.ExactPrecision, speak.TF32)
}

// flagError names the flag behind a Validate error about one field.
func flagError(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("--%v", fe)
	}
	return err
}
