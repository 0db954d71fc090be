package interp

import (
	"fmt"
	"math"
	"math/cmplx"

	"tltune/compiler/ir"
	"tltune/compiler/numeric"
)

// value is one run-time value. Which field is meaningful follows from the
// IR type of the value it belongs to, which the interpreter always has at
// hand: i for bool (0 or 1) and integers (kept sign-extended to 64 bits), f
// for floating types (always exactly representable in the type), c for
// complex types, ref for memrefs (*Memref), groups (*Group) and cooperative
// matrices (*coopMatrix).
type value struct {
	i   int64
	f   float64
	c   complex128
	ref any
}

func intVal(i int64) value          { return value{i: i} }
func floatVal(f float64) value      { return value{f: f} }
func complexVal(c complex128) value { return value{c: c} }

func boolVal(b bool) value {
	if b {
		return value{i: 1}
	}
	return value{}
}

// roundFloat rounds x to the floating type t.
func roundFloat(t *ir.Type, x float64) float64 {
	switch t.Kind() {
	case ir.KindF16:
		return numeric.RoundF16(x)
	case ir.KindBF16:
		return numeric.RoundBF16(x)
	case ir.KindF32:
		return numeric.RoundF32(x)
	}
	return x
}

// roundComplex rounds both parts of z to the component type of t.
func roundComplex(t *ir.Type, z complex128) complex128 {
	if t.Kind() == ir.KindC32 {
		return numeric.RoundC32(z)
	}
	return z
}

// wrap truncates x to the integer type t.
func wrap(t *ir.Type, x int64) int64 { return numeric.Wrap(x, t.Bits()) }

// normalize makes a freshly computed value exact in type t: integers wrap,
// floating point rounds. Computing +, -, ·, / in float64 and rounding once is
// exact for f32, f16 and bf16: float64 has more than twice their precision
// plus two bits, so the double rounding cannot differ from a direct one.
func normalize(t *ir.Type, v value) value {
	switch {
	case t.IsInteger():
		v.i = wrap(t, v.i)
	case t.IsFloat():
		v.f = roundFloat(t, v.f)
	case t.IsComplex():
		v.c = roundComplex(t, v.c)
	}
	return v
}

// arith evaluates a binary arithmetic operation on scalars (or bools) of type t.
func arith(op ir.ArithOp, t *ir.Type, a, b value) (value, error) {
	switch {
	case t.Kind() == ir.KindBool:
		return arithBool(op, a, b), nil
	case t.IsInteger():
		return arithInt(op, t, a.i, b.i)
	case t.IsFloat():
		return floatVal(roundFloat(t, arithFloat(op, a.f, b.f))), nil
	}
	return complexVal(roundComplex(t, arithComplex(op, a.c, b.c))), nil
}

func arithBool(op ir.ArithOp, a, b value) value {
	switch op {
	case ir.And:
		return intVal(a.i & b.i)
	case ir.Or:
		return intVal(a.i | b.i)
	}
	return intVal(a.i ^ b.i)
}

func arithInt(op ir.ArithOp, t *ir.Type, a, b int64) (value, error) {
	r, err := ArithInt(op, t, a, b)
	return intVal(r), err
}

// ArithInt is the language's integer arithmetic in type t: two's-complement
// wrap-around, shift counts modulo the width (as OpenCL C takes them),
// division and remainder truncating, and an error for a division by zero.
// Constant folding uses it so that folded code computes what the reference
// computes.
func ArithInt(op ir.ArithOp, t *ir.Type, a, b int64) (int64, error) {
	var r int64
	bits := int64(t.Bits())
	switch op {
	case ir.Add:
		r = a + b
	case ir.Sub:
		r = a - b
	case ir.Mul:
		r = a * b
	case ir.Div, ir.Rem:
		if b == 0 {
			return 0, fmt.Errorf("integer %s by zero", op)
		}
		// Go defines MinInt64 / -1 = MinInt64 (wrap-around) without a panic.
		if op == ir.Div {
			r = a / b
		} else {
			r = a % b
		}
	case ir.Min:
		r = min(a, b)
	case ir.Max:
		r = max(a, b)
	case ir.Shl:
		// The shift count is taken modulo the width, as OpenCL C does.
		r = a << uint64(b&(bits-1))
	case ir.Shr:
		r = a >> uint64(b&(bits-1))
	case ir.And:
		r = a & b
	case ir.Or:
		r = a | b
	case ir.Xor:
		r = a ^ b
	}
	return wrap(t, r), nil
}

func arithFloat(op ir.ArithOp, a, b float64) float64 {
	switch op {
	case ir.Add:
		return a + b
	case ir.Sub:
		return a - b
	case ir.Mul:
		return a * b
	case ir.Div:
		return a / b
	case ir.Rem:
		return math.Mod(a, b) // C fmod: the sign of the dividend
	case ir.Min:
		return fmin(a, b)
	}
	return fmax(a, b)
}

// fmin and fmax follow C and OpenCL: a NaN operand is ignored.
func fmin(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	if math.IsNaN(b) {
		return a
	}
	return math.Min(a, b)
}

func fmax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	if math.IsNaN(b) {
		return a
	}
	return math.Max(a, b)
}

func arithComplex(op ir.ArithOp, a, b complex128) complex128 {
	switch op {
	case ir.Add:
		return a + b
	case ir.Sub:
		return a - b
	case ir.Mul:
		return a * b
	}
	return a / b
}

// unary evaluates a unary arithmetic operation on an operand of type t.
func unary(op ir.UnaryOp, t *ir.Type, a value) value {
	switch {
	case t.Kind() == ir.KindBool: // only not
		return intVal(a.i ^ 1)
	case t.IsInteger():
		switch op {
		case ir.Abs:
			if a.i < 0 {
				return intVal(wrap(t, -a.i))
			}
			return a
		case ir.Neg:
			return intVal(wrap(t, -a.i))
		}
		return intVal(^a.i)
	case t.IsFloat():
		if op == ir.Abs {
			return floatVal(math.Abs(a.f))
		}
		return floatVal(-a.f)
	}
	comp := t.ComponentType()
	switch op {
	case ir.Abs:
		return floatVal(roundFloat(comp, cmplx.Abs(a.c)))
	case ir.Neg:
		return complexVal(-a.c)
	case ir.Conj:
		return complexVal(cmplx.Conj(a.c))
	case ir.Im:
		return floatVal(imag(a.c))
	}
	return floatVal(real(a.c))
}

// compare evaluates a comparison of two operands of type t.
func compare(op ir.CmpOp, t *ir.Type, a, b value) bool {
	if t.IsComplex() {
		if op == ir.Eq {
			return a.c == b.c
		}
		return a.c != b.c
	}
	if t.IsFloat() {
		return cmpOrdered(op, a.f, b.f)
	}
	return cmpOrdered(op, a.i, b.i)
}

func cmpOrdered[T int64 | float64](op ir.CmpOp, a, b T) bool {
	switch op {
	case ir.Eq:
		return a == b
	case ir.Ne:
		return a != b
	case ir.Gt:
		return a > b
	case ir.Ge:
		return a >= b
	case ir.Lt:
		return a < b
	}
	return a <= b
}

// exp evaluates math.exp and math.native_exp: both are the correctly
// computed exponential rounded to t (native_exp may be less accurate on a
// device, never here).
// mathFunc computes a math instruction in float64 (complex128) and rounds
// to t; a native_ function is computed as its accurate one (the reference
// only allows native ones to be less accurate).
func mathFunc(op ir.MathOp, t *ir.Type, a value) value {
	op, _ = op.Native()
	if t.IsComplex() {
		z := a.c
		if op == ir.Exp2 {
			z *= math.Ln2
		}
		return complexVal(roundComplex(t, cmplx.Exp(z)))
	}
	f := math.Exp
	switch op {
	case ir.Exp2:
		f = math.Exp2
	case ir.Cos:
		f = math.Cos
	case ir.Sin:
		f = math.Sin
	case ir.Log:
		f = math.Log
	case ir.Log2:
		f = math.Log2
	}
	return floatVal(roundFloat(t, f(a.f)))
}

// convert casts a of type from to type to (the cast instruction; bool is
// treated as the integer 0 or 1).
func convert(a value, from, to *ir.Type) value {
	switch {
	case from == to:
		return a
	case to.IsInteger():
		if from.IsFloat() {
			return intVal(floatToInt(to, a.f))
		}
		return intVal(wrap(to, a.i))
	case to.IsFloat():
		if from.IsFloat() {
			return floatVal(roundFloat(to, a.f))
		}
		return floatVal(intToFloat(to, a.i))
	}
	// to is complex
	switch {
	case from.IsComplex():
		return complexVal(roundComplex(to, a.c))
	case from.IsFloat():
		return complexVal(complex(roundFloat(to.ComponentType(), a.f), 0))
	}
	return complexVal(complex(intToFloat(to.ComponentType(), a.i), 0))
}

// intToFloat converts x to the floating type t with a single rounding.
// Integers beyond 2^53 are first reduced to 53 bits with a sticky last bit
// (round to odd), which makes the second rounding to t exact.
func intToFloat(t *ir.Type, x int64) float64 {
	if t.Kind() == ir.KindF32 {
		return float64(float32(x))
	}
	ax := x
	if ax < 0 {
		ax = -ax
	}
	if t.Kind() == ir.KindF64 || (ax >= 0 && ax < 1<<53) {
		return roundFloat(t, float64(x))
	}
	u := uint64(x)
	if x < 0 {
		u = -u
	}
	shift := 0
	for u>>shift >= 1<<53 {
		shift++
	}
	kept := u >> shift
	if u&(1<<shift-1) != 0 {
		kept |= 1
	}
	f := math.Ldexp(float64(kept), shift)
	if x < 0 {
		f = -f
	}
	return roundFloat(t, f)
}

// floatToInt truncates f toward zero. Out-of-range values (undefined in the
// language) saturate and NaN becomes 0, so the result is at least
// deterministic.
func floatToInt(t *ir.Type, f float64) int64 {
	bits := t.Bits()
	lo, hi := numeric.MinInt(bits), numeric.MaxInt(bits)
	switch {
	case math.IsNaN(f):
		return 0
	case f <= float64(lo):
		return lo
	case f >= float64(hi):
		return hi
	}
	return int64(f)
}

// constant returns the value of a constant literal of scalar or bool type t.
func constant(c ir.Constant, t *ir.Type) value {
	switch c.Kind {
	case ir.ConstBool:
		return boolVal(c.Bool)
	case ir.ConstInt:
		return convert(intVal(c.Int), ir.I64, t)
	case ir.ConstFloat:
		return convert(floatVal(c.Float), ir.F64, t)
	}
	return complexVal(roundComplex(t, complex(c.Float, c.Imag)))
}
