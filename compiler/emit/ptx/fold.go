package ptx

import (
	"math"

	"tltune/compiler/ir"
)

// Comparisons the value ranges decide are not written: NVVM drops the
// bounds checks that can never fail (or never pass), and so does this
// writer. A GER tile taller than the matrix checks every row against the
// bound, with a vector access for rows in range and element-wise ones
// below; where the tile's rows are known (a one-trip loop's variable is
// an immediate, and so is an unrolled loop's), the checks of the rows
// that are always inside or always outside fold, and only the branch
// they take is written, without a label or a jump.
//
// ir.IndexRanges bounds each value once for the whole function; the
// writer knows more where it writes the code: an immediate is its own
// range, and arithmetic on operands it knows better is bounded again
// (tight), within what the function-wide ranges allow. Those ranges
// decide comparisons and branches only: which values are held in 32 bits
// stays the function-wide analysis's choice, the OpenCL C writer's.

// known is the range of integer value v as written: an immediate's value,
// else what the writer learnt where it wrote v, else the function-wide
// range.
func (e *fn) known(v *ir.Value) ir.Range {
	if n, ok := immOf(e.get(v).x()); ok {
		return ir.Range{Lo: n, Hi: n}
	}
	if r, ok := e.tight.Get(v); ok {
		return r
	}
	if r, ok := e.ranges.Get(v); ok {
		return r
	}
	return ir.Unknown
}

// learn notes x as the range of index value v where it is being written,
// narrowed by its function-wide range. It is set every time v is written
// (once per copy of an unrolled body), so that no copy reads another's.
func (e *fn) learn(v *ir.Value, x ir.Range) {
	if r, ok := e.ranges.Get(v); ok {
		if both := (ir.Range{Lo: max(x.Lo, r.Lo), Hi: min(x.Hi, r.Hi)}); both.Lo <= both.Hi {
			x = both
		}
	}
	e.tight.Set(v, x)
}

// learnArith bounds the index result of arithmetic instruction in by its
// operands' known ranges.
func (e *fn) learnArith(in *ir.Inst) {
	if r := in.Result(); r.Type == ir.Index {
		x, ok := ir.ArithRange(in.Arith, e.known(in.Operands[0]), e.known(in.Operands[1]))
		if !ok {
			x = ir.Unknown
		}
		e.learn(r, x)
	}
}

// loopRange is the range of the variable of a for loop from from to to
// by a step of at least step.Lo, as ir.IndexRanges bounds it, and no
// more than the start where the loop runs at most once; false where the
// step may not be positive or a bound is unknown.
func loopRange(from, to, step ir.Range, once bool) (ir.Range, bool) {
	if step.Lo <= 0 || from == ir.Unknown || to == ir.Unknown || to.Hi == math.MinInt64 {
		return ir.Range{}, false
	}
	hi := max(from.Lo, to.Hi-1)
	if once {
		hi = max(from.Lo, min(from.Hi, hi))
	}
	return ir.Range{Lo: from.Lo, Hi: hi}, true
}

// stepRange is the known range of a loop's step, 1 where it has none.
func (e *fn) stepRange(step *ir.Value) ir.Range {
	if step == nil {
		return ir.Range{Lo: 1, Hi: 1}
	}
	return e.known(step)
}

// atMostOnce reports whether a for loop from from to to by step provably
// runs at most one trip: the least start plus the least step reaches the
// greatest bound.
func atMostOnce(from, to, step ir.Range) bool {
	if step.Lo <= 0 || from == ir.Unknown || to == ir.Unknown {
		return false
	}
	next, ok := ir.ArithRange(ir.Add, from, ir.Range{Lo: step.Lo, Hi: step.Lo})
	return ok && next.Lo >= to.Hi
}

// decide is the outcome of x op y for every x and y of the ranges, and
// whether the ranges decide it.
func decide(op ir.CmpOp, x, y ir.Range) (outcome, ok bool) {
	switch op {
	case ir.Gt:
		return decide(ir.Lt, y, x)
	case ir.Ge:
		return decide(ir.Le, y, x)
	case ir.Ne:
		eq, ok := decide(ir.Eq, x, y)
		return !eq, ok
	case ir.Lt:
		return x.Hi < y.Lo, x.Hi < y.Lo || x.Lo >= y.Hi
	case ir.Le:
		return x.Hi <= y.Lo, x.Hi <= y.Lo || x.Lo > y.Hi
	case ir.Eq:
		same := x.Lo == x.Hi && x == y
		return same, same || x.Hi < y.Lo || y.Hi < x.Lo
	}
	return false, false
}

// predImm is a decided predicate as an immediate operand; predicate turns
// it into a register where an instruction needs one.
func predImm(b bool) val { return one(pred, itoa(b2i(b))) }

// predicate is the register of a decided predicate, written once per
// scope.
func (e *fn) predicate(imm string) string {
	return e.pure(pred, "setp.ne.s32", e.pure(b32, "mov.b32", imm), "0")
}

// foldBool is bool arithmetic instruction in where a decided operand
// decides it or passes the other on: x and 1, x or 0, x xor 0.
func (e *fn) foldBool(in *ir.Inst) (val, bool) {
	if in.Result().Type.Kind() != ir.KindBool {
		return val{}, false
	}
	x, y := e.get(in.Operands[0]), e.get(in.Operands[1])
	if !isImm(y.x()) {
		x, y = y, x
	}
	n, ok := immOf(y.x())
	switch {
	case !ok:
		return val{}, false
	case in.Arith == ir.And && n == 0, in.Arith == ir.Or && n != 0:
		return predImm(n != 0), true
	case in.Arith == ir.And, in.Arith == ir.Or, in.Arith == ir.Xor && n == 0:
		return x, x.n > 0
	}
	return val{}, false
}

// decidedBranch writes the region of if in that condition taken selects
// in place of the if: it is all that runs, so what it writes is in the
// enclosing scope, and its yield passes its values on as they are.
func (e *fn) decidedBranch(in *ir.Inst, taken bool) error {
	i := b2i(!taken)
	if i >= len(in.Regions) {
		return nil // no else
	}
	r := in.Regions[i]
	e.unrolled[r] = nil // the region's yield fills it
	defer delete(e.unrolled, r)
	if err := e.region(r); err != nil {
		return err
	}
	for j, res := range in.Results {
		e.vals.Set(res, e.unrolled[r][j])
	}
	return nil
}
