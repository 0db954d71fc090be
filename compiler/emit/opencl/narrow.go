package opencl

import (
	"math"

	"tltune/compiler/ir"
)

// 32-bit index arithmetic. The language's index type is 64 bits, and so is
// its C type (long); but 64-bit multiplications and divisions cost GPUs
// several instructions each, and the lowerings' index arithmetic inside a
// batch entry (tile origins, copy chunks, panel offsets) stays far below
// 2³¹. An index value whose range (ir.IndexRanges) fits an int is held in
// an int and computed in int arithmetic; everything else stays long. Where
// a narrow value meets a wide computation it is widened first, so that no
// int expression can overflow: an arithmetic result that is not narrow
// widens its narrow operands, and a memory offset is computed in int only
// when every int term and, if all terms are int, their sum fit in 32 bits.

// builtinRange bounds the builtins the launch fixes. IndexRanges asks
// it about every builtin of the function: it notes builtin.group_size,
// which the prologue defines only for functions that use it.
func (e *fn) builtinRange(k ir.BuiltinKind) (ir.Range, bool) {
	e.usesGroupSize = e.usesGroupSize || k == ir.GroupSize
	return LaunchRange(e.launch, k)
}

// LaunchRange bounds builtin k under launch l: the builtins the launch
// fixes (subgroup ids and counts, the split's part). Every back end that
// narrows index arithmetic asks it, so that they narrow the same values.
func LaunchRange(l Launch, k ir.BuiltinKind) (ir.Range, bool) {
	nsx := int64(l.WorkGroupSize[0] / l.SubgroupSize)
	wy := int64(l.WorkGroupSize[1])
	sgs := int64(l.SubgroupSize)
	switch k {
	case ir.SubgroupID:
		return ir.Range{Lo: 0, Hi: nsx*wy - 1}, true
	case ir.SubgroupIDX:
		return ir.Range{Lo: 0, Hi: nsx - 1}, true
	case ir.SubgroupIDY:
		return ir.Range{Lo: 0, Hi: wy - 1}, true
	case ir.SubgroupIDZ:
		return ir.Range{}, true
	case ir.SubgroupLocalID:
		return ir.Range{Lo: 0, Hi: sgs - 1}, true
	case ir.SubgroupSize:
		return ir.Range{Lo: sgs, Hi: sgs}, true
	case ir.NumSubgroups:
		return ir.Range{Lo: nsx * wy, Hi: nsx * wy}, true
	case ir.NumSubgroupsX:
		return ir.Range{Lo: nsx, Hi: nsx}, true
	case ir.NumSubgroupsY:
		return ir.Range{Lo: wy, Hi: wy}, true
	case ir.NumSubgroupsZ:
		return ir.Range{Lo: 1, Hi: 1}, true
	case ir.GroupIDY:
		// The launch has the split's work-groups in y (docs/abi.md), and
		// so the part of a split kernel (splitGroups) lies below it.
		return ir.Range{Lo: 0, Hi: int64(max(l.Split, 1)) - 1}, true
	}
	return ir.Range{}, false
}

// narrow reports whether index value v is held in an int.
func (e *fn) narrow(v *ir.Value) bool {
	if v.Type != ir.Index {
		return false
	}
	r, ok := e.ranges.Get(v)
	return ok && r.Fits32()
}

// wide is v's C expression as a long.
func (e *fn) wide(v *ir.Value) string {
	if e.narrow(v) {
		return e.text.join("(long)(", e.value(v), ")")
	}
	return e.value(v)
}

// offsetOf is the C expression of the element offset of idx in m (the
// memref of value mv), in int arithmetic where it provably fits.
func (e *fn) offsetOf(mv *ir.Value, idx []*ir.Value) string {
	var room [24]string // the parts of an offset of order 4: no allocation
	return e.text.joined(e.offsetOfParts(room[:0], mv, idx))
}

// addrOf appends to parts the address of element idx of memref value mv
// (elemAddr of its offsetOf), unjoined where mv is not swizzled.
func (e *fn) addrOf(parts []string, mv *ir.Value, idx []*ir.Value) []string {
	m := e.memref(mv)
	if m.swz != nil {
		var room [24]string // the parts of an offset of order 4
		return e.swizzledAddrParts(parts, m, e.offsetOfParts(room[:0], mv, idx)...)
	}
	return append(e.offsetOfParts(append(parts, "(", m.ptr, " + "), mv, idx), ")")
}

// offsetOfParts appends offsetOf(mv, idx) to parts as the parts it joins.
func (e *fn) offsetOfParts(parts []string, mv *ir.Value, idx []*ir.Value) []string {
	m := e.memref(mv)
	fits, _, _ := OffsetInInt(&e.ranges, idx, mv.Type.Stride())
	var room [4]string // orders up to 4, most memrefs', need no allocation
	strs := room[:0]
	if len(idx) > len(room) {
		strs = make([]string, 0, len(idx))
	}
	for _, v := range idx {
		if fits {
			strs = append(strs, e.value(v))
		} else {
			strs = append(strs, e.wide(v))
		}
	}
	return offsetParts(parts, m, strs)
}

// OffsetInInt is how the OpenCL C writer computes the element offset of
// idx for strides, the index values bounded by ranges (ir.IndexRanges):
// narrowTerms, whether its narrow indices stay int (each one's term over a
// static stride is an int32, and so is the sum of the terms where every
// index is narrow; a dynamic stride is a long, which makes its product
// long); inInt, whether the whole offset is int arithmetic (narrowTerms,
// every index narrow and every stride static), sum being its range then.
func OffsetInInt(ranges *ir.ValueMap[ir.Range], idx []*ir.Value, strides []int64) (narrowTerms, inInt bool, sum ir.Range) {
	allNarrow, allStatic := true, true
	for i, v := range idx {
		r, ok := ranges.Get(v)
		if v.Type != ir.Index || !ok || !r.Fits32() { // not narrow
			allNarrow = false
			continue
		}
		s := strides[i]
		if s == ir.Dynamic {
			allStatic = false
			continue
		}
		term := ir.Range{Lo: min(r.Lo*s, r.Hi*s), Hi: max(r.Lo*s, r.Hi*s)}
		if abs(s) > math.MaxInt32 || !term.Fits32() {
			return false, false, sum
		}
		sum = ir.Range{Lo: sum.Lo + term.Lo, Hi: sum.Hi + term.Hi}
	}
	if allNarrow && !sum.Fits32() {
		return false, false, sum
	}
	return true, allNarrow && allStatic, sum
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
