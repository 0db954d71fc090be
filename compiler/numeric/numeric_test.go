package numeric

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every finite f16 and bf16 encoding must survive decode → encode, and every
// midpoint between neighbours must round to the one with the even fraction.
func TestRoundTripAndTies(t *testing.T) {
	for _, f := range []struct {
		name   string
		bits   func(float64) uint16
		value  func(uint16) float64
		maxPos uint16 // largest finite positive encoding
	}{
		{"f16", F16Bits, F16FromBits, 0x7bff},
		{"bf16", BF16Bits, BF16FromBits, 0x7f7f},
	} {
		for h := uint16(0); h <= f.maxPos; h++ {
			for _, s := range []uint16{0, 0x8000} {
				v := f.value(h | s)
				if got := f.bits(v); got != h|s {
					t.Fatalf("%s: %#04x → %g → %#04x", f.name, h|s, v, got)
				}
			}
			if h == f.maxPos {
				break
			}
			lo, hi := f.value(h), f.value(h+1)
			mid := lo + (hi-lo)/2
			even := h
			if h&1 == 1 {
				even = h + 1
			}
			if got := f.bits(mid); got != even {
				t.Fatalf("%s: midpoint %g of %#04x,%#04x → %#04x, want %#04x", f.name, mid, h, h+1, got, even)
			}
			if got := f.bits(math.Nextafter(mid, math.Inf(1))); got != h+1 {
				t.Fatalf("%s: just above midpoint %g → %#04x, want %#04x", f.name, mid, got, h+1)
			}
			if got := f.bits(math.Nextafter(mid, 0)); got != h && mid != 0 {
				t.Fatalf("%s: just below midpoint %g → %#04x, want %#04x", f.name, mid, got, h)
			}
		}
	}
}

func TestSpecialValues(t *testing.T) {
	for _, c := range []struct {
		name string
		got  uint16
		want uint16
	}{
		{"f16 max", F16Bits(65504), 0x7bff},
		{"f16 below overflow midpoint", F16Bits(65519.99), 0x7bff},
		{"f16 overflow midpoint ties to inf", F16Bits(65520), 0x7c00},
		{"f16 -inf", F16Bits(math.Inf(-1)), 0xfc00},
		{"f16 min subnormal", F16Bits(math.Ldexp(1, -24)), 0x0001},
		{"f16 half min subnormal ties to zero", F16Bits(math.Ldexp(1, -25)), 0x0000},
		{"f16 above half min subnormal", F16Bits(math.Ldexp(1.0001, -25)), 0x0001},
		{"f16 -0", F16Bits(math.Copysign(0, -1)), 0x8000},
		{"f16 subnormal carries into normal", F16Bits(math.Ldexp(1023.5, -24)), 0x0400},
		{"f16 one", F16Bits(1), 0x3c00},
		{"bf16 one", BF16Bits(1), 0x3f80},
		{"bf16 max", BF16Bits(math.Ldexp(255, 120)), 0x7f7f},
		{"bf16 min subnormal", BF16Bits(math.Ldexp(1, -133)), 0x0001},
		{"bf16 -inf", BF16Bits(math.Inf(-1)), 0xff80},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %#04x, want %#04x", c.name, c.got, c.want)
		}
	}
	if !math.IsNaN(F16FromBits(F16Bits(math.NaN()))) || !math.IsNaN(BF16FromBits(BF16Bits(math.NaN()))) {
		t.Error("NaN does not survive a round trip")
	}
}

// bf16 is the upper half of f32, so for an f32 value the classic bit trick
// (add 0x7fff plus the lowest kept bit, truncate) is an independent reference.
func TestBF16MatchesF32BitTrick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		u := r.Uint32()
		v := math.Float32frombits(u)
		if v != v {
			continue
		}
		want := uint16((u + 0x7fff + (u>>16)&1) >> 16)
		if got := BF16Bits(float64(v)); got != want {
			t.Fatalf("bf16(%g = %#08x) = %#04x, want %#04x", v, u, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		x    int64
		bits int
		want int64
	}{
		{127 + 1, 8, -128}, {-129, 8, 127}, {255, 8, -1}, {1 << 15, 16, -1 << 15},
		{1<<31 + 5, 32, -1<<31 + 5}, {math.MaxInt64, 64, math.MaxInt64}, {-7, 32, -7},
	} {
		if got := Wrap(c.x, c.bits); got != c.want {
			t.Errorf("Wrap(%d, %d) = %d, want %d", c.x, c.bits, got, c.want)
		}
	}
	if MinInt(8) != -128 || MaxInt(8) != 127 || MinInt(64) != math.MinInt64 || MaxInt(64) != math.MaxInt64 {
		t.Error("MinInt/MaxInt wrong")
	}
}

func TestRoundC32(t *testing.T) {
	z := complex(1+math.Ldexp(1, -30), -1-math.Ldexp(1, -30))
	if got := RoundC32(z); got != complex(1, -1) {
		t.Errorf("RoundC32(%v) = %v", z, got)
	}
}
