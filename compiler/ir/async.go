package ir

import "fmt"

// ValidCopyWidth reports why an async_copy of n elements of type elem is
// impossible, or nil: n is 1, 2, 4, 8 or 16 and the n elements take at most
// MaxVectorBytes.
func ValidCopyWidth(n int, elem *Type) error {
	if n == 1 {
		return nil
	}
	return ValidVectorWidth(n, elem)
}

// AsyncCopyOperands splits the operands of an async_copy into the source
// memref and its indices, the destination memref and its indices and the
// number of valid elements. The memrefs are the first two operands of
// memref type; src or dst is nil in an instruction the verifier rejects.
func (in *Inst) AsyncCopyOperands() (src *Value, srcIdx []*Value, dst *Value, dstIdx []*Value, valid *Value) {
	ops := in.Operands
	if len(ops) < 3 || ops[0].Type.Kind() != KindMemref {
		return nil, nil, nil, nil, nil
	}
	src = ops[0]
	for i := 1; i < len(ops); i++ {
		if ops[i].Type.Kind() == KindMemref {
			dst, srcIdx = ops[i], ops[1:i]
			rest := ops[i+1:]
			if len(rest) == 0 {
				return src, srcIdx, dst, nil, nil
			}
			return src, srcIdx, dst, rest[:len(rest)-1], rest[len(rest)-1]
		}
	}
	return src, ops[1:], nil, nil, nil
}

// AsyncCopy emits an async_copy of n elements from src at srcIdx to dst at
// dstIdx, valid of them read and the rest zero.
func (b *Builder) AsyncCopy(n int, src *Value, srcIdx []*Value, dst *Value, dstIdx []*Value, valid *Value) *Inst {
	// No results: the instruction, its count and, for the copies the
	// lowerings issue (from a matrix into one of its panel's stages), its
	// operands in one allocation, or carved from the builder's arena.
	nops := 3 + len(srcIdx) + len(dstIdx)
	var in *Inst
	var ops []*Value
	if a := b.Arena; a != nil {
		in, ops = a.inst(), a.valueList(nops)[:0]
		a.SetOp(in, OpAsyncCopy)
	} else {
		x := &struct {
			in       Inst
			extra    Extra
			modes    ModeAttrs
			operands [8]*Value
		}{}
		in, ops = &x.in, x.operands[:0:min(nops, len(x.operands))]
		in.Op, in.Extra, x.extra.ModeAttrs = OpAsyncCopy, &x.extra, &x.modes
	}
	in.Operands = append(append(append(append(append(ops, src), srcIdx...), dst), dstIdx...), valid)
	in.Count = int64(n)
	return b.Insert(in)
}

// AsyncCommit emits an async_commit.
func (b *Builder) AsyncCommit() *Inst { return b.Insert(b.Arena.NewInst(OpAsyncCommit, nil)) }

// AsyncWait emits an async_wait that leaves at most pending copy groups in
// flight.
func (b *Builder) AsyncWait(pending int) *Inst {
	if pending < 0 {
		panic(fmt.Sprintf("ir: async_wait with %d pending groups", pending))
	}
	in := b.Arena.NewInst(OpAsyncWait, nil)
	in.Count = int64(pending)
	return b.Insert(in)
}
