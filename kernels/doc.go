// Package kernels owns the recipes: generators that turn a GEMM, GEMV or GER
// description (Spec: shape, element and accumulation types, transposes, α,
// β, atomic update, batch layout) and a configuration (tuning.Params) into
// tensor-language source, together with everything needed to judge the
// compiled kernel: seeded inputs, a float64/complex128 host reference,
// verification, and exact FLOP and byte counts.
//
// # Kernels
//
// Every recipe is one function whose arguments are the batched operands
// (A, B, C for gemm; A, b, c for gemv; a, b, C for ger). With the strided
// layout each is a memref whose last mode is the dynamic batch,
// memref<f16x64x32x?>; with the group layout it is a pointer array,
// group<memref<f16x64x32>x?>. The body reads builtin.group_id, selects the
// batch entry of every operand (subview of the last mode, or load from the
// group), defines α (type dtype) and β (type acc) as constants, and applies
// the collective instruction (gemm.n.t, gemv.t, ger, with .atomic when
// asked) to the entries. α and β are constants rather than arguments so
// that the compiler can specialise β = 0 (C is not read) and so that
// .atomic, which needs a constant β ∈ {0, 1}, is expressible.
//
// # How the configuration reaches the compiler
//
// The language has function attributes for two parameters, and the recipe
// uses them: subgroup_size=S and work_group_size=[wx, wy]. Every other
// chosen parameter travels in one more entry of the same function
// attribute dictionary, named "tltune.params" (ParamsAttr), whose value is a
// dictionary with the JSON names of tuning.Params:
//
//	func @gemm(...) attributes {subgroup_size=32, work_group_size=[64, 2],
//	    "tltune.params"={"tile"=[32, 32], "coopmatrix"=[16, 8, 16], unroll=2,
//	                     "batch_per_group"=4, "stage_local"=true}} { ... }
//
// The grammar allows this: attribute-name is one of the keywords or any
// string-attribute, and a named attribute's value may itself be a
// dictionary-attribute. Keys are quoted except "unroll", which is a keyword
// name and is spelled bare, as the canonical printer writes it. A parameter
// that is zero in tuning.Params ("not chosen") is left out, so the compiler
// falls back to the tuning table, then its heuristic, for that parameter
// alone. compiler/lower reads the attribute (lower.ParamsAttr, Choose) when
// it picks a function's configuration; TestEveryVariantCompiles checks that
// the configuration it chooses is exactly the one written here.
//
// Every argument carries an alignment attribute: the bytes the kernel may
// assume every batch entry's first element to be aligned to (the largest
// power of two up to 16 dividing an entry's bytes, since entries lie whole
// entries apart from a device allocation in both layouts). The gemv and ger
// lowering proves 128-bit vector accesses from it.
//
// batch_per_group b is realised by the compiler, not written into the body:
// the body always treats group_id as the batch entry, and the compiler runs
// logical groups g·b … g·b+b−1 in one physical work-group and skips those
// beyond the batch (docs/abi.md, "Hidden trailing argument"). So the host
// launches as many logical groups as there are batch entries, whatever b.
//
// # FLOPs
//
// Counts use the contraction form C(M×N) := α·Σ_K opA·opB + β·C, where gemv
// is N = 1, K = n and ger is K = 1. Per batch entry:
//
//	M·N·K multiply-adds in the input type: 2 flops real, 8 complex
//	+ M·N multiplies in the input type when α ≠ 1: 1 flop real, 6 complex
//	+ M·N multiplies in the accumulation type when β ∉ {0, 1}
//
// so gemm is 2mnk (8mnk complex), gemv 2mn and ger with β = 1 2mn, the usual
// BLAS counts, plus the scalings. α and β are compared after rounding to
// their types; α = 0 is not special-cased.
//
// # Bytes
//
// Each input element is read once and each output element written once;
// the output is also read when β ≠ 0 (including an atomic update with
// β = 1); the group layout adds one 8-byte pointer (or offset) per argument
// per entry.
//
// # Inputs and verification
//
// Inputs draws every element uniformly from [-1, 1) from a PCG stream keyed
// by the recorded seed, rounded to the argument's type (f16 and bf16 with
// compiler/numeric, round to nearest even), so host and device hold the
// same values. When β = 0 the output starts as NaN: the kernel must not
// read it. References compute in float64 (complex128 when the accumulation
// type is complex) from exactly those values, with α rounded to dtype and β
// to acc as in the kernel.
//
// Expected.Check computes, per batch entry, ‖out−ref‖₂/‖ref‖₂ (‖out−ref‖₂
// when ‖ref‖₂ = 0) and keeps the worst entry. It passes when that error is
// at most
//
//	tol = 4·u(dtype) + 4·u(acc)·√K
//
// with u the unit roundoff (2⁻¹¹ f16, 2⁻⁸ bf16, 2⁻²⁴ f32/c32, 2⁻⁵³ f64/c64)
// and K the reduction length (k, n for gemv, 1 for ger): products and the α
// scaling may round in the input type, the sum and the store round in the
// accumulation type with an error growing like √K. Any NaN or infinity in
// the output fails.
//
// A gemm of f32 with precision tf32 (Spec.Precision, `tltune gemm
// --precision tf32`) may round its inputs to tf32 (10-bit mantissas) on the
// matrix engine, so each of its batch entries gets a bound of its own on
// top: θ_K·‖|α|·|opA||opB|‖₂/‖ref‖₂ with θ_K = 2u + u² + γ_K(1+u)², u = 2⁻¹¹
// and γ_K = K·2⁻²³/(1 − K·2⁻²³), the worst case of rounding every input and
// summing in f32 (TF32ErrorFactor derives it). An exact problem never gets
// it.
package kernels
