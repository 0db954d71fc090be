package ir

import "slices"

// NewFunc returns a function with parameters of the given types (named
// names[i] when names is not nil) and an empty collective body.
func NewFunc(name string, names []string, types []*Type) *Func {
	f := &Func{Name: name, Body: &Region{Kind: RegionCollective}}
	f.ParamAttrs = make([]Attrs, len(types))
	for i, t := range types {
		v := &Value{Type: t, Index: int32(i)}
		if names != nil {
			v.Name = names[i]
		}
		f.Params = append(f.Params, v)
	}
	return f
}

// NewRegion returns an empty region of the given kind with arguments of the
// given types.
func NewRegion(kind RegionKind, argTypes ...*Type) *Region {
	r := &Region{Kind: kind}
	if len(argTypes) > 0 {
		// A loop's body has the induction variable and the carried values.
		r.Args = valueList(argTypes, r, nil)
	}
	return r
}

// valueList returns values of the given types, numbered in order, that
// are arguments of region or results of def (the other nil): the values
// in one allocation and their list in another.
func valueList(types []*Type, region *Region, def *Inst) []*Value {
	vals := make([]Value, len(types))
	list := make([]*Value, len(types))
	for i, t := range types {
		vals[i] = Value{Type: t, Region: region, Def: def, Index: int32(i)}
		list[i] = &vals[i]
	}
	return list
}

// AddArg appends an argument of type t to r and returns it.
func (r *Region) AddArg(t *Type) *Value {
	v := &Value{Type: t, Region: r, Index: int32(len(r.Args))}
	r.Args = append(r.Args, v)
	return v
}

// NewInst returns an instruction with the given operands (copied: the
// instruction does not keep the slice) and one fresh result per result
// type. Set attribute fields and add regions (AddRegion) before inserting
// it into a region.
func NewInst(op Op, operands []*Value, resultTypes ...*Type) *Inst {
	if len(resultTypes) == 1 {
		// Most instructions have one result: one allocation holds the
		// instruction, the result and the result list (of capacity 1, so
		// an append moves it out), and up to four operands, in the
		// smallest of three sizes that fits them.
		switch {
		case len(operands) == 0 && op == OpConstant:
			x := &struct {
				in      Inst
				extra   Extra
				attr    ConstAttr
				results [1]*Value
				result  Value
			}{}
			x.extra.ConstAttr = &x.attr
			x.in.Extra = &x.extra
			return x.in.init(op, nil, &x.result, x.results[:], resultTypes[0])
		case len(operands) == 0:
			x := &struct {
				in      Inst
				result  Value
				results [1]*Value
			}{}
			return x.in.init(op, nil, &x.result, x.results[:], resultTypes[0])
		case len(operands) <= 2:
			x := &twoOperands{}
			ops := x.operands[:len(operands):len(operands)]
			copy(ops, operands)
			return x.in.init(op, ops, &x.result, x.results[:], resultTypes[0])
		case len(operands) <= 4:
			x := &fourOperands{}
			ops := x.operands[:len(operands):len(operands)]
			copy(ops, operands)
			return x.in.init(op, ops, &x.result, x.results[:], resultTypes[0])
		}
	}
	in := &Inst{}
	in.SetOp(op)
	if len(operands) > 0 {
		in.Operands = make([]*Value, len(operands))
		copy(in.Operands, operands)
	}
	if len(resultTypes) > 0 {
		// A loop carrying a tile's accumulators has a dozen.
		in.Results = valueList(resultTypes, nil, in)
	}
	return in
}

// twoOperands and fourOperands are the allocations of an instruction with
// one result and up to two or four operands (192 and 208 bytes: size
// classes of the allocator).
type twoOperands struct {
	in       Inst
	result   Value
	results  [1]*Value
	operands [2]*Value
}

type fourOperands struct {
	in       Inst
	result   Value
	results  [1]*Value
	operands [4]*Value
}

// init sets the fields of a zeroed one-result instruction allocated with
// its result, result list and operands, one by one: assigning whole
// structs zeroed and copied them again, under the garbage collector's
// write barriers when it runs.
func (in *Inst) init(op Op, operands []*Value, result *Value, results []*Value, t *Type) *Inst {
	in.Op = op
	if in.Extra == nil && hasExtra[op] { // (a constant's comes with it)
		in.makeAttrs(op)
	}
	in.Operands, in.Results = operands, results
	result.Type, result.Def = t, in
	results[0] = result
	return in
}

// AddRegion attaches r as the next region of in and returns it.
func (in *Inst) AddRegion(r *Region) *Region {
	r.Parent = in
	in.Regions = append(in.Regions, r)
	return r
}

// Append adds in at the end of r.
func (r *Region) Append(in *Inst) *Inst {
	in.Parent = r
	if r.Insts == nil {
		// Room for a few from the start: growing from one by doubling
		// was an allocation for every region's first, second, third and
		// fifth instruction.
		r.Insts = make([]*Inst, 0, firstInsts)
	}
	r.Insts = append(r.Insts, in)
	return in
}

// firstInsts is the capacity a region's instruction list starts with.
const firstInsts = 8

// Insert adds in at position i of r (0 ≤ i ≤ len(r.Insts)).
func (r *Region) Insert(i int, in *Inst) *Inst {
	in.Parent = r
	r.Insts = slices.Insert(r.Insts, i, in)
	return in
}

// IndexOf returns the position of in in r or -1.
func (r *Region) IndexOf(in *Inst) int { return slices.Index(r.Insts, in) }

// Remove deletes in from r. Its results must no longer be used.
func (r *Region) Remove(in *Inst) {
	if i := r.IndexOf(in); i >= 0 {
		r.Insts = slices.Delete(r.Insts, i, i+1)
		in.Parent = nil
	}
}

// Terminator returns the last instruction of r if it is a yield, else nil.
func (r *Region) Terminator() *Inst {
	if n := len(r.Insts); n > 0 && r.Insts[n-1].Op == OpYield {
		return r.Insts[n-1]
	}
	return nil
}

// Builder appends instructions at the end of a region (or before a given
// position) and stamps them with a position. Its methods build the common
// instructions with their result types already computed; everything else
// goes through Insert(NewInst(...)).
type Builder struct {
	Region *Region
	At     int // insertion index; -1 appends
	Pos    Pos // position given to new instructions
	// Arena, when not nil, is where the builder's methods carve the
	// instructions, values and regions they make (and a region's first
	// instruction list when it appends to one without).
	Arena *Arena
}

// NewBuilder returns a builder appending to r.
func NewBuilder(r *Region) *Builder { return &Builder{Region: r, At: -1} }

// Insert places in at the builder's position, advancing it. An instruction
// without a source position takes the builder's Pos; one that has a
// position (moved or cloned from source) keeps it, so diagnostics still
// point at the user's code.
func (b *Builder) Insert(in *Inst) *Inst {
	if !in.Pos.IsValid() {
		in.Pos = b.Pos
	}
	if b.At < 0 {
		if r := b.Region; b.Arena != nil && len(r.Insts) == cap(r.Insts) {
			r.Insts = b.Arena.grow(r.Insts)
		}
		return b.Region.Append(in)
	}
	b.Region.Insert(b.At, in)
	b.At++
	return in
}

// Constant emits a constant of type t.
func (b *Builder) Constant(c Constant, t *Type) *Value {
	in := b.Arena.NewInst(OpConstant, nil, t)
	in.Const = c
	return b.Insert(in).Result()
}

// IntConst emits an integer constant of integer type t.
func (b *Builder) IntConst(v int64, t *Type) *Value {
	return b.Constant(Constant{Kind: ConstInt, Int: v}, t)
}

// FloatConst emits a floating constant of floating type t.
func (b *Builder) FloatConst(v float64, t *Type) *Value {
	return b.Constant(Constant{Kind: ConstFloat, Float: v}, t)
}

// Arith emits a binary arithmetic instruction; the result has x's type.
func (b *Builder) Arith(op ArithOp, x, y *Value) *Value {
	in := b.Arena.binary(OpArith, x, y, x.Type)
	in.Arith = op
	return b.Insert(in).Result()
}

// Cmp emits a comparison.
func (b *Builder) Cmp(op CmpOp, x, y *Value) *Value {
	in := b.Arena.binary(OpCmp, x, y, Bool)
	in.Cmp = op
	return b.Insert(in).Result()
}

// newBinary is NewInst(op, []*Value{x, y}, t) in one allocation: index
// arithmetic is most of what the lowerings build. Like NewInst it sets
// the fields of the zeroed allocation one by one: assigning whole structs
// zeroed and copied them again, under the garbage collector's write
// barriers when it runs (as it often does during a compile).
func newBinary(op Op, x, y *Value, t *Type) *Inst {
	a := &twoOperands{}
	a.operands[0], a.operands[1] = x, y
	a.in.Op, a.in.Operands, a.in.Results = op, a.operands[:], a.results[:]
	a.result.Type, a.result.Def = t, &a.in
	a.results[0] = &a.result
	return &a.in
}

// Cast emits a cast of x to t.
func (b *Builder) Cast(x *Value, t *Type) *Value {
	return b.Insert(b.Arena.NewInst(OpCast, []*Value{x}, t)).Result()
}

// Builtin emits a builtin with its prescribed result type.
func (b *Builder) Builtin(k BuiltinKind) *Value {
	in := b.Arena.NewInst(OpBuiltin, nil, k.ResultType())
	in.Builtin = k
	return b.Insert(in).Result()
}

// Load emits a load from a memref (result: its element type) or a group
// (result: its memref type).
func (b *Builder) Load(m *Value, index ...*Value) *Value {
	var ops [4]*Value // NewInst copies them: on the stack when few
	return b.Insert(b.Arena.NewInst(OpLoad, append(append(ops[:0], m), index...), m.Type.Elem())).Result()
}

// Store emits a store of x into m at index.
func (b *Builder) Store(atomic AtomicMode, x, m *Value, index ...*Value) *Inst {
	// No results: the instruction takes the operand list made for it.
	in := &Inst{Op: OpStore, Operands: append([]*Value{x, m}, index...), Atomic: atomic}
	return b.Insert(in)
}

// VectorLoad emits a vector_load of n consecutive elements of m from index
// on along mode 0 and returns the n results.
func (b *Builder) VectorLoad(n int, m *Value, index ...*Value) []*Value {
	types := make([]*Type, n)
	for i := range types {
		types[i] = m.Type.Elem()
	}
	var ops [4]*Value // NewInst copies them: on the stack when few
	return b.Insert(b.Arena.NewInst(OpVectorLoad, append(append(ops[:0], m), index...), types...)).Results
}

// VectorStore emits a vector_store of xs into consecutive elements of m
// from index on along mode 0.
func (b *Builder) VectorStore(xs []*Value, m *Value, index ...*Value) *Inst {
	ops := make([]*Value, 0, len(xs)+1+len(index))
	ops = append(append(append(ops, xs...), m), index...)
	// No results: the instruction takes the operand list made for it.
	return b.Insert(&Inst{Op: OpVectorStore, Operands: ops})
}

// ShuffleXor emits a subgroup_shuffle_xor of x with mask (an i32).
func (b *Builder) ShuffleXor(x, mask *Value) *Value {
	return b.Insert(b.Arena.NewInst(OpSubgroupShuffleXor, []*Value{x, mask}, x.Type)).Result()
}

// Yield emits a yield of vs.
func (b *Builder) Yield(vs ...*Value) *Inst { return b.Insert(b.Arena.NewInst(OpYield, vs)) }

// Barrier emits a barrier with the given fences.
func (b *Builder) Barrier(f Fence) *Inst {
	in := b.Arena.NewInst(OpBarrier, nil)
	in.Fence = f
	return b.Insert(in)
}

// For emits a for loop over [from, to) with optional step (nil: 1) and
// loop-carried values initialised from init; the loop variable has from's
// type. It returns the instruction; its body (in.Body()) has the loop
// variable and the loop-carried values as arguments and must end with a
// yield when init is not empty.
func (b *Builder) For(from, to, step *Value, init ...*Value) *Inst {
	// NewInst and NewRegion copy the operands and read the types: on
	// the stack unless a tile's accumulators are carried.
	var opsRoom [8]*Value
	var typesRoom [8]*Type
	ops := append(opsRoom[:0], from, to)
	if step != nil {
		ops = append(ops, step)
	}
	ops = append(ops, init...)
	// types[0] is the induction variable's, the rest the carried values'
	// (the loop's results and its body's arguments after it).
	types := append(typesRoom[:0], from.Type)
	for _, v := range init {
		types = append(types, v.Type)
	}
	in := b.Arena.NewInst(OpFor, ops, types[1:]...)
	in.HasStep = step != nil
	b.Arena.AddRegion(in, b.Arena.NewRegion(RegionInherit, types...))
	return b.Insert(in)
}

// Foreach emits a foreach over the box [from_i, to_i); its SPMD body has
// one loop variable per bound, of from[0]'s type.
func (b *Builder) Foreach(from, to []*Value) *Inst {
	in := NewInst(OpForeach, append(slices.Clone(from), to...))
	body := in.AddRegion(NewRegion(RegionSPMD))
	for range from {
		body.AddArg(from[0].Type)
	}
	return b.Insert(in)
}

// ForeachTile emits a foreach_tile over the box [from_i, to_i) in tiles of
// the given shape; its SPMD body has the tile offsets, then the tile sizes,
// each of its mode's bound type.
func (b *Builder) ForeachTile(from, to []*Value, tile []int64) *Inst {
	in := NewInst(OpForeachTile, append(slices.Clone(from), to...))
	in.Static = slices.Clone(tile)
	body := in.AddRegion(NewRegion(RegionSPMD))
	for range 2 {
		for _, v := range from {
			body.AddArg(v.Type)
		}
	}
	return b.Insert(in)
}

// If emits an if on cond returning values of the given types; both regions
// (then, else) are created empty.
func (b *Builder) If(cond *Value, types ...*Type) *Inst {
	// The instruction, its condition and its regions in one allocation
	// (five before): the lowerings guard partial chunks and edge tiles
	// with ifs.
	x := &struct {
		in        Inst
		cond      [1]*Value
		regions   [2]*Region
		then, els Region
	}{}
	in := &x.in
	in.Op = OpIf
	x.cond[0] = cond
	in.Operands = x.cond[:]
	if len(types) > 0 {
		in.Results = valueList(types, nil, in)
	}
	x.then.Kind, x.els.Kind = RegionInherit, RegionInherit
	in.Regions = x.regions[:0]
	in.AddRegion(&x.then)
	in.AddRegion(&x.els)
	return b.Insert(in)
}

// Parallel emits a parallel instruction with an empty SPMD region.
func (b *Builder) Parallel() *Inst {
	in := b.Arena.NewInst(OpParallel, nil)
	b.Arena.AddRegion(in, b.Arena.NewRegion(RegionSPMD))
	return b.Insert(in)
}
