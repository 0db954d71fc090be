// Package numeric owns the exact scalar arithmetic of the tensor language's
// types that Go does not provide natively: the 16-bit floating formats f16
// (IEEE binary16) and bf16 (bfloat16) with round-to-nearest-even conversion,
// two's-complement wrap-around for the narrow integer types, and rounding of
// complex values to c32.
//
// The interpreter (compiler/interp) and the host references of kernels/ both
// use it, so a value computed on the host and one computed by the reference
// interpreter round identically.
package numeric

import "math"

// Binary formats as (exponent bits, fraction bits).
const (
	f16ExpBits, f16FracBits   = 5, 10
	bf16ExpBits, bf16FracBits = 8, 7
)

// F16Bits returns the binary16 encoding of x rounded to nearest, ties to even.
// Values beyond the largest finite f16 become ±Inf, values below half the
// smallest subnormal become ±0, and NaN stays a (quiet) NaN.
func F16Bits(x float64) uint16 { return uint16(encode(x, f16ExpBits, f16FracBits)) }

// F16FromBits returns the value of the binary16 encoding h.
func F16FromBits(h uint16) float64 { return decode(uint64(h), f16ExpBits, f16FracBits) }

// BF16Bits returns the bfloat16 encoding of x rounded to nearest, ties to even.
// It rounds from float64 directly, never through float32, so there is no
// double rounding.
func BF16Bits(x float64) uint16 { return uint16(encode(x, bf16ExpBits, bf16FracBits)) }

// BF16FromBits returns the value of the bfloat16 encoding h.
func BF16FromBits(h uint16) float64 { return decode(uint64(h), bf16ExpBits, bf16FracBits) }

// RoundF16 rounds x to the nearest f16 value (ties to even).
func RoundF16(x float64) float64 { return F16FromBits(F16Bits(x)) }

// RoundBF16 rounds x to the nearest bf16 value (ties to even).
func RoundBF16(x float64) float64 { return BF16FromBits(BF16Bits(x)) }

// RoundF32 rounds x to the nearest f32 value (ties to even).
func RoundF32(x float64) float64 { return float64(float32(x)) }

// RoundC32 rounds both parts of z to f32, the component type of c32.
func RoundC32(z complex128) complex128 {
	return complex(RoundF32(real(z)), RoundF32(imag(z)))
}

// encode rounds x to the binary format with eb exponent bits and fb fraction
// bits (implicit leading one, IEEE layout) and returns its bits.
func encode(x float64, eb, fb uint) uint64 {
	b := math.Float64bits(x)
	sign := (b >> 63) << (eb + fb)
	exp := int((b >> 52) & 0x7ff)
	frac := b & (1<<52 - 1)
	expAllOnes := uint64(1)<<eb - 1
	switch {
	case exp == 0x7ff && frac != 0: // NaN: keep it quiet
		return sign | expAllOnes<<fb | 1<<(fb-1)
	case exp == 0x7ff:
		return sign | expAllOnes<<fb
	case exp == 0: // ±0 and f64 subnormals, far below every target's range
		return sign
	}
	bias := 1<<(eb-1) - 1
	emin := 1 - bias
	e := exp - 1023
	mant := frac | 1<<52 // value = mant · 2^(e-52)
	shift := 52 - int(fb)
	if e < emin { // subnormal in the target: drop the extra exponent distance too
		shift += emin - e
	}
	if shift >= 64 {
		return sign
	}
	q := mant >> shift
	rem := mant & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	if e < emin {
		// q ≤ 2^fb; q = 2^fb is the smallest normal, whose encoding is q itself.
		return sign | q
	}
	if q == 1<<(fb+1) { // rounding carried into the next binade
		q >>= 1
		e++
	}
	if e > bias {
		return sign | expAllOnes<<fb
	}
	return sign | uint64(e+bias)<<fb | q&(1<<fb-1)
}

// decode returns the value of the bits h of the binary format (eb, fb).
func decode(h uint64, eb, fb uint) float64 {
	sign := 1.0
	if h>>(eb+fb)&1 == 1 {
		sign = -1
	}
	exp := int(h >> fb & (1<<eb - 1))
	frac := float64(h & (1<<fb - 1))
	bias := 1<<(eb-1) - 1
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, 1-bias-int(fb))
	case 1<<eb - 1:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(frac+float64(uint64(1)<<fb), exp-bias-int(fb))
}
