package kernels

// Flop weights: a multiply-add and a multiply in real or complex arithmetic
// (a complex multiply is 4 multiplies and 2 adds, a complex add 2 adds).
func mulAddFlops(d DType) int64 {
	if d.IsComplex() {
		return 8
	}
	return 2
}

func mulFlops(d DType) int64 {
	if d.IsComplex() {
		return 6
	}
	return 1
}

// flops counts the floating-point operations of batch entries, by the
// contraction form C(M×N) := α·Σ_K opA·opB + β·C (gemv: N=1, K=n; ger: K=1):
//
//	M·N·K multiply-adds in the input type (2 real, 8 complex flops each; the
//	      first one adds onto β·C, or onto zero when β = 0)
//	+ M·N multiplies in the input type when α ≠ 1 (1 real, 6 complex)
//	+ M·N multiplies in the accumulation type when β ∉ {0, 1}
//
// α and β are compared after rounding to their types. This gives the usual
// 2mnk (gemm), 2mn (gemv, and ger with β = 1) for α = 1 and β ∈ {0, 1}; α = 0
// is not special-cased.
func (s Spec) flops(batch int) int64 {
	m, n, k := s.contraction()
	elems := int64(m) * int64(n)
	per := mulAddFlops(s.DType) * elems * int64(k)
	if s.DType.Round(s.Alpha) != 1 {
		per += mulFlops(s.DType) * elems
	}
	if b := s.Acc.Round(s.Beta); b != 0 && b != 1 {
		per += mulFlops(s.Acc) * elems
	}
	return per * int64(batch)
}

// bytes counts the global-memory traffic of batch entries: every input
// element read once, every output element written once and also read when
// β ≠ 0 (an atomic update with β = 1 reads it too), and for the group
// layout one 8-byte pointer (or offset) per argument per entry.
func (s Spec) bytes(batch int) int64 {
	var per int64
	ops := s.operands()
	for _, o := range ops {
		per += int64(o.elements() * o.dtype.Size())
	}
	if s.readsC() {
		out := ops[len(ops)-1]
		per += int64(out.elements() * out.dtype.Size())
	}
	if s.Layout == Group {
		per += 8 * int64(len(ops))
	}
	return per * int64(batch)
}
