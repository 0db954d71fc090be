package lower

import "tltune/compiler/ir"

// gen wraps an ir.Builder with the index arithmetic the lowerings need.
// It holds the builder itself, not a pointer: a lowering opens a
// generator for every region it fills, and one allocation each is enough.
type gen struct {
	ir.Builder
	l *lowering // where g's instructions and nested generators come from
	// indices are the index constants this generator appended, reused by
	// index: it appends, so they precede whatever it appends next. The
	// lowerings ask for the same few tile sizes and offsets again and
	// again, and each constant was an instruction to build, verify and
	// delete.
	indices []indexConst
	// firstIndices holds the first few indices, in the generator's own
	// allocation: growing the list from nothing was an allocation at
	// every doubling, for every region a lowering fills.
	firstIndices [8]indexConst
}

type indexConst struct {
	v     int64
	value *ir.Value
}

// maxIndexConsts bounds the constants a generator remembers (searched
// linearly).
const maxIndexConsts = 32

// lowering is what the lowerings of one function share: the arena their
// instructions are carved from (the function's instructions live and die
// together) and the generators, a chunk at a time (a lowering opens one
// for every region it fills).
type lowering struct {
	arena ir.Arena
	gens  []gen // what is left of the last chunk
}

// genChunk is the number of generators allocated at once.
const genChunk = 8

// newGen returns a generator appending to r.
func (l *lowering) newGen(r *ir.Region) *gen {
	if len(l.gens) == 0 {
		l.gens = make([]gen, genChunk)
	}
	g := &l.gens[0]
	l.gens = l.gens[1:]
	g.Builder = ir.Builder{Region: r, At: -1, Arena: &l.arena}
	g.l = l
	g.indices = g.firstIndices[:0]
	return g
}

// at returns a generator appending to r (a nested region).
func (g *gen) at(r *ir.Region) *gen { return g.l.newGen(r) }

// index is the index constant v: one this generator appended before, or
// a new one. A generator that inserts (At set) does not reuse: its
// insertion point need not follow what it inserted.
func (g *gen) index(v int64) *ir.Value {
	if g.At >= 0 {
		return g.IntConst(v, ir.Index)
	}
	for _, c := range g.indices {
		if c.v == v {
			return c.value
		}
	}
	c := g.IntConst(v, ir.Index)
	if len(g.indices) < maxIndexConsts {
		g.indices = append(g.indices, indexConst{v, c})
	}
	return c
}

func (g *gen) add(x, y *ir.Value) *ir.Value { return g.Arith(ir.Add, x, y) }
func (g *gen) sub(x, y *ir.Value) *ir.Value { return g.Arith(ir.Sub, x, y) }
func (g *gen) mul(x, y *ir.Value) *ir.Value { return g.Arith(ir.Mul, x, y) }
func (g *gen) div(x, y *ir.Value) *ir.Value { return g.Arith(ir.Div, x, y) }
func (g *gen) rem(x, y *ir.Value) *ir.Value { return g.Arith(ir.Rem, x, y) }

// size returns mode i of memref m as an index value.
func (g *gen) size(m *ir.Value, i int) *ir.Value {
	if n := m.Type.Shape()[i]; n != ir.Dynamic {
		return g.index(n)
	}
	in := g.Arena.NewInst(ir.OpSize, []*ir.Value{m}, ir.Index)
	in.Mode = int64(i)
	return g.Insert(in).Result()
}

// linearID returns the work-item's linear id in the work-group,
// subgroup_id·sgs + subgroup_local_id, as an index.
func (g *gen) linearID(sgs int) *ir.Value {
	sg := g.Cast(g.Builtin(ir.SubgroupID), ir.Index)
	lane := g.Cast(g.Builtin(ir.SubgroupLocalID), ir.Index)
	return g.add(g.mul(sg, g.index(int64(sgs))), lane)
}

// splitPart is the work-group's place among the work-groups that share
// its batch entry (p.Split of them): builtin.group_id.y, as an index.
func (g *gen) splitPart() *ir.Value { return g.Cast(g.Builtin(ir.GroupIDY), ir.Index) }

// forLoop emits for iv = from, to, step with carried values and returns
// the instruction and a generator for its body.
func (g *gen) forLoop(from, to, step *ir.Value, init ...*ir.Value) (*ir.Inst, *gen) {
	in := g.For(from, to, step, init...)
	return in, g.at(in.Body())
}

// convert casts v to t unless it already has that type.
func (g *gen) convert(v *ir.Value, t *ir.Type) *ir.Value {
	if v.Type == t {
		return v
	}
	return g.Cast(v, t)
}

// constantOf returns the literal v was defined by, if any.
func constantOf(v *ir.Value) (ir.Constant, bool) {
	if v.Def == nil || v.Def.Op != ir.OpConstant {
		return ir.Constant{}, false
	}
	return v.Def.Const, true
}

// isLiteral reports whether v is defined by a constant instruction.
func isLiteral(v *ir.Value) bool {
	_, ok := constantOf(v)
	return ok
}

// isConstant reports whether v is the literal x (integer, float or complex
// with zero imaginary part).
func isConstant(v *ir.Value, x float64) bool {
	c, ok := constantOf(v)
	if !ok {
		return false
	}
	switch c.Kind {
	case ir.ConstInt:
		return float64(c.Int) == x
	case ir.ConstFloat:
		return c.Float == x
	case ir.ConstComplex:
		return c.Float == x && c.Imag == 0
	}
	return false
}

// zero returns the constant 0 of scalar type t.
func (g *gen) zero(t *ir.Type) *ir.Value {
	if t.IsInteger() {
		return g.IntConst(0, t)
	}
	if t.IsComplex() {
		return g.Constant(ir.Constant{Kind: ir.ConstComplex}, t)
	}
	return g.FloatConst(0, t)
}

// coopOp emits a cooperative-matrix instruction with one result of type t.
func (g *gen) coopOp(op ir.Op, t *ir.Type, operands ...*ir.Value) *ir.Inst {
	return g.Insert(g.Arena.NewInst(op, operands, t))
}
