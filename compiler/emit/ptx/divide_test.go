package ptx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMagic32 checks udivMagic32's arithmetic, done here in Go as the PTX
// does it, against Go's division: every divisor that is not a power of
// two, with the dividends at the edges of 32 bits and of the divisor's
// multiples, and random ones.
func TestMagic32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	divisors := []uint32{3, 5, 6, 7, 9, 10, 12, 24, 48, 96, 100, 641, 1<<31 + 1, 1<<31 + 3, math.MaxUint32 - 1, math.MaxUint32}
	for range 2000 {
		divisors = append(divisors, r.Uint32()>>r.IntN(32))
	}
	for _, d := range divisors {
		if d&(d-1) == 0 {
			continue // a shift, not a multiplier
		}
		m, l := magic32(d)
		xs := []uint32{0, 1, d - 1, d, d + 1, 2*d - 1, math.MaxUint32, math.MaxUint32 - 1, 1 << 31, math.MaxUint32 / d * d, math.MaxUint32/d*d - 1}
		for range 200 {
			xs = append(xs, r.Uint32())
		}
		for _, x := range xs {
			tq := uint32(uint64(m) * uint64(x) >> 32) // mul.hi.u32
			q := (tq + (x-tq)>>1) >> (l - 1)
			if q != x/d {
				t.Fatalf("%d / %d: the multiplier %d, shift %d give %d", x, d, m, l, q)
			}
		}
	}
}
