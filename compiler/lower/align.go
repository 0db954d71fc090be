package lower

import "tltune/compiler/ir"

// vectorWidth returns the widest vector, at most want elements, that
// accesses to m may use when the mode-0 index is a multiple of the width
// and the other indices are arbitrary: a valid width for the element type
// whose bytes divide m's alignment (ir.Alignment) and every stride of the
// other modes. It returns 1 (scalar accesses) when no vector qualifies.
func vectorWidth(f *ir.Func, m *ir.Value, want int) int {
	t := m.Type
	size := t.Elem().Size()
	align := ir.Alignment(f, m)
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

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
