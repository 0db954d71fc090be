package speak

import (
	"cmp"
	"strconv"
	"strings"
)

// A Problem is the identity of a tuning problem (DESIGN.md §6): everything
// that fixes what a gemm, gemv or ger computes and how its operands are
// passed, but not how it is computed. Two measurements of one Problem are
// two ways of computing the same thing; measurements of different Problems
// are never compared, merged or served for each other as equals. The
// store, remeasure, regress, table, history, export and the compiler's
// lookup all key by it.
//
// The layout of a matrix entry is column-major with op() applied as Trans
// says, so Trans is its matrix layout; Layout is the batch layout.
type Problem struct {
	Op    string `json:"op"`    // "gemm", "gemv" or "ger"
	Trans string `json:"trans"` // "nn", "tn", ... for gemm, "n"/"t" for gemv, "" for ger
	Dtype string `json:"dtype"` // element type of the operands
	Acc   string `json:"acc"`   // accumulation (and C) type
	M     int    `json:"m"`
	N     int    `json:"n"`
	K     int    `json:"k"` // 0 for ops without a reduction dimension (gemv, ger)
	// Alpha and Beta are the scalars as FormatScalar spells them, rounded
	// to their types (α: Dtype, β: Acc); DynamicScalar when the compiler
	// sees no constant, "" when unknown (a version 1 tuning table).
	Alpha  string `json:"alpha"`
	Beta   string `json:"beta"`
	Atomic bool   `json:"atomic"` // C is updated atomically (β is then 0 or 1)
	Layout string `json:"layout"` // batch layout: "strided" or "group"; "" when unknown
	// Precision is how the products may round: "" (ExactPrecision) is the
	// arithmetic of the types, TF32 rounds f32 inputs to tf32 on the matrix
	// engine. A relaxed run computes something else (another error bound,
	// another speed), so it is another problem. Omitted from JSON when
	// exact, so documents and tuning tables from before it still read.
	Precision string `json:"precision,omitempty"`
}

// Scalar spellings with a meaning of their own.
const (
	DynamicScalar = "?" // α or β is not a compile-time constant
	// The defaults of every tuning command, omitted when a problem is
	// spelt.
	DefaultAlpha  = "1"
	DefaultBeta   = "0"
	DefaultLayout = "strided"
)

// The precisions. ExactPrecision is how flags and messages spell the
// empty (default) one.
const (
	ExactPrecision = "exact"
	TF32           = "tf32" // f32 GEMM inputs rounded to 10-bit mantissas, f32 accumulation
)

// PrecisionNote says in one line what a relaxed precision means for a
// problem's results; "" for exact.
func PrecisionNote(p string) string {
	if p == TF32 {
		return "precision tf32: f32 inputs rounded to tf32 (10-bit mantissa) on the matrix engine, f32 accumulation; verified with the tf32 error bound, not the f32 tolerance"
	}
	return ""
}

// PrecisionName is p as flags and messages spell it: "exact" for "".
func PrecisionName(p string) string {
	if p == "" {
		return ExactPrecision
	}
	return p
}

// FormatScalar is the one spelling of α and β in keys: a real number as
// Go's shortest round-trip form ("1", "0.5", "-2"), a complex one as
// "(re+imi)".
func FormatScalar(z complex128) string {
	if imag(z) == 0 {
		return strconv.FormatFloat(real(z), 'g', -1, 64)
	}
	return strconv.FormatComplex(z, 'g', -1, 128)
}

// String is the one spelling of a problem in every table, message and
// chart, e.g. "gemm.nn f16/f32 64x64x32", "ger f32 32x32 beta=1",
// "gemv.t f64 128x64 alpha=0.5 atomic group", "gemm.nn f32 64x64x64 tf32":
// the operation and its transposes, the element type (and accumulation
// type where it differs), the shape, then α, β, atomic update, batch
// layout and precision where they differ from the defaults (α = 1, β = 0,
// strided, exact). A dynamic or unknown scalar
// prints as "?", a dynamic size as "?".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Op)
	if p.Trans != "" {
		b.WriteString("." + p.Trans)
	}
	b.WriteString(" " + p.Dtype)
	if p.Acc != "" && p.Acc != p.Dtype {
		b.WriteString("/" + p.Acc)
	}
	b.WriteString(" " + p.Shape())
	if p.Alpha != DefaultAlpha {
		b.WriteString(" alpha=" + orUnknown(p.Alpha))
	}
	if p.Beta != DefaultBeta {
		b.WriteString(" beta=" + orUnknown(p.Beta))
	}
	if p.Atomic {
		b.WriteString(" atomic")
	}
	if p.Layout != "" && p.Layout != DefaultLayout {
		b.WriteString(" " + p.Layout)
	}
	if p.Precision != "" {
		b.WriteString(" " + p.Precision)
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return DynamicScalar
	}
	return s
}

// Shape is "MxN" (gemv, ger) or "MxNxK" (gemm); a dynamic size is "?".
func (p Problem) Shape() string {
	dims := []int{p.M, p.N, p.K}
	if p.Op != "gemm" && p.K == 0 {
		dims = dims[:2]
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = DynamicScalar
		if d > 0 {
			parts[i] = strconv.Itoa(d)
		}
	}
	return strings.Join(parts, "x")
}

// Compare orders problems by op, trans, types, shape, then scalars,
// atomic update, layout and precision: the order of tables and reports.
func (p Problem) Compare(q Problem) int {
	return cmp.Or(
		strings.Compare(p.Op, q.Op),
		strings.Compare(p.Trans, q.Trans),
		strings.Compare(p.Dtype, q.Dtype),
		strings.Compare(p.Acc, q.Acc),
		cmp.Compare(p.M, q.M),
		cmp.Compare(p.N, q.N),
		cmp.Compare(p.K, q.K),
		strings.Compare(p.Alpha, q.Alpha),
		strings.Compare(p.Beta, q.Beta),
		boolCompare(p.Atomic, q.Atomic),
		strings.Compare(p.Layout, q.Layout),
		strings.Compare(p.Precision, q.Precision),
	)
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// A NamedProblem is how every JSON document names a problem: its one
// spelling under "problem", then its fields.
type NamedProblem struct {
	Name string `json:"problem"`
	Problem
}

// Named is p with its spelling.
func Named(p Problem) NamedProblem { return NamedProblem{p.String(), p} }
