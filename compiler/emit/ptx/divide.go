package ptx

import (
	"math/bits"
	"strconv"
)

// Division by a constant. ptxas does not strength-reduce div and rem by
// an immediate: `div.u32 %r, %r, 16` becomes the reciprocal routine
// (I2F, MUFU.RCP, F2I and corrections), as a division by a register
// does. NVVM reduces such divisions before ptxas sees them, so the
// OpenCL C's kernels pay nothing for the lane, subgroup and tile indices
// that the PTX's paid a division each for. These helpers write what NVVM
// writes: a shift or a mask for a power of two, a multiply-high for the
// other 32-bit divisors.

// udivImm is x / d for unsigned w-bit x and immediate d > 0.
func (e *fn) udivImm(w int, x string, d uint64) string {
	c := widthClass(w)
	switch {
	case d == 1:
		return x
	case d&(d-1) == 0:
		return e.pure(c, shrU.of(w), x, itoa(bits.TrailingZeros64(d)))
	case w == 32:
		return e.udivMagic32(x, uint32(d))
	}
	return e.pure(c, "div.u64", x, u64toa(d))
}

// uremImm is x mod d for unsigned w-bit x and immediate d > 0, as
// x − (x/d)·d where d is not a power of two.
func (e *fn) uremImm(w int, x string, d uint64) string {
	c := widthClass(w)
	switch {
	case d == 1:
		return "0"
	case d&(d-1) == 0:
		return e.pure(c, andB.of(w), x, u64toa(d-1))
	}
	q := e.udivImm(w, x, d)
	return e.pure(c, subS.of(w), x, e.pure(c, mulLoS.of(w), q, u64toa(d)))
}

// udivMagic32 is x / d for every unsigned 32-bit x and a d that is not a
// power of two, with the round-up multiplier of Granlund and Montgomery
// ("Division by invariant integers using multiplication", 1994, fig. 4.1):
// with l = ⌈log₂ d⌉ and m = ⌊2³²·(2ˡ − d)/d⌋ + 1, t = mulhi(m, x) and
// x / d = (t + (x − t)/2) / 2ˡ⁻¹. The halving keeps the sum in 32 bits.
func (e *fn) udivMagic32(x string, d uint32) string {
	m, l := magic32(d)
	t := e.pure(b32, "mul.hi.u32", x, u64toa(uint64(m)))
	half := e.pure(b32, "shr.u32", e.pure(b32, "sub.s32", x, t), "1")
	return e.pure(b32, "shr.u32", e.pure(b32, "add.s32", t, half), itoa(l-1))
}

// magic32 is udivMagic32's multiplier m and shift l for divisor d.
func magic32(d uint32) (m uint32, l int) {
	l = bits.Len32(d - 1)
	return uint32((uint64(1)<<32)*((uint64(1)<<l)-uint64(d))/uint64(d) + 1), l
}

func u64toa(n uint64) string { return strconv.FormatUint(n, 10) }
