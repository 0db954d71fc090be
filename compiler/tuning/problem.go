package tuning

import (
	"fmt"
	"strconv"
	"strings"

	"tltune/internal/speak"
)

// epilogueMismatch counts the fields outside op, types and shape in which
// an entry's problem e differs from the asked one: a configuration tuned
// for β = 0 never loads C, one for an atomic update pays for atomics, so
// the nearest-shape search prefers entries that agree here.
func epilogueMismatch(p, e speak.Problem) int {
	n := 0
	for _, differ := range []bool{p.Alpha != e.Alpha, p.Beta != e.Beta, p.Atomic != e.Atomic, p.Layout != e.Layout} {
		if differ {
			n++
		}
	}
	return n
}

// validate checks the fields every stored or tabled problem must have.
// Version 1 tables have no scalars, atomic flag or layout: legacy admits
// them empty.
func validateProblem(p speak.Problem, legacy bool) error {
	switch {
	case !contains(ops, p.Op):
		return fmt.Errorf("op %q is not one of %s", p.Op, strings.Join(ops, ", "))
	case strings.Trim(p.Trans, "ntc") != "" || len(p.Trans) > 2:
		return fmt.Errorf("trans %q: want up to two of n, t, c (e.g. \"nn\")", p.Trans)
	case !contains(dtypes, p.Dtype):
		return fmt.Errorf("dtype %q is not one of %s", p.Dtype, strings.Join(dtypes, ", "))
	case p.Acc != "" && !contains(dtypes, p.Acc):
		return fmt.Errorf("acc %q is not one of %s", p.Acc, strings.Join(dtypes, ", "))
	case p.M < 1 || p.N < 1 || p.K < 0:
		return fmt.Errorf("shape m=%d n=%d k=%d: m and n must be positive, k non-negative", p.M, p.N, p.K)
	case p.Op == "gemm" && p.K < 1:
		return fmt.Errorf("gemm shape needs k >= 1, got %d", p.K)
	case p.Precision != "" && (p.Precision != speak.TF32 || p.Op != "gemm" || p.Dtype != "f32" || p.Acc != "f32"):
		return fmt.Errorf("precision %q: only an f32 gemm into f32 may have one, %q (absent: exact)", p.Precision, speak.TF32)
	}
	if legacy && p.Alpha == "" && p.Beta == "" && !p.Atomic && p.Layout == "" {
		return nil
	}
	for _, s := range []struct{ name, v string }{{"alpha", p.Alpha}, {"beta", p.Beta}} {
		if _, err := strconv.ParseComplex(s.v, 128); err != nil {
			return fmt.Errorf("%s %q is not a number", s.name, s.v)
		}
	}
	if p.Atomic && p.Beta != "0" && p.Beta != "1" {
		return fmt.Errorf("beta %s with an atomic update: want 0 or 1", p.Beta)
	}
	if !contains(layouts, p.Layout) {
		return fmt.Errorf("layout %q is not one of %s", p.Layout, strings.Join(layouts, ", "))
	}
	return nil
}
