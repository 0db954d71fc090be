package ir

import "fmt"

// MaxVectorBytes is the widest access of vector_load and vector_store: 128
// bits, the widest load or store one work-item issues on the GPUs tltune
// targets.
const MaxVectorBytes = 16

// ValidVectorWidth reports why n elements of type elem cannot form one
// vector access, or nil: n must be 2, 4, 8 or 16 and n·size(elem) at most
// MaxVectorBytes.
func ValidVectorWidth(n int, elem *Type) error {
	if n != 2 && n != 4 && n != 8 && n != 16 {
		return fmt.Errorf("vector width %d is not 2, 4, 8 or 16", n)
	}
	if b := int64(n) * elem.Size(); b > MaxVectorBytes {
		return fmt.Errorf("%d elements of %s are %d bytes, more than the %d of one vector access", n, elem, b, MaxVectorBytes)
	}
	return nil
}

// VectorWidthOK reports whether memref type m admits vector accesses of n
// elements: a valid width for its element type and the static stride 1 in
// mode 0.
func VectorWidthOK(n int, m *Type) bool {
	return m.Kind() == KindMemref && m.Order() >= 1 && m.Stride()[0] == 1 && ValidVectorWidth(n, m.Elem()) == nil
}

// VectorWidth returns the number of elements a vector_load or vector_store
// moves.
func (in *Inst) VectorWidth() int {
	if in.Op == OpVectorLoad {
		return len(in.Results)
	}
	xs, _, _ := in.VectorStoreOperands()
	return len(xs)
}

// VectorStoreOperands splits the operands of a vector_store into the stored
// values, the memref (the first operand of memref type) and the indices.
// m is nil when no operand is a memref (an instruction the verifier
// rejects).
func (in *Inst) VectorStoreOperands() (xs []*Value, m *Value, index []*Value) {
	for i, v := range in.Operands {
		if v.Type.Kind() == KindMemref {
			return in.Operands[:i], v, in.Operands[i+1:]
		}
	}
	return in.Operands, nil, nil
}
