package interp

import (
	"math"
	"testing"

	"tltune/compiler/ir"
)

// Each case computes %r0, %r1, ... with mixed instructions in the
// collective region; the expected values are worked out by hand (the
// comments say how).
var scalarCases = []struct {
	name string
	elem string
	body string
	want []any
}{
	{"i8 wraps", "i8", `
  %a = constant 127 : i8
  %one = constant 1 : i8
  %r0 = arith.add %a, %one : i8   ; 128 wraps to -128
  %r1 = arith.mul %a, %a : i8     ; 16129 = 63·256 + 1
  %r2 = arith.sub %r0, %one : i8  ; -129 wraps to 127
  %r3 = arith.neg %r0 : i8        ; -(-128) wraps to -128
  %r4 = arith.abs %r0 : i8`, []any{-128, 1, 127, -128, -128}},
	{"i32 division, shifts, bits", "i32", `
  %m7 = constant -7 : i32
  %two = constant 2 : i32
  %m2 = constant -2 : i32
  %seven = constant 7 : i32
  %r0 = arith.div %m7, %two : i32   ; truncates toward zero
  %r1 = arith.rem %m7, %two : i32   ; sign of the dividend
  %r2 = arith.rem %seven, %m2 : i32
  %one = constant 1 : i32
  %s33 = constant 33 : i32
  %r3 = arith.shl %one, %s33 : i32  ; count taken mod 32
  %m16 = constant -16 : i32
  %r4 = arith.shr %m16, %two : i32  ; arithmetic shift
  %twelve = constant 12 : i32
  %ten = constant 10 : i32
  %r5 = arith.and %twelve, %ten : i32
  %r6 = arith.or %twelve, %ten : i32
  %r7 = arith.xor %twelve, %ten : i32
  %r8 = arith.min %m7, %two : i32
  %r9 = arith.max %m7, %two : i32
  %zero = constant 0 : i32
  %r10 = arith.not %zero : i32`, []any{-3, -1, 1, 2, -4, 8, 14, 6, -7, 2, -1}},
	{"f16 rounds every operation", "f16", `
  %one = constant 1.0 : f16
  %tiny = constant 0.0004 : f16
  %r0 = arith.add %one, %tiny : f16    ; below half an ulp (2^-11) of 1
  %big = constant 2048.0 : f16
  %r1 = arith.add %big, %one : f16     ; 2049 is a tie: even 2048
  %three = constant 3.0 : f16
  %r2 = arith.add %big, %three : f16   ; 2051 is a tie: even 2052
  %huge = constant 60000.0 : f16
  %r3 = arith.add %huge, %huge : f16   ; overflows to +inf
  %r4 = arith.sub %tiny, %tiny : f16`, []any{1.0, 2048.0, 2052.0, math.Inf(1), 0.0}},
	{"bf16 rounds every operation", "bf16", `
  %one = constant 1.0 : bf16
  %h = constant 0.00390625 : bf16       ; 2^-8, half an ulp of 1
  %r0 = arith.add %one, %h : bf16       ; tie: even 1
  %h3 = constant 0.01171875 : bf16      ; 3·2^-8
  %r1 = arith.add %one, %h3 : bf16      ; tie between 1+2^-7 and 1+2^-6: even 1+2^-6
  %r2 = arith.mul %h3, %h3 : bf16       ; 9·2^-16 exactly (9 needs 4 bits)`,
		[]any{1.0, 1.015625, 9.0 / 65536}},
	{"f32 and f64", "f64", `
  %a = constant 16777216.0 : f32
  %one = constant 1.0 : f32
  %s = arith.add %a, %one : f32   ; 2^24+1 is a tie: even 2^24
  %r0 = cast %s : f64
  %three = constant 3.0 : f32
  %q = arith.div %one, %three : f32
  %r1 = cast %q : f64
  %x = constant 0.1 : f64
  %y = constant 0.2 : f64
  %r2 = arith.add %x, %y : f64
  %m = constant -7.5 : f64
  %d = constant 2.0 : f64
  %r3 = arith.rem %m, %d : f64     ; fmod keeps the dividend's sign
  %z = constant 0.0 : f64
  %nan = arith.div %z, %z : f64
  %r4 = arith.min %nan, %d : f64   ; NaN operands are ignored
  %r5 = arith.max %d, %nan : f64
  %r6 = arith.neg %z : f64
  %r7 = arith.abs %m : f64`,
		[]any{16777216.0, float64(float32(1.0 / 3)), 0.30000000000000004, -1.5, 2.0, 2.0, math.Copysign(0, -1), 7.5}},
	{"complex", "c32", `
  %a = constant [1.0, 2.0] : c32
  %b = constant [3.0, 4.0] : c32
  %r0 = arith.mul %a, %b : c32      ; (3-8) + (4+6)i
  %one = constant [1.0, 0.0] : c32
  %i = constant [0.0, 1.0] : c32
  %r1 = arith.div %one, %i : c32    ; 1/i = -i
  %r2 = arith.conj %a : c32
  %r3 = arith.sub %a, %b : c32
  %r4 = arith.neg %a : c32`,
		[]any{complex(-5, 10), complex(0, -1), complex(1, -2), complex(-2, -2), complex(-1, -2)}},
	{"complex parts", "f64", `
  %a = constant [3.0, 4.0] : c64
  %r0 = arith.abs %a : f64
  %r1 = arith.re %a : f64
  %r2 = arith.im %a : f64
  %z = constant [0.0, 0.0] : c64
  %e = math.exp %z : c64
  %r3 = arith.re %e : f64`, []any{5.0, 3.0, 4.0, 1.0}},
	{"casts", "f32", `
  %a = constant 2.7 : f32
  %i = cast %a : i32
  %r0 = cast %i : f32                   ; truncation toward zero
  %m = constant -2.7 : f32
  %mi = cast %m : i32
  %r1 = cast %mi : f32
  %n = constant 2049 : i32
  %h = cast %n : f16                    ; 2049 ties to even 2048
  %r2 = cast %h : f32
  %big = constant 1157425104234217473 : i64  ; 2^60 + 2^52 + 1
  %bb = cast %big : bf16                ; just above the tie: 2^60 + 2^53, not 2^60
  %r3 = cast %bb : f32
  %w = constant 300 : i32
  %w8 = cast %w : i8                    ; 300 wraps to 44
  %r4 = cast %w8 : f32
  %p = constant 1.0e10 : f32
  %sat = cast %p : i32                  ; out of range saturates
  %sat8 = arith.shr %sat, %n : i32      ; 2^31-1 >> (2049 mod 32 = 1)
  %r5 = cast %sat8 : f32`,
		[]any{2.0, -2.0, 2048.0, 1161928703861587968.0, 44.0, float64(float32(1<<30 - 1))}},
	{"exp", "f64", `
  %one = constant 1.0 : f32
  %e = math.exp %one : f32
  %r0 = cast %e : f64
  %one16 = constant 1.0 : f16
  %e16 = math.native_exp %one16 : f16
  %r1 = cast %e16 : f64
  %one64 = constant 1.0 : f64
  %r2 = math.exp %one64 : f64`, []any{float64(float32(math.E)), 2.71875, math.E}},
	{"comparisons and if", "i32", `
  %a = constant -1 : i32
  %b = constant 0 : i32
  %one = constant 1 : i32
  %lt = cmp.lt %a, %b : bool
  %r0 = if %lt -> (i32) { yield (%one) } else { yield (%b) }
  %ge = cmp.ge %a, %b : bool
  %r1 = if %ge -> (i32) { yield (%one) } else { yield (%b) }
  %x = constant 0.0 : f32
  %nan = arith.div %x, %x : f32
  %ne = cmp.ne %nan, %nan : bool
  %r2 = if %ne -> (i32) { yield (%one) } else { yield (%b) }
  %eq = cmp.eq %nan, %nan : bool
  %r3 = if %eq -> (i32) { yield (%one) } else { yield (%b) }
  %both = arith.and %lt, %ne : bool
  %r4 = if %both -> (i32) { yield (%one) } else { yield (%b) }
  %nt = arith.not %lt : bool
  %r5 = if %nt -> (i32) { yield (%one) } else { yield (%b) }`, []any{1, 0, 1, 0, 1, 0}},
	{"fibonacci with loop-carried values", "i64", `
  %from = constant 0 : i32
  %to = constant 90 : i32
  %f0 = constant 0 : i64
  %f1 = constant 1 : i64
  %r0, %r1 = for %n : i32 = %from, %to init(%a = %f0, %b = %f1) -> (i64, i64) {
    %c = arith.add %a, %b : i64
    yield (%b, %c)
  }
  %step = constant 7 : i32
  %r2 = for %n : i32 = %from, %to, %step init(%s = %f0) -> (i64) {
    %n64 = cast %n : i64
    %t = arith.add %s, %n64 : i64
    yield (%t)
  }                                       ; 0+7+...+84 = 7·(0+...+12)
  %lo = constant 1 : index
  %hi = constant 0 : index
  %r3 = for %n = %lo, %hi init(%s = %f1) -> (i64) {
    yield (%f0)
  }                                       ; empty range keeps the initial value`,
		[]any{int64(2880067194370816120), int64(4660046610375530309), 7 * 78, 1}},
}

func TestScalarInstructions(t *testing.T) {
	for _, c := range scalarCases {
		t.Run(c.name, func(t *testing.T) {
			fn := parseFunc(t, resultKernel(c.elem, len(c.want), c.body))
			out := NewMemref(fn.Params[0].Type.Elem(), int64(len(c.want)))
			if err := Run(fn, []Arg{{Memref: out}}, Options{}); err != nil {
				t.Fatal(err)
			}
			checkBuffer(t, "out", out.Buf, c.want...)
		})
	}
}

// Scalar parameters are rounded to their declared type on entry.
func TestScalarParameters(t *testing.T) {
	fn := parseFunc(t, `func @t(%a: f16, %b: i8, %c: c32, %out: memref<f64x4>) {
  %i0 = constant 0 : index
  %i1 = constant 1 : index
  %i2 = constant 2 : index
  %i3 = constant 3 : index
  %x = cast %a : f64
  store %x, %out[%i0]
  %y = cast %b : f64
  store %y, %out[%i1]
  %re = arith.re %c : f32
  %im = arith.im %c : f32
  %r = cast %re : f64
  %i = cast %im : f64
  store %r, %out[%i2]
  store %i, %out[%i3]
}`)
	out := NewMemref(ir.F64, 4)
	args := []Arg{{Float: 2049}, {Int: 200}, {Complex: complex(0.1, -0.1)}, {Memref: out}}
	if err := Run(fn, args, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf, 2048.0, -56.0, float64(float32(0.1)), float64(float32(-0.1)))
}
