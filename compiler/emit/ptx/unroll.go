package ptx

import "tltune/compiler/ir"

// A for loop whose bounds are constants and whose unrolled body stays
// small is written unrolled, as NVVM unrolls the same loops of the OpenCL
// C: every copy's loads can then be issued before the first is used (a
// GEMV's inner loop reads a few elements a trip, and a warp waiting on
// one load at a time does not reach the copy ceiling), the loop variable
// is an immediate, so each copy's addresses are the first copy's address
// registers with other immediate offsets, and the test, the increment and
// the branch of every trip go away.
//
// A loop of one trip or none is always written without the loop. Others
// are unrolled when innermost and small, bounds that keep PTX size and
// ptxas time in check and that pick, on the sampled configurations of
// notes/ptxref, the loops NVVM fully unrolls: 8- and 16-trip loops whose
// bodies load one or two elements, a 4-trip one loading four; not 4-trip
// loops loading 18 or 34 elements a trip, whose loads are already many in
// flight, nor 64-trip ones.
const (
	// maxUnrollTrips is the most trips a loop unrolled has.
	maxUnrollTrips = 16
	// maxUnrolledLoads is the most loads the copies have together.
	maxUnrolledLoads = 32
	// maxUnrolledInsts is the most instructions (of the IR, nested ones
	// counted) the copies have together.
	maxUnrolledInsts = 512
)

// unrollTrips is the number of trips of loop in when it is to be
// unrolled: constant bounds, a positive step, no unroll=false attribute,
// and one trip or none or within the bounds above.
func (e *fn) unrollTrips(in *ir.Inst) (int, bool) {
	if unroll, ok := in.Attrs.Bool(ir.AttrUnroll); ok && !unroll {
		return 0, false
	}
	lo, hi, inc, ok := e.constantBounds(in)
	if !ok || inc <= 0 {
		return 0, false
	}
	trips := int64(0)
	if hi > lo {
		trips = (hi - lo + inc - 1) / inc
	}
	if trips > 1 && !e.smallEnough(in.Body(), trips) {
		return 0, false
	}
	return int(trips), true
}

// constantBounds are the bounds of loop in where all are immediates.
func (e *fn) constantBounds(in *ir.Inst) (from, to, step int64, ok bool) {
	f, t, s, _ := in.LoopBounds()
	from, ok1 := e.immediate(f)
	to, ok2 := e.immediate(t)
	step, ok3 := int64(1), true
	if s != nil {
		step, ok3 = e.immediate(s)
	}
	return from, to, step, ok1 && ok2 && ok3
}

// immediate is integer value v where it is an immediate.
func (e *fn) immediate(v *ir.Value) (int64, bool) {
	return immOf(e.rawOf(v).x())
}

// smallEnough reports whether trips copies of body are within the
// bounds above, body holding no loop. A mul_add in rows over lanes counts as the FMAs it is written as
// (rowsFMAs): one of a 128×8×32 f32 block is 1,024, and a 256³ f32
// kernel unrolled by its IR count alone was 9,480 SASS instructions
// against NVVM's 1,568.
func (e *fn) smallEnough(body *ir.Region, trips int64) bool {
	var insts, loads int64
	inner := false
	body.Walk(func(in *ir.Inst) bool {
		insts++
		if in.Op == ir.OpCoopMatrixMulAdd && e.coop && !e.held(in.Result()) {
			insts += e.rowsFMAs(in)
		}
		switch in.Op {
		case ir.OpLoad, ir.OpVectorLoad:
			loads++
		case ir.OpFor:
			inner = true
		}
		return true
	})
	return !inner && trips <= maxUnrollTrips && trips*loads <= maxUnrolledLoads && trips*insts <= maxUnrolledInsts
}

// unrolledLoop writes trips copies of the body of loop in, the loop
// variable an immediate in each and the carried values passed from copy
// to copy as they are, without moves.
func (e *fn) unrolledLoop(in *ir.Inst, trips int) error {
	_, _, _, init := in.LoopBounds()
	first, _, inc, _ := e.constantBounds(in)
	body := in.Body()
	iv := body.Args[0]
	w := e.width(iv)
	carried := e.raw(init)
	for t := range int64(trips) {
		e.vals.Set(iv, one(widthClass(w), i64toa(first+t*inc)))
		for i, c := range carried {
			e.vals.Set(body.Args[i+1], c)
			e.aliased.Set(body.Args[i+1], true)
		}
		e.unrolled[body] = nil // the body's yield fills it
		if err := e.region(body); err != nil {
			return err
		}
		carried = e.unrolled[body]
	}
	delete(e.unrolled, body)
	for i, r := range in.Results {
		e.vals.Set(r, carried[i])
	}
	return nil
}

// raw is the operands of vs as they are held, affine ones not added up.
func (e *fn) raw(vs []*ir.Value) []val {
	xs := e.slab.vs.Take(len(vs))
	for i, v := range vs {
		xs[i] = e.rawOf(v)
	}
	return xs
}

// rawOf is the operands of v as held, an affine one not added up.
func (e *fn) rawOf(v *ir.Value) val {
	x := e.get(v)
	if x.n == 0 {
		e.value(v) // reports it
	}
	return x
}
