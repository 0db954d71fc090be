package ir

import "unsafe"

// Arena carves the instructions, values, operand lists and regions that
// builders make (Builder.Arena) from shared chunks, a few kilobytes each:
// the lowerings build hundreds of instructions per kernel, mostly index
// arithmetic, and an allocation of its own for each (with its result and
// operands, NewInst's) cost about 200 machine instructions of the
// allocator, half of the lowering's.
//
// A chunk lives as long as anything carved from it, so an arena serves
// the instructions of one program, which live and die together (a
// compile's lowered IR), never several: one program's live instruction
// would keep another's chunk, and with it everything that one reaches.
// The zero Arena is ready to use; a nil *Arena allocates every
// instruction on its own, as NewInst does.
type Arena struct {
	insts   chunk[Inst]
	values  chunk[Value]
	ptrs    chunk[*Value]
	lists   chunk[*Inst]
	consts  chunk[constExtra]
	attrs   chunk[attrsExtra]
	regions chunk[Region]
	rptrs   chunk[*Region]
}

// constExtra is the Extra of a constant with its attribute.
type constExtra struct {
	extra Extra
	attr  ConstAttr
}

// attrsExtra is the Extra of another instruction with attributes (a
// subview, a loop, an async_copy), with room for its tables.
type attrsExtra struct {
	extra Extra
	modes ModeAttrs
	lists Lists
}

// chunk hands out Ts from a slice allocated a chunk at a time.
type chunk[T any] struct {
	free []T // what is left of the last chunk
	size int // elements of the last chunk
}

// Chunk sizes in bytes: the first chunk of a kind is small, so that a
// program that builds little wastes little of it; each next one is twice
// as large, up to maxChunk (a size class of the allocator; the larger
// chunks of a lowered GEMM wasted more of their last than they saved).
const (
	firstChunk = 1024
	maxChunk   = 4096
)

// grow makes a new chunk of at least n elements.
func (c *chunk[T]) grow(n int) {
	var zero T
	elemSize := int(unsafe.Sizeof(zero))
	bytes := firstChunk
	if c.size > 0 {
		bytes = min(2*c.size*elemSize, maxChunk)
	}
	c.size = max(bytes/elemSize, n)
	c.free = make([]T, c.size)
}

// take returns n zero Ts, a slice of capacity n, so that appending to it
// moves it out of the chunk.
func (c *chunk[T]) take(n int) []T {
	if n > len(c.free) {
		c.grow(n)
	}
	s := c.free[:n:n]
	c.free = c.free[n:]
	return s
}

// one returns a zero T.
func (c *chunk[T]) one() *T {
	if len(c.free) == 0 {
		c.grow(1)
	}
	p := &c.free[0]
	c.free = c.free[1:]
	return p
}

func (a *Arena) inst() *Inst     { return a.insts.one() }
func (a *Arena) value() *Value   { return a.values.one() }
func (a *Arena) region() *Region { return a.regions.one() }

// valueList returns n values, none set, in a list of capacity n.
func (a *Arena) valueList(n int) []*Value { return a.ptrs.take(n) }

// NewInst is NewInst with the instruction, its operand list, results and
// result list carved from a's chunks (allocated on their own when a is
// nil).
func (a *Arena) NewInst(op Op, operands []*Value, resultTypes ...*Type) *Inst {
	if a == nil {
		return NewInst(op, operands, resultTypes...)
	}
	in := a.inst()
	if op < numOps && hasExtra[op] {
		a.SetOp(in, op)
	} else {
		in.Op = op // (most instructions: SetOp is not inlined)
	}
	if len(operands) > 0 {
		ops := a.valueList(len(operands))
		copy(ops, operands)
		in.Operands = ops
	}
	if len(resultTypes) > 0 {
		in.Results = a.newValues(resultTypes, in, nil)
	}
	return in
}

// newValues returns new values of types, in order, carved with their list:
// the results of def or the arguments of r.
func (a *Arena) newValues(types []*Type, def *Inst, r *Region) []*Value {
	vs := a.valueList(len(types))
	for i, t := range types {
		v := a.value()
		v.Type, v.Def, v.Region, v.Index = t, def, r, int32(i)
		vs[i] = v
	}
	return vs
}

// SetOp is in.SetOp with the attribute tables in needs carved from a's
// chunks (a folded constant's, when a pass passes an arena).
func (a *Arena) SetOp(in *Inst, op Op) {
	if a == nil || in.Extra != nil || op >= numOps || !hasExtra[op] {
		in.SetOp(op)
		return
	}
	in.Op = op
	if op == OpConstant {
		x := a.consts.one()
		x.extra.ConstAttr = &x.attr
		in.Extra = &x.extra
		return
	}
	x := a.attrs.one()
	in.Extra = &x.extra
	if op.HasModes() {
		x.extra.ModeAttrs = &x.modes
	}
	if op.HasLists() {
		x.extra.Lists = &x.lists
	}
}

// binary is newBinary carved from a's chunks.
func (a *Arena) binary(op Op, x, y *Value, t *Type) *Inst {
	if a == nil {
		return newBinary(op, x, y, t)
	}
	in, v := a.inst(), a.value()
	ops := a.valueList(3)
	ops[0], ops[1], ops[2] = x, y, v
	in.Op, in.Operands, in.Results = op, ops[:2:2], ops[2:]
	v.Type, v.Def = t, in
	return in
}

// NewRegion is NewRegion carved from a's chunks.
func (a *Arena) NewRegion(kind RegionKind, argTypes ...*Type) *Region {
	if a == nil {
		return NewRegion(kind, argTypes...)
	}
	r := a.region()
	r.Kind = kind
	if len(argTypes) > 0 {
		r.Args = a.newValues(argTypes, nil, r)
	}
	return r
}

// grow returns a region's full instruction list with room for more: twice
// as much, at least firstInsts (Region.Append's), carved from a's chunks
// while small; a long one grows as append grows it.
func (a *Arena) grow(insts []*Inst) []*Inst {
	n := max(2*cap(insts), firstInsts)
	if n*int(unsafe.Sizeof(insts[0])) > maxChunk/4 {
		return insts
	}
	return append(a.lists.take(n)[:0], insts...)
}

// AddRegion is in.AddRegion with in's first region list carved from a's
// chunks.
func (a *Arena) AddRegion(in *Inst, r *Region) *Region {
	if a != nil && in.Regions == nil {
		in.Regions = a.rptrs.take(1)[:0]
	}
	return in.AddRegion(r)
}
