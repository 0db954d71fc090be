package lower

import (
	"sync"

	"tltune/compiler/ir"
)

// gen wraps an ir.Builder with the index arithmetic the lowerings need.
// A lowering opens a generator for every region it fills; they come from
// the lowering's genArena, which recycles them (see getGens).
type gen struct {
	ir.Builder
	// indices are the index constants this generator appended, reused by
	// index: it appends, so they precede whatever it appends next. The
	// lowerings ask for the same few tile sizes and offsets again and
	// again, and each constant was an instruction to build, verify and
	// delete.
	indices []indexConst
	gens    *genArena // where at takes the generators of other regions

	// region is the region g fills. A generator that appends collects
	// its instructions in pending (its Builder's Region) and hands them
	// to region when the lowering ends (flush), in a list made to fit
	// them: grown by doubling as the instructions came, the lists of a
	// lowered GEMM's regions were a twentieth of the bytes its compile
	// allocated, most of it garbage at once.
	region  *ir.Region
	pending ir.Region
}

type indexConst struct {
	v     int64
	value *ir.Value
}

// maxIndexConsts bounds the constants a generator remembers (searched
// linearly).
const maxIndexConsts = 32

// genArena hands out the generators of one lowering. Generators are
// scratch: nothing of the lowered program points to them, so once the
// lowering is done they are recycled, with their constant and pending
// lists, for the next one (compiles of other configurations in the
// tuner). Each was an allocation of 176 bytes, a dozen per GEMM, and
// their lists grew by doubling past eight constants.
type genArena struct {
	gens []*gen // every generator made; gens[:used] are handed out
	used int
}

var genArenas = sync.Pool{New: func() any { return new(genArena) }}

// getGens returns an empty arena; putGens must hand it back when the
// lowering is done.
func getGens() *genArena { return genArenas.Get().(*genArena) }

// putGens releases a's generators and returns it to the pool.
func putGens(a *genArena) {
	a.release()
	genArenas.Put(a)
}

// release hands the instructions of a's generators to their regions and
// takes the generators back, emptied so that the pool keeps no program
// alive. None of them may be used after.
func (a *genArena) release() {
	for _, g := range a.gens[:a.used] {
		g.flush()
		clear(g.indices)
		*g = gen{indices: g.indices[:0], gens: a, pending: ir.Region{Insts: g.pending.Insts}}
	}
	a.used = 0
}

// next returns the arena's next generator, its fields but the lists zero.
func (a *genArena) next(r *ir.Region) *gen {
	if a.used == len(a.gens) {
		a.gens = append(a.gens, &gen{gens: a, indices: make([]indexConst, 0, 8)})
	}
	g := a.gens[a.used]
	a.used++
	g.region = r
	return g
}

// newGen returns a generator appending to r. Its instructions wait in its
// pending list, unless another generator of a fills r too: then both
// append to r itself, so that their instructions keep the order they
// came in.
func (a *genArena) newGen(r *ir.Region) *gen {
	g := a.next(r)
	g.Builder = ir.Builder{Region: &g.pending, At: -1}
	// Whoever reads the region of an instruction being built finds r's
	// kind and owner.
	g.pending.Kind, g.pending.Parent = r.Kind, r.Parent
	for _, o := range a.gens[:a.used-1] {
		if o.region == r {
			o.flush()
			g.flush()
		}
	}
	return g
}

// flush appends g's pending instructions to its region, which g appends
// to directly from then on.
func (g *gen) flush() {
	if g.Builder.Region != &g.pending {
		return
	}
	r := g.region
	for _, in := range g.pending.Insts {
		in.Parent = r
	}
	if len(g.pending.Insts) > 0 {
		r.Insts = append(r.Insts[:len(r.Insts):len(r.Insts)], g.pending.Insts...)
	}
	clear(g.pending.Insts)
	g.pending.Insts = g.pending.Insts[:0]
	g.Builder.Region = r
}

// at returns a generator appending to r (a nested region).
func (g *gen) at(r *ir.Region) *gen { return g.gens.newGen(r) }

// before returns a generator inserting before in, into in's region.
func (g *gen) before(in *ir.Inst) *gen {
	r := in.Parent
	c := g.gens.next(r)
	c.Builder = ir.Builder{Region: r, At: r.IndexOf(in)}
	return c
}

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
	in := ir.NewInst(ir.OpSize, []*ir.Value{m}, ir.Index)
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
	return g.Insert(ir.NewInst(op, operands, t))
}
