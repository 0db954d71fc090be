package ptx

import (
	"math"

	"tltune/compiler/ir"
)

// Integer index arithmetic is written so that ptxas sees what NVVM shows
// it for the same OpenCL C: one address register per row of a tile, the
// tile's other elements as immediate offsets in the brackets
// ([%rd9+1024]), and no instruction computed twice. Two tools do it:
//
//   - pure writes an integer instruction once per scope: the same opcode
//     on the same operands where the first is still valid reuses its
//     register (the lowerings recompute the same index and address for
//     the load and the store of one element, and for every copy of an
//     unrolled loop body);
//   - an index (ir.Index values only: the range analysis proves those
//     held in 32 bits never overflow, so a sum's parts may be widened
//     apart) that is a register plus a constant (a tile's row r+1, an
//     unrolled loop's i+64) is kept as that pair, not added up, until an
//     instruction needs it in a register; an address takes its constant
//     into the brackets instead.

// enterScope starts a region whose instructions do not dominate what
// follows it (a branch of an if, the body of a loop); leaveScope forgets
// the instructions pure wrote there again (pureTable).
func (e *fn) enterScope() { e.cse.enter() }
func (e *fn) leaveScope() { e.cse.leave() }

// pure is def for an instruction without side effects whose operands are
// never written again while it is in scope: the register of the same
// instruction written before, where it still holds, else a fresh one.
// Registers written in place (loop variables and carried values) are
// only its operands inside the loop body's scope, whose end forgets them.
func (e *fn) pure(c class, opcode string, args ...string) string {
	t := &e.cse
	h := t.hash(opcode, args)
	if r, ok := t.lookup(h, opcode, args); ok {
		return r
	}
	scope := len(t.scopes) - 1
	var r string
	if at := e.invariantDepth(args); at < e.depth {
		r, scope = e.hoist(at, c, opcode, args)
	} else {
		r = e.def(c, opcode, args...)
	}
	t.insert(scope, h, opcode, args, r)
	return r
}

// A pure instruction inside loops whose operands are all written outside
// the innermost of them is written before that loop instead, in front of
// the outermost loop it does not depend on: ptxas leaves most of such
// index arithmetic (a lane's fragment positions, a tile's addresses) in
// the loop, where NVVM's loop-invariant code motion takes it out (a
// 16×16×16 GEMM kernel computing two batch entries per work-group was
// 208 instructions of SASS against NVVM's 136, 1.8 % slower). A loop's
// frame collects what is hoisted in front of it while its body is written.
type loopFrame struct {
	start int    // where the loop's text starts in the body
	pre   []byte // hoisted instructions, to go in front of it
	scope int    // the scope the loop is written in
}

// enterLoop starts the text of a loop with a back edge; written is the
// registers the loop writes in place (its variable, its carried values),
// which are written at its depth.
func (e *fn) enterLoop(written ...string) {
	f := loopFrame{start: len(e.body), scope: len(e.cse.scopes) - 1}
	if n := len(e.loops); n < cap(e.loops) {
		f.pre = e.loops[:n+1][n].pre[:0] // a recycled frame's buffer
	}
	e.loops = append(e.loops, f)
	e.depth++
	for _, r := range written {
		e.setDepth(r, e.depth)
	}
}

// exitLoop ends the loop enterLoop started: its hoisted instructions go
// in front of it.
func (e *fn) exitLoop() {
	f := &e.loops[len(e.loops)-1]
	e.loops = e.loops[:len(e.loops)-1]
	e.depth--
	if n := len(f.pre); n > 0 {
		end := len(e.body)
		e.body = append(e.body, f.pre...) // room for it
		copy(e.body[f.start+n:], e.body[f.start:end])
		copy(e.body[f.start:], f.pre)
	}
}

// invariantDepth is the deepest depth at which one of the operands is
// written: an instruction on them may be written at that depth.
func (e *fn) invariantDepth(args []string) int {
	at := 0
	for _, a := range args {
		at = max(at, e.depthOf(a))
	}
	return at
}

// hoist writes a pure instruction in front of the loop at depth at+1; it
// is to be remembered in the scope that loop is written in, scope.
func (e *fn) hoist(at int, c class, opcode string, args []string) (r string, scope int) {
	f := &e.loops[at]
	depth := e.depth
	e.depth = at
	r = e.reg(c)
	e.depth = depth
	f.pre = appendOp(f.pre, opcode, r, args)
	return r, f.scope
}

// affine is an integer operand of w bits as base + off: base a register,
// or "" where the operand is the immediate off.
type affine struct {
	base string
	off  int64
	w    int
}

// operand is a in one register or immediate, the sum written where both
// parts are there.
func (e *fn) operand(a affine) string {
	switch {
	case a.base == "":
		return i64toa(a.off)
	case a.off == 0:
		return a.base
	}
	return e.pure(widthClass(a.w), addS.of(a.w), a.base, i64toa(a.off))
}

// affineOf is integer value v as an affine operand of w bits: widened
// part by part (v is the sum of its parts without overflow, as the C's
// int arithmetic it mirrors), a truncated one added up first.
func (e *fn) affineOf(v *ir.Value, w int) affine {
	x := e.get(v)
	if x.n == 0 {
		e.value(v) // reports it
	}
	from := e.width(v)
	base := x.x()
	if isImm(base) {
		n, _ := immOf(base)
		return affine{off: n + x.off, w: w}
	}
	if from > w && x.off != 0 {
		return affine{base: e.resize(e.operand(affine{base, x.off, from}), from, w), w: w}
	}
	return affine{base: e.widen(base, from, w), off: x.off, w: w}
}

// widen is register x of from bits as w bits, once per scope.
func (e *fn) widen(x string, from, w int) string {
	switch {
	case from == w:
		return x
	case w == 64:
		return e.pure(b64, "cvt.s64.s32", x)
	}
	return e.pure(b32, "cvt.u32.u64", x)
}

// affineArith is x op y of w bits for the operations that keep
// base + off shape: sums and differences (bases added, constants added),
// products by an immediate (base multiplied, constant multiplied). ok is
// false for the others, which intArith writes as they are, and where a
// 32-bit constant would not be a 32-bit immediate.
func (e *fn) affineArith(op ir.ArithOp, x, y affine, w int) (affine, bool) {
	a, ok := e.affineArithOf(op, x, y, w)
	if !ok || w == 32 && (a.off < math.MinInt32 || a.off > math.MaxInt32) {
		return affine{}, false
	}
	return a, true
}

// affineArithOf is affineArith before the check that a 32-bit constant
// is an immediate of 32 bits.
func (e *fn) affineArithOf(op ir.ArithOp, x, y affine, w int) (affine, bool) {
	switch {
	case op == ir.Add || op == ir.Sub && y.base == "":
		sign := int64(1)
		if op == ir.Sub {
			sign = -1
		}
		switch {
		case y.base == "":
			return affine{x.base, x.off + sign*y.off, w}, true
		case x.base == "":
			return affine{y.base, x.off + y.off, w}, true
		}
		return affine{e.pure(widthClass(w), addS.of(w), x.base, y.base), x.off + y.off, w}, true
	case op == ir.Mul && y.base == "" && x.base != "" && y.off == 1:
		return x, true
	case op == ir.Mul && y.base == "" && x.base != "" && y.off != 0:
		return affine{e.pure(widthClass(w), mulLoS.of(w), x.base, i64toa(y.off)), x.off * y.off, w}, true
	case op == ir.Mul && x.base == "" && y.base != "":
		return e.affineArithOf(op, y, x, w)
	}
	return affine{}, false
}

// affineVal is a as a value's operands.
func affineVal(a affine) val {
	if a.base == "" {
		return one(widthClass(a.w), i64toa(a.off))
	}
	v := one(widthClass(a.w), a.base)
	v.off = a.off
	return v
}
