package ir

// What the compiler can prove about addresses: the alignment of a memref's
// first element and the divisors of index values. Lowerings use it to pick
// vector widths, back ends to pick instructions that need aligned rows
// (ldmatrix); both only ever assume what is proven here.

// KnownMultiple returns an integer d that is known to divide the integer
// value v at run time: 1 when nothing is known, 0 when v is the constant 0
// (which everything divides), else the constant itself, products and sums
// of what the operands are known to be multiples of, and for a for loop's
// variable what its start and step share (the variable is start + i·step).
func KnownMultiple(v *Value) int64 {
	return knownMultiple(v, 0)
}

// Divisible reports whether n is known to divide the integer value v.
func Divisible(v *Value, n int64) bool {
	m := KnownMultiple(v)
	return m == 0 || m%n == 0
}

// knownMultiple bounds the recursion: past a depth the answer is 1.
func knownMultiple(v *Value, depth int) int64 {
	if depth > 32 || v == nil || !v.Type.IsInteger() {
		return 1
	}
	if v.Region != nil {
		return loopVariableMultiple(v, depth)
	}
	in := v.Def
	if in == nil {
		return 1
	}
	switch in.Op {
	case OpConstant:
		if in.Const.Kind == ConstInt && in.Const.Int != 0 {
			return abs64(in.Const.Int)
		}
		if in.Const.Kind == ConstInt {
			return 0 // zero: a multiple of everything, see combine
		}
	case OpCast:
		return knownMultiple(in.Operands[0], depth+1)
	case OpArith:
		x, y := knownMultiple(in.Operands[0], depth+1), knownMultiple(in.Operands[1], depth+1)
		switch in.Arith {
		case Mul:
			if x == 0 || y == 0 {
				return 0
			}
			return x * y
		case Add, Sub:
			return gcd64(x, y)
		case Shl:
			if c, ok := constInt(in.Operands[1]); ok && c >= 0 && c < 62 && x != 0 {
				return x << c
			}
		case Rem:
			// x mod c keeps what x and c share.
			if c, ok := constInt(in.Operands[1]); ok && c != 0 {
				return gcd64(x, abs64(c))
			}
		case Min, Max:
			return gcd64(x, y)
		}
	}
	return 1
}

// loopVariableMultiple is what a for loop's variable is a multiple of;
// loop-carried values and other region arguments are unknown.
func loopVariableMultiple(v *Value, depth int) int64 {
	loop := v.Region.Parent
	if loop == nil || loop.Op != OpFor || v.Index != 0 {
		return 1
	}
	from, _, step, _ := loop.LoopBounds()
	m := knownMultiple(from, depth+1)
	if step == nil {
		return gcd64(m, 1)
	}
	return gcd64(m, knownMultiple(step, depth+1))
}

func constInt(v *Value) (int64, bool) {
	if v.Def == nil || v.Def.Op != OpConstant || v.Def.Const.Kind != ConstInt {
		return 0, false
	}
	return v.Def.Const.Int, true
}

// gcd64 is the greatest common divisor, with gcd(0, x) = x so that zero
// (a multiple of everything) takes the other operand's divisor.
func gcd64(a, b int64) int64 {
	a, b = abs64(a), abs64(b)
	for b != 0 {
		a, b = b, a%b
	}
	if a == 0 {
		return 1
	}
	return a
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Alignment returns the alignment in bytes that the address of the first
// element of memref (or group) m is known to have; f is the function m
// belongs to. A parameter is aligned as its alignment attribute promises (a
// group's attribute holds for each of its memrefs), else only to its
// element size; an alloca to its alignment attribute. A view moves the
// pointer by offset·stride elements per mode, which keeps every alignment
// that divides that distance: for a dynamic offset of a static stride, the
// stride times what the offset is known to be a multiple of.
func Alignment(f *Func, m *Value) int64 {
	size := m.Type.Elem().Size()
	if m.Type.Kind() == KindGroup {
		size = m.Type.Elem().Elem().Size()
	}
	in := m.Def
	switch {
	case in == nil && m.Region == nil: // a parameter
		return attrAlignment(paramAttrs(f, m), size)
	case in == nil:
		return size
	case in.Op == OpLoad && in.Operands[0].Type.Kind() == KindGroup:
		return Alignment(f, in.Operands[0])
	case in.Op == OpAlloca:
		return attrAlignment(in.Attrs, size)
	case in.Op == OpExpand || in.Op == OpFuse:
		return Alignment(f, in.Operands[0])
	case in.Op == OpSubview:
		src := in.Operands[0].Type
		a := Alignment(f, in.Operands[0])
		offsets, _ := in.SubviewSlices()
		for k, off := range offsets {
			stride := src.Stride()[k]
			switch {
			case stride == Dynamic:
				a = gcd64(a, size)
			case off.Value != nil:
				a = gcd64(a, KnownMultiple(off.Value)*stride*size)
			default:
				a = gcd64(a, off.Static*stride*size)
			}
		}
		return a
	}
	return size
}

func paramAttrs(f *Func, param *Value) Attrs {
	i := int(param.Index)
	if f == nil || i >= len(f.ParamAttrs) || i >= len(f.Params) || f.Params[i] != param {
		return nil
	}
	return f.ParamAttrs[i]
}

// attrAlignment is the alignment attribute of attrs, or the element size.
func attrAlignment(attrs Attrs, size int64) int64 {
	if a, ok := attrs.Int(AttrAlignment); ok && a > 0 {
		return a
	}
	return size
}
