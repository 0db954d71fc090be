package lower

import "tltune/compiler/ir"

// Alignment: which vector accesses a memref admits, proven from the source.
// A parameter's pointer is aligned as its alignment attribute promises (a
// group's attribute holds for each of its memrefs), else only to its element
// size; an alloca to its alignment attribute. A view moves the pointer by
// offset·stride elements per mode, which keeps every alignment that divides
// the byte distance: all of it for a static offset and stride, the stride's
// bytes for a dynamic offset of a static stride, the element size otherwise.

// alignment returns the alignment in bytes that the address of m's first
// element is known to have; f is the function m belongs to.
func alignment(f *ir.Func, m *ir.Value) int64 {
	size := m.Type.Elem().Size()
	if m.Type.Kind() == ir.KindGroup {
		size = m.Type.Elem().Elem().Size()
	}
	in := m.Def
	switch {
	case in == nil && m.Region == nil: // a parameter
		return attrAlignment(attrsOf(f, m), size)
	case in == nil:
		return size
	case in.Op == ir.OpLoad && in.Operands[0].Type.Kind() == ir.KindGroup:
		return alignment(f, in.Operands[0])
	case in.Op == ir.OpAlloca:
		return attrAlignment(in.Attrs, size)
	case in.Op == ir.OpExpand || in.Op == ir.OpFuse:
		return alignment(f, in.Operands[0])
	case in.Op == ir.OpSubview:
		src := in.Operands[0].Type
		a := alignment(f, in.Operands[0])
		offsets, _ := in.SubviewSlices()
		for k, off := range offsets {
			stride := src.Stride()[k]
			switch {
			case stride == ir.Dynamic:
				a = gcd(a, size)
			case off.Value != nil:
				a = gcd(a, stride*size)
			default:
				a = gcd(a, off.Static*stride*size)
			}
		}
		return a
	}
	return size
}

func attrsOf(f *ir.Func, param *ir.Value) ir.Attrs {
	if f == nil || param.Index >= len(f.ParamAttrs) || param.Index >= len(f.Params) || f.Params[param.Index] != param {
		return nil
	}
	return f.ParamAttrs[param.Index]
}

// attrAlignment is the alignment attribute of attrs, or the element size.
func attrAlignment(attrs ir.Attrs, size int64) int64 {
	if a, ok := attrs.Int(ir.AttrAlignment); ok && a > 0 {
		return a
	}
	return size
}

func gcd(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// vectorWidth returns the widest vector, at most want elements, that
// accesses to m may use when the mode-0 index is a multiple of the width
// and the other indices are arbitrary: a valid width for the element type
// whose bytes divide m's alignment and every stride of the other modes. It
// returns 1 (scalar accesses) when no vector qualifies.
func vectorWidth(f *ir.Func, m *ir.Value, want int) int {
	t := m.Type
	size := t.Elem().Size()
	align := alignment(f, m)
	for w := int64(floorPow2(want)); w >= 2; w /= 2 {
		bytes := w * size
		if !ir.VectorWidthOK(int(w), t) || align%bytes != 0 {
			continue
		}
		ok := true
		for _, s := range t.Stride()[1:] {
			ok = ok && s != ir.Dynamic && s*size%bytes == 0
		}
		if ok {
			return int(w)
		}
	}
	return 1
}

// floorPow2 is the largest power of two at most x (1 for x < 2).
func floorPow2(x int) int {
	p := 1
	for p*2 <= x {
		p *= 2
	}
	return p
}
