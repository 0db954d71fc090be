package ir

import "math"

// Range is an interval [Lo, Hi] that an integer value is known to lie in.
// The zero Range is empty; Unknown is every int64.
type Range struct{ Lo, Hi int64 }

// Unknown is the range of a value nothing is known about.
var Unknown = Range{math.MinInt64, math.MaxInt64}

// Fits32 reports whether every value of r is an int32.
func (r Range) Fits32() bool { return r.Lo >= math.MinInt32 && r.Hi <= math.MaxInt32 }

// IndexRanges computes into known, which it resets first, a Range for
// every integer value of f it can bound: constants, static sizes, the
// builtins bounds knows (the work-group's shape), arithmetic on bounded
// operands (exact when no bound overflows), and for loops' variables
// between their bounds. A value absent from known is Unknown. Back ends use
// it to do index arithmetic in 32 bits where every value involved provably
// fits, and recycle known from kernel to kernel.
func IndexRanges(known *ValueMap[Range], f *Func, bounds func(BuiltinKind) (Range, bool)) {
	known.Reset(f.NumValues)
	r := ranges{known: known, bounds: bounds}
	r.region(f.Body)
}

type ranges struct {
	known  *ValueMap[Range]
	bounds func(BuiltinKind) (Range, bool)
}

// region bounds the values of reg's instructions and of their regions, in
// program order. It loops itself rather than through Region.Walk, whose
// call per instruction cost as much as bounding most of them.
func (r *ranges) region(reg *Region) {
	for _, in := range reg.Insts {
		r.inst(in)
		for _, sub := range in.Regions {
			r.region(sub)
		}
	}
}

func (r *ranges) of(v *Value) Range {
	if x, ok := r.known.Get(v); ok {
		return x
	}
	return Unknown
}

func (r *ranges) set(v *Value, x Range) {
	if x != Unknown && v.Type.IsInteger() {
		r.known.Set(v, clampTo(x, v.Type))
	}
}

// clampTo widens x to the whole range of t when x reaches beyond t (the
// value wrapped, so nothing is known).
func clampTo(x Range, t *Type) Range {
	if t == Index || t.Bits() >= 64 {
		return x
	}
	lo, hi := -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1
	if x.Lo < lo || x.Hi > hi {
		return Range{lo, hi}
	}
	return x
}

func (r *ranges) inst(in *Inst) {
	if len(in.Results) != 1 {
		if in.Op == OpFor {
			r.loopVariable(in)
		}
		return
	}
	v := in.Result()
	switch in.Op {
	case OpConstant:
		if in.Const.Kind == ConstInt {
			r.set(v, Range{in.Const.Int, in.Const.Int})
		}
	case OpSize:
		if n := modeSize(in.Operands[0].Type, in.Mode); n != Dynamic {
			r.set(v, Range{n, n})
		} else {
			r.set(v, Range{0, math.MaxInt64})
		}
	case OpBuiltin:
		if x, ok := r.bounds(in.Builtin); ok {
			r.set(v, x)
		}
	case OpCast:
		if in.Operands[0].Type.IsInteger() {
			r.set(v, r.of(in.Operands[0]))
		}
	case OpArith:
		if x, ok := ArithRange(in.Arith, r.of(in.Operands[0]), r.of(in.Operands[1])); ok {
			r.set(v, x)
		}
	case OpFor:
		r.loopVariable(in)
	}
}

// modeSize is the size of mode i of a memref, or the number of memrefs
// in a group (its only mode); Dynamic when not known.
func modeSize(t *Type, i int64) int64 {
	if t.Kind() == KindGroup {
		return t.GroupSize()
	}
	return t.Shape()[i]
}

// loopVariable bounds a for loop's variable by its start and end when the
// step is a positive constant (or absent).
func (r *ranges) loopVariable(in *Inst) {
	from, to, step, _ := in.LoopBounds()
	if step != nil {
		if s := r.of(step); s.Lo <= 0 || s == Unknown {
			return
		}
	}
	f, t := r.of(from), r.of(to)
	if f == Unknown || t == Unknown || t.Hi == math.MinInt64 {
		return
	}
	r.set(in.Body().Args[0], Range{f.Lo, max(f.Lo, t.Hi-1)})
}

// ArithRange is the range of x op y on index values, or false when it is
// not bounded: IndexRanges's rule, which back ends that learn tighter
// operand ranges where they write the code (an unrolled loop's variable)
// apply too.
func ArithRange(op ArithOp, x, y Range) (Range, bool) {
	if x == Unknown || y == Unknown {
		return Unknown, false
	}
	switch op {
	case Add:
		lo, ok1 := add64(x.Lo, y.Lo)
		hi, ok2 := add64(x.Hi, y.Hi)
		return Range{lo, hi}, ok1 && ok2
	case Sub:
		lo, ok1 := add64(x.Lo, -y.Hi)
		hi, ok2 := add64(x.Hi, -y.Lo)
		return Range{lo, hi}, ok1 && ok2 && y.Lo != math.MinInt64 && y.Hi != math.MinInt64
	case Mul:
		c := [4]int64{}
		for i, p := range [4][2]int64{{x.Lo, y.Lo}, {x.Lo, y.Hi}, {x.Hi, y.Lo}, {x.Hi, y.Hi}} {
			m, ok := mul64(p[0], p[1])
			if !ok {
				return Unknown, false
			}
			c[i] = m
		}
		return Range{min(c[0], c[1], c[2], c[3]), max(c[0], c[1], c[2], c[3])}, true
	case Div:
		// By a positive divisor, truncation moves toward zero.
		if y.Lo > 0 {
			return Range{min(x.Lo/y.Lo, x.Lo/y.Hi), max(x.Hi/y.Lo, x.Hi/y.Hi)}, true
		}
	case Rem:
		if y.Lo > 0 {
			m := y.Hi - 1
			switch {
			case x.Lo >= 0:
				return Range{0, min(x.Hi, m)}, true
			case x.Hi <= 0:
				return Range{max(x.Lo, -m), 0}, true
			}
			return Range{-m, m}, true
		}
	case Min:
		return Range{min(x.Lo, y.Lo), min(x.Hi, y.Hi)}, true
	case Max:
		return Range{max(x.Lo, y.Lo), max(x.Hi, y.Hi)}, true
	}
	return Unknown, false
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

func mul64(a, b int64) (int64, bool) {
	if a == int64(int32(a)) && b == int64(int32(b)) {
		return a * b, true // as nearly always: no division to check
	}
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}
