package prune

import (
	"fmt"
	"slices"
)

// Problem is what pruning needs to know of the shape being tuned.
type Problem struct {
	Op    string // gemm, gemv or ger
	Dtype string // element type of the inputs: f16, bf16, f32, f64, c32, c64
	Acc   string // accumulation type; "" means DefaultAcc(Dtype)
	// Trans: gemv "t" when op(A) = Aᵀ; gemm "nn".."tt" (a staged panel
	// keeps its operand's stored layout, so its size depends on them); ""
	// otherwise.
	Trans string
	// M, N: C is M×N (gemm); A is M×N (gemv, ger). K: the reduction of gemm.
	M, N, K int
	Batch   int // batch entries; 0 when not known
	// Atomic: C is updated atomically, which the local epilogue does not do.
	Atomic bool
}

// elemBytes is the size of each element type.
var elemBytes = map[string]int{"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "c32": 8, "c64": 16}

// DefaultAcc is the accumulation type used when none is given: half
// precision inputs accumulate in f32, everything else in its own type.
func DefaultAcc(dtype string) string {
	if dtype == "f16" || dtype == "bf16" {
		return "f32"
	}
	return dtype
}

// Validate reports a problem that no configuration can serve.
func (p Problem) Validate() error {
	if !slices.Contains([]string{"gemm", "gemv", "ger"}, p.Op) {
		return fmt.Errorf("op %q is not gemm, gemv or ger", p.Op)
	}
	if _, ok := elemBytes[p.Dtype]; !ok {
		return fmt.Errorf("dtype %q is not one of f16, bf16, f32, f64, c32, c64", p.Dtype)
	}
	if _, ok := elemBytes[p.acc()]; !ok {
		return fmt.Errorf("accumulation type %q is not one of f16, bf16, f32, f64, c32, c64", p.Acc)
	}
	if p.M <= 0 || p.N <= 0 || (p.Op == "gemm" && p.K <= 0) || p.Batch < 0 {
		return fmt.Errorf("shape m=%d n=%d k=%d batch=%d: sizes must be positive", p.M, p.N, p.K, p.Batch)
	}
	return nil
}

func (p Problem) acc() string {
	if p.Acc == "" {
		return DefaultAcc(p.Dtype)
	}
	return p.Acc
}

func roundUp(x, unit int) int {
	if unit <= 1 {
		return x
	}
	return (x + unit - 1) / unit * unit
}

func ceilDiv(x, y int) int { return (x + y - 1) / y }
