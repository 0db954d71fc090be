package ptx

import (
	"slices"

	"tltune/compiler/ir"
)

// forLoop writes a for loop as the OpenCL C's for: the test before each
// trip, loop-carried values in registers that also hold the results. A
// loop the ranges show to run at most once has neither the increment nor
// the jump back, its variable is the start itself, and its test goes
// where the ranges decide it (fold.go).
func (e *fn) forLoop(in *ir.Inst) error {
	if trips, ok := e.unrollTrips(in); ok {
		return e.unrolledLoop(in, trips)
	}
	from, to, step, init := in.LoopBounds()
	body := in.Body()
	iv := body.Args[0]
	carried := e.carried(in.Results)
	for i, c := range carried {
		e.assign(c, e.value(init[i]))
		e.vals.Set(body.Args[i+1], c)
	}
	e.yields[body] = carried
	kFrom, kTo, kStep := e.known(from), e.known(to), e.stepRange(step)
	skip, decided := decide(ir.Ge, kFrom, kTo)
	if decided && skip {
		return nil // no trip: the results are the initial values
	}
	once := atMostOnce(kFrom, kTo, kStep)
	w := e.width(iv)
	ivReg := e.intAs(from, w)
	if !once {
		ivReg = e.def(widthClass(w), movOf(widthClass(w)), ivReg)
	}
	e.vals.Set(iv, one(widthClass(w), ivReg))
	if r, ok := loopRange(kFrom, kTo, kStep, once); ok && iv.Type == ir.Index {
		e.learn(iv, r)
	}
	head, end := e.newLabel(), e.newLabel()
	if !once {
		var written []string
		for _, c := range carried {
			written = append(written, c.each()...)
		}
		e.enterLoop(append(written, ivReg)...)
		e.putLabel(head)
	}
	if unroll, ok := in.Attrs.Bool(ir.AttrUnroll); ok && !unroll && !once {
		e.op(`.pragma "nounroll"`)
	}
	runs := decided && once // exactly one trip
	if !runs {
		e.exitTest(ivReg, w, to, end)
	}
	if err := e.scoped(body); err != nil {
		return err
	}
	if !once {
		inc := "1"
		if step != nil {
			inc = e.intAs(step, w)
		}
		e.op(addS.of(w), ivReg, ivReg, inc)
		e.op("bra.uni", head)
		e.exitLoop()
	}
	if !runs {
		e.putLabel(end)
	}
	return nil
}

// exitTest branches to end where loop variable x of w bits has reached
// to; C compares an int variable with a long bound in long.
func (e *fn) exitTest(x string, w int, to *ir.Value, end string) {
	cw := max(w, e.width(to))
	x = e.resize(x, w, cw)
	if isImm(x) {
		x = e.def(widthClass(cw), movOf(widthClass(cw)), x)
	}
	e.branch(e.def(pred, setpGe.of(cw), x, e.intAs(to, cw)), false, end)
}

// scoped writes region r in a scope of its own: what pure writes there
// is not reused after it.
func (e *fn) scoped(r *ir.Region) error {
	e.enterScope()
	defer e.leaveScope()
	return e.region(r)
}

// carried returns fresh registers for results, which name them.
func (e *fn) carried(results []*ir.Value) []val {
	regs := make([]val, len(results))
	for i, r := range results {
		regs[i] = e.fresh(r)
		e.vals.Set(r, regs[i])
	}
	return regs
}

// ifElse branches around the regions; both yield into the results'
// registers.
func (e *fn) ifElse(in *ir.Inst) error {
	if n, ok := immOf(e.get(in.Operands[0]).x()); ok {
		return e.decidedBranch(in, n != 0)
	}
	results := e.carried(in.Results)
	cond := e.value(in.Operands[0]).x()
	elseLabel, end := e.newLabel(), e.newLabel()
	hasElse := len(in.Regions) > 1 && len(in.Regions[1].Insts) > 0
	e.branch(cond, true, elseLabel)
	e.yields[in.Regions[0]] = results
	if err := e.scoped(in.Regions[0]); err != nil {
		return err
	}
	if hasElse {
		e.op("bra.uni", end)
	}
	e.putLabel(elseLabel)
	if hasElse {
		e.yields[in.Regions[1]] = results
		if err := e.scoped(in.Regions[1]); err != nil {
			return err
		}
		e.putLabel(end)
	}
	return nil
}

// yield moves the yielded values into the registers of the loop or the
// if (an unrolled loop's body passes them on as they are), through temporaries where a value moved early would be read later
// (a yield that permutes loop-carried values).
func (e *fn) yield(in *ir.Inst) {
	if _, ok := e.unrolled[in.Parent]; ok {
		e.unrolled[in.Parent] = e.raw(in.Operands)
		return
	}
	dst := e.yields[in.Parent]
	src := make([]val, len(in.Operands))
	for i, v := range in.Operands {
		src[i] = e.value(v)
	}
	if clobbers(dst, src) {
		for i := range src {
			tmp := e.fresh(in.Operands[i])
			e.assign(tmp, src[i])
			src[i] = tmp
		}
	}
	for i := range dst {
		e.assign(dst[i], src[i])
	}
}

// clobbers reports whether moving src[i] into dst[i] in order overwrites
// a register a later src reads.
func clobbers(dst, src []val) bool {
	for j := range dst {
		for i := j + 1; i < len(src); i++ {
			for _, d := range dst[j].each() {
				if slices.Contains(src[i].each(), d) {
					return true
				}
			}
		}
	}
	return false
}

// shuffle is x as held by lane `lane` (32 bits) of the subgroup:
// shfl.sync.idx, as the OpenCL C writer's tl_shfl and tl_shfl16 helpers
// do it, 32 bits at a time.
func (e *fn) shuffle(x val, lane string) val {
	if e.l.SubgroupSize == 1 || isImm(x.x()) {
		return x
	}
	out := x
	for i, p := range x.each() {
		out.parts[i] = e.shufflePart(x.cls, p, lane)
	}
	return out
}

// shufflePart moves one register of class c between lanes.
func (e *fn) shufflePart(c class, x, lane string) string {
	switch c {
	case b32, f32:
		return e.shfl(c, x, lane)
	case b16:
		w := e.shfl(b32, e.def(b32, "cvt.u32.u16", x), lane)
		return e.def(b16, "cvt.u16.u32", w)
	case b64, f64:
		lo, hi := e.reg(b32), e.reg(b32)
		e.op("mov.b64", braces(lo, hi), x)
		lo, hi = e.shfl(b32, lo, lane), e.shfl(b32, hi, lane)
		return e.def(c, "mov.b64", braces(lo, hi))
	}
	w := e.shfl(b32, e.def(b32, "selp.u32", "1", "0", x), lane)
	return e.def(pred, "setp.ne.u32", w, "0")
}

// shfl is one shfl.sync.idx.b32: a warp names every lane; a half-warp its
// own sixteen, segment mask 0x10 in c.
func (e *fn) shfl(c class, x, lane string) string {
	if e.l.SubgroupSize == 32 {
		return e.def(c, "shfl.sync.idx.b32", x, lane, "0x1f", "0xffffffff")
	}
	if e.l.SubgroupSize != 16 {
		panic(unsupported("subgroups of %d lanes", e.l.SubgroupSize))
	}
	return e.def(c, "shfl.sync.idx.b32", x, lane, "0x100f", e.shflMask)
}
