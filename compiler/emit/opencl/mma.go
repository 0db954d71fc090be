package opencl

import (
	"fmt"
	"slices"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Matrix-engine layouts. On a target with a matrix engine (mma.sync on
// nvidia, DPAS on Intel GPUs with cl_intel_subgroup_matrix_multiply_accumulate),
// cooperative matrices that meet only in mul_adds the engine executes are
// held in its fragment layout instead of rows-over-lanes: the matrix is a
// grid of blocks, and each lane holds "per" elements of every block at the
// positions the engine defines. Element i of block b is slot b·per + i;
// blocks are numbered column-major over the block grid. Element-wise
// instructions do not care about the layout; loads, stores and mul_add do.
//
// mma.sync.m16n8k16 .row.col (PTX ISA; lane l: group g = l/4, thread t = l mod 4):
//
//	A 16×16 (8 per lane): row g + 8·((i/2) mod 2), column 2t + (i mod 2) + 8·(i/4)
//	B 16×8  (4 per lane): row 2t + (i mod 2) + 8·(i/2), column g
//	C 16×8  (4 per lane): row g + 8·(i/2),         column 2t + (i mod 2)
//
// DPAS: target.DPASLayout (M = 8, K = 16, N = subgroup size; vector
// component = row for A and C, lane = column for B and C).

// fragment describes the fragment layout of one matrix use.
type fragment struct {
	br, bc, per int
	// row and col are the block-relative position of this lane's element
	// tl_i, spelled once (every fragment access writes them).
	row, col string
}

// fragments are the fragment layouts of an engine, by matrix use.
type fragments [ir.MatrixAcc + 1]fragment

var ptxFragments = fragments{
	ir.MatrixA:   {16, 16, 8, "(tl_lane >> 2) + 8 * ((tl_i >> 1) & 1)", "2 * (tl_lane & 3) + (tl_i & 1) + 8 * (tl_i >> 2)"},
	ir.MatrixB:   {16, 8, 4, "2 * (tl_lane & 3) + (tl_i & 1) + 8 * (tl_i >> 1)", "(tl_lane >> 2)"},
	ir.MatrixAcc: {16, 8, 4, "(tl_lane >> 2) + 8 * (tl_i >> 1)", "2 * (tl_lane & 3) + (tl_i & 1)"},
}

func dpasFragments(sgs int) fragments {
	a, b, acc := target.DPASLayout(sgs)
	return fragments{ir.MatrixA: dpasFragment(a), ir.MatrixB: dpasFragment(b), ir.MatrixAcc: dpasFragment(acc)}
}

// dpasFragment spells the position of element tl_i of a DPAS block (1 or 2
// columns a lane).
func dpasFragment(f target.DPASFragment) fragment {
	if f.Width == 2 {
		return fragment{f.Rows, f.Cols, f.Per, "(tl_i >> 1)", "2 * tl_lane + (tl_i & 1)"}
	}
	return fragment{f.Rows, f.Cols, f.Per, "tl_i", "tl_lane"}
}

// mma.sync.m16n8k8 with tf32 inputs (PTX ISA; g = lane/4, t = lane mod 4):
//
//	A 16×8 (4 per lane): row g + 8·(i mod 2), column t + 4·(i/2)
//	B 8×8  (2 per lane): row t + 4·i,         column g
//	C 16×8 (4 per lane): as for m16n8k16
var tf32Fragments = fragments{
	ir.MatrixA:   {16, 8, 4, "(tl_lane >> 2) + 8 * (tl_i & 1)", "(tl_lane & 3) + 4 * (tl_i >> 1)"},
	ir.MatrixB:   {8, 8, 2, "(tl_lane & 3) + 4 * tl_i", "(tl_lane >> 2)"},
	ir.MatrixAcc: ptxFragments[ir.MatrixAcc],
}

// fragmentsOf returns the fragment layouts of an engine shape.
func fragmentsOf(s *target.MatrixShape) fragments {
	switch {
	case s.Engine == target.EngineDPAS:
		return dpasFragments(s.SubgroupSize)
	case s.In == "f32":
		return tf32Fragments
	}
	return ptxFragments
}

// engineFor returns the matrix-engine shape that executes mul_add in at
// subgroup size sgs, or nil: f16/bf16 inputs into f32, shapes multiples of
// the engine's.
func engineFor(t *target.Target, sgs int, in *ir.Inst) *target.MatrixShape {
	a, b, c := in.Operands[0].Type, in.Operands[1].Type, in.Operands[2].Type
	for i := range t.MMA {
		s := &t.MMA[i]
		if sgs == s.SubgroupSize && a.Elem().String() == s.In && b.Elem() == a.Elem() &&
			c.Elem().String() == s.Acc && in.Result().Type == c &&
			a.Rows()%int64(s.M) == 0 && a.Cols()%int64(s.K) == 0 && b.Cols()%int64(s.N) == 0 {
			return s
		}
	}
	return nil
}

// coopValues are the coopmatrix values of a function and the
// instructions that define or use them, in program order: all that the
// layout analyses below look at (they join and judge coopmatrix values
// only). A GEMM kernel has a few dozen such instructions among a thousand
// of index arithmetic, and analyses walking them all were a tenth of
// writing its C. The values are numbered densely, so that the analyses
// keep their classes in slices.
type coopValues struct {
	insts []*ir.Inst
	vals  []*ir.Value        // by number
	num   ir.ValueMap[int32] // value -> number
	// flags and parents hold the analyses' tables by number (bools,
	// union-find parents), handed out by table and parents and recycled
	// from function to function.
	flags   []bool
	parents []int32
}

// collect makes c the coopmatrix values of f, reusing its tables (c is
// part of a program's workspace).
func (c *coopValues) collect(f *ir.Func) *coopValues {
	c.num.Reset(f.NumValues)
	if c.insts == nil {
		// Room for a GEMM kernel's few dozen, not grown append by append.
		c.insts, c.vals = make([]*ir.Inst, 0, 64), make([]*ir.Value, 0, 64)
	}
	c.insts, c.vals, c.flags, c.parents = c.insts[:0], c.vals[:0], c.flags[:0], c.parents[:0]
	f.Body.Walk(func(in *ir.Inst) bool {
		if slices.ContainsFunc(in.Operands, isCoop) || slices.ContainsFunc(in.Results, isCoop) {
			c.insts = append(c.insts, in)
			c.numberAll(in.Operands)
			c.numberAll(in.Results)
			if in.Op == ir.OpFor {
				c.numberAll(in.Body().Args)
			}
		}
		return true
	})
	return c
}

// numbersComponents reports whether an instruction reads or writes a
// work-item's components by number (extract, insert): the function then
// keeps the interleaved rows over lanes the language defines them by.
func (c *coopValues) numbersComponents() bool {
	return slices.ContainsFunc(c.insts, func(in *ir.Inst) bool {
		return in.Op == ir.OpCoopMatrixExtract || in.Op == ir.OpCoopMatrixInsert
	})
}

func (c *coopValues) numberAll(vs []*ir.Value) {
	for _, v := range vs {
		if isCoop(v) {
			c.number(v)
		}
	}
}

// number numbers v unless it has a number.
func (c *coopValues) number(v *ir.Value) {
	if _, ok := c.num.Get(v); !ok {
		c.num.Set(v, int32(len(c.vals)))
		c.vals = append(c.vals, v)
	}
}

func isCoop(v *ir.Value) bool { return v.Type.Kind() == ir.KindCoopmatrix }

// table returns a table of one false per value, by number.
func (c *coopValues) table() []bool {
	n := len(c.vals)
	if len(c.flags)+n > cap(c.flags) {
		// A fresh array: the tables handed out keep the old one.
		c.flags = make([]bool, 0, max(2*cap(c.flags), 8*n))
	}
	t := c.flags[len(c.flags) : len(c.flags)+n]
	c.flags = c.flags[:len(c.flags)+n]
	clear(t)
	return t
}

// coopSet is a set of the values of a coopValues, a table by number.
type coopSet struct {
	c  *coopValues
	in []bool
}

// has reports whether v is in s; the zero coopSet is empty.
func (s coopSet) has(v *ir.Value) bool {
	if s.in == nil {
		return false
	}
	n, ok := s.c.num.Get(v)
	return ok && s.in[n]
}

// unionFind joins the coopmatrix values of a coopValues into classes, by
// their numbers.
type unionFind struct {
	c      *coopValues
	parent []int32 // by number; a root is its own parent
}

func newUnionFind(c *coopValues) unionFind {
	n := len(c.vals)
	if len(c.parents)+n > cap(c.parents) {
		c.parents = make([]int32, 0, max(2*cap(c.parents), 4*n))
	}
	u := unionFind{c: c, parent: c.parents[len(c.parents) : len(c.parents)+n]}
	c.parents = c.parents[:len(c.parents)+n]
	for n := range u.parent {
		u.parent[n] = int32(n)
	}
	return u
}

// find returns the number of the root of v's class. v is one of the
// values collect numbered (as all the analyses ask about).
func (u *unionFind) find(v *ir.Value) int32 {
	n, ok := u.c.num.Get(v)
	if !ok {
		panic(fmt.Sprintf("opencl: coopmatrix %%%s outside the layout analysis", v.Name))
	}
	return u.root(n)
}

func (u *unionFind) root(n int32) int32 {
	for u.parent[n] != n {
		u.parent[n] = u.parent[u.parent[n]] // path halving
		n = u.parent[n]
	}
	return n
}

func (u *unionFind) union(a, b *ir.Value) {
	ra := u.find(a)
	u.parent[ra] = u.find(b)
}

// joinCarried joins the coopmatrix values a for or an if carries (a
// loop's initial values, body arguments and results, a yield's operands
// and the results they become) into one class each.
func joinCarried(in *ir.Inst, uf unionFind) {
	switch in.Op {
	case ir.OpFor:
		_, _, _, init := in.LoopBounds()
		for i, r := range in.Results {
			if isCoop(r) {
				uf.union(r, init[i])
				uf.union(r, in.Body().Args[i+1])
			}
		}
	case ir.OpYield:
		if p := in.Parent.Parent; p != nil && (p.Op == ir.OpFor || p.Op == ir.OpIf) {
			for i, v := range in.Operands {
				if isCoop(v) {
					uf.union(v, p.Results[i])
				}
			}
		}
	}
}

// FragmentLayout is the layout decision this writer makes for f at
// subgroup size sgs on target t: held reports whether a coopmatrix value
// is held in the fragment layout of engine (nil: no value is). The SPIR-V
// writer asks it too, so that both back ends call the matrix engine for
// the same mul_adds.
func FragmentLayout(f *ir.Func, t *target.Target, sgs int) (held func(*ir.Value) bool, engine *target.MatrixShape) {
	var c coopValues
	set, engine := fragmentValues(c.collect(f), t, sgs)
	return set.has, engine
}

// RowsLayout is the layout decision this writer makes for f's coopmatrix
// values outside the fragments (FragmentLayout) at subgroup size sgs on
// target t: whether a lane's rows are blocked (else interleaved), and
// which B operands every lane holds whole (replicatedValues). The PTX
// writer asks it, so that its kernels hold the matrices as these do.
func RowsLayout(f *ir.Func, t *target.Target, sgs int) (replicated func(*ir.Value) bool, blocked bool) {
	var c coopValues
	c.collect(f)
	frag, _ := fragmentValues(&c, t, sgs)
	return replicatedValues(&c, frag, sgs).has, t.BlockedRows && !c.numbersComponents()
}

// fragmentValues decides which coopmatrix values use the fragment layout.
// Values that must share a layout (through loops, ifs, element-wise
// operations and mul_add's accumulator) form classes; a class uses the
// fragment layout when some eligible mul_add uses it and no ineligible
// mul_add does.
func fragmentValues(c *coopValues, t *target.Target, sgs int) (coopSet, *target.MatrixShape) {
	if len(t.MMA) == 0 {
		return coopSet{}, nil
	}
	uf := newUnionFind(c)
	var mulAdds []*ir.Inst
	var pinned []*ir.Value // values that must keep the row-per-lane layout
	for _, in := range c.insts {
		pinned = append(pinned, rowLayoutOnly(in, uf)...)
		joinCarried(in, uf)
		switch in.Op {
		case ir.OpArith, ir.OpArithUnary, ir.OpCast, ir.OpCoopMatrixScale:
			if r := in.Result(); isCoop(r) {
				for _, v := range in.Operands {
					if isCoop(v) {
						uf.union(r, v)
					}
				}
			}
		case ir.OpCoopMatrixMulAdd:
			uf.union(in.Result(), in.Operands[2])
			mulAdds = append(mulAdds, in)
		}
	}
	want, veto := c.table(), c.table() // by root
	for _, v := range pinned {
		veto[uf.find(v)] = true
	}
	var engine *target.MatrixShape
	for _, in := range mulAdds {
		s := engineFor(t, sgs, in)
		ok := s != nil
		if ok && engine == nil {
			engine = s // every engine shape of a target at one subgroup size shares the layout
		}
		for _, v := range in.Operands {
			if ok {
				want[uf.find(v)] = true
			} else {
				veto[uf.find(v)] = true
			}
		}
	}
	// A class is only as good as every mul_add touching it: drop classes
	// until every mul_add has all or none of its operands in fragments.
	for changed := true; changed; {
		changed = false
		for _, in := range mulAdds {
			a, b, c := uf.find(in.Operands[0]), uf.find(in.Operands[1]), uf.find(in.Operands[2])
			all := want[a] && !veto[a] && want[b] && !veto[b] && want[c] && !veto[c]
			if !all && (want[a] && !veto[a] || want[b] && !veto[b] || want[c] && !veto[c]) {
				veto[a], veto[b], veto[c] = true, true, true
				changed = true
			}
		}
	}
	out := coopSet{c, c.table()}
	for n := range out.in {
		r := uf.root(int32(n))
		out.in[n] = want[r] && !veto[r]
	}
	return out, engine
}

// packedValues picks the fragment values held packed: 16-bit A and B
// fragments of mma.sync whose class only loads them and feeds them to
// mul_add (through loops and ifs). They live as the engine takes them, two
// elements per 32-bit register, so loading (ldmatrix, or the bits from
// memory) and multiplying never convert them to float and back.
func packedValues(c *coopValues, frag coopSet, engine *target.MatrixShape) coopSet {
	if engine == nil || engine.Engine != target.EnginePTX || engine.Emulated {
		return coopSet{}
	}
	return loadedForMulAdd(c, func(v *ir.Value) bool {
		t := v.Type
		elem := t.Elem().Kind()
		return frag.has(v) && (t.Use() == ir.MatrixA || t.Use() == ir.MatrixB) && (elem == ir.KindF16 || elem == ir.KindBF16)
	}, func(*ir.Inst) bool { return true }, func(i int) bool { return i == 0 || i == 1 })
}

// replicatedValues picks the B operands held whole by every lane: values
// outside the engine's fragments whose class only loads them from local
// memory and feeds them to mul_add as B, at subgroup sizes above one.
// Every lane then reads the piece itself, lanes reading one address at a
// time (a broadcast in local memory), instead of receiving each element by
// a shuffle from the lane holding its row inside the multiplication.
func replicatedValues(c *coopValues, frag coopSet, sgs int) coopSet {
	if sgs == 1 {
		return coopSet{}
	}
	return loadedForMulAdd(c, func(v *ir.Value) bool {
		return !frag.has(v) && v.Type.Use() == ir.MatrixB
	}, func(in *ir.Inst) bool { return in.Operands[0].Type.Space() == ir.Local }, func(i int) bool { return i == 1 })
}

// loadedForMulAdd returns the coopmatrix values whose class (values joined
// through loops and ifs) consists of candidates that are only defined by
// cooperative_matrix_load instructions loadOK admits and only used as the
// mul_add operands operandOK admits.
func loadedForMulAdd(c *coopValues, candidate func(*ir.Value) bool, loadOK func(*ir.Inst) bool, operandOK func(i int) bool) coopSet {
	uf := newUnionFind(c)
	for _, in := range c.insts {
		joinCarried(in, uf)
	}
	// Once the classes are complete, every definition and use must be one
	// the layout supports: state, by class root, is unseen, good so far or
	// bad.
	good, bad := c.table(), c.table() // by root; bad once bad
	touch := func(v *ir.Value, allowed bool) {
		if !isCoop(v) {
			return
		}
		r := uf.find(v)
		if !bad[r] && allowed && candidate(v) {
			good[r] = true
		} else {
			bad[r] = true
		}
	}
	for _, in := range c.insts {
		switch in.Op {
		case ir.OpFor, ir.OpYield, ir.OpIf:
			for _, v := range in.Operands {
				touch(v, true)
			}
			for _, v := range in.Results {
				touch(v, true)
			}
		case ir.OpCoopMatrixLoad:
			touch(in.Result(), loadOK(in))
		case ir.OpCoopMatrixMulAdd:
			for i, v := range in.Operands {
				touch(v, operandOK(i))
			}
			touch(in.Result(), false)
		default:
			for _, v := range in.Operands {
				touch(v, false)
			}
			for _, v := range in.Results {
				touch(v, false)
			}
		}
	}
	out := coopSet{c, c.table()}
	for n := range out.in {
		r := uf.root(int32(n))
		out.in[n] = good[r] && !bad[r]
	}
	return out
}

// mmaMulAdd writes D = A·B + C as a grid of matrix-engine calls on the
// fragments.
func (e *fn) mmaMulAdd(in *ir.Inst) {
	av, bv, cv := in.Operands[0], in.Operands[1], in.Operands[2]
	a, b, c := e.value(av), e.value(bv), e.value(cv)
	fa, fb, fc := e.frags[ir.MatrixA], e.frags[ir.MatrixB], e.frags[ir.MatrixAcc]
	bm := int(cv.Type.Rows()) / fc.br
	bk := int(av.Type.Cols()) / fa.bc
	bn := int(cv.Type.Cols()) / fc.bc
	in16 := av.Type.Elem()
	acc := e.fresh("acc")
	typ, _ := e.coopType(cv)
	e.put(typ, " ", acc, " = ", c, ";")
	defer func() { e.names.Set(in.Result(), acc) }()
	// block issues the engine call of one block of D from the fragment
	// elements starting at offC, offA and offB.
	var block func(offC, offA, offB int)
	switch {
	case e.engine.Emulated:
		block = func(offC, offA, offB int) { e.emulatedBlock(acc, offC, a, offA, b, offB) }
	case e.engine.Engine == target.EngineDPAS:
		block = func(offC, offA, offB int) { e.dpas(in16, acc, offC, a, offA, b, offB) }
	default:
		// A call of the helper per block: "H(&ACC.v[c], &A.v[a], &B.v[b]);",
		// its text between the offsets spelled once.
		packed := e.packed.has(av) && e.packed.has(bv)
		var h string
		if packed {
			h = e.u.helpers.mmaPacked(in16.String())
		} else {
			h = e.u.helpers.mma(in16.String())
		}
		call, toA, toB := e.text.join(h, "(&", acc, ".v["), e.text.join("], &", a, ".v["), e.text.join("], &", b, ".v[")
		block = func(offC, offA, offB int) {
			if packed { // two elements a register
				offA, offB = offA/2, offB/2
			}
			e.put(call, e.text.itoa(int64(offC)), toA, e.text.itoa(int64(offA)), toB, e.text.itoa(int64(offB)), "]);")
		}
	}
	for ni := range bn {
		for mi := range bm {
			for ki := range bk {
				block((mi+ni*bm)*fc.per, (mi+ki*bm)*fa.per, (ki+ni*bk)*fb.per)
			}
		}
	}
}

// mma returns the helper that issues one mma.sync on fragments held as
// floats: m16n8k16 with f16/bf16 values packed two per 32-bit register, or
// m16n8k8 with f32 values rounded to tf32 (cvt.rna, to nearest).
func (h *helperSet) mma(in string) string {
	if in == "f32" {
		return h.add("tl_mma_m16n8k8_tf32", `static inline uint tl_tf32(float x) {
    uint r;
    __asm__("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
static inline void tl_mma_m16n8k8_tf32(private float* d, private const float* a, private const float* b) {
    __asm__ volatile ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(tl_tf32(a[0])), "r"(tl_tf32(a[1])), "r"(tl_tf32(a[2])), "r"(tl_tf32(a[3])), "r"(tl_tf32(b[0])), "r"(tl_tf32(b[1])));
}`)
	}
	name := mmaName(in, false)
	pack := h.pack2(in, false)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline void %[1]s(private float* d, private const float* a, private const float* b) {
    const uint a0 = %[2]s(a[0], a[1]), a1 = %[2]s(a[2], a[3]), a2 = %[2]s(a[4], a[5]), a3 = %[2]s(a[6], a[7]);
    const uint b0 = %[2]s(b[0], b[1]), b1 = %[2]s(b[2], b[3]);
    __asm__ volatile ("mma.sync.aligned.m16n8k16.row.col.f32.%[3]s.%[3]s.f32 {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}`, name, pack, in)
	})
}

// mmaName is the name of the mma.sync.m16n8k16 helper for inputs of type
// in, taking them packed or not: spelled once for the types the engine
// takes (every mul_add asks).
func mmaName(in string, packed bool) string {
	if names, ok := mmaNames[in]; ok {
		return names[b2i(packed)]
	}
	if packed {
		return "tl_mma_m16n8k16_packed_" + in
	}
	return "tl_mma_m16n8k16_" + in
}

var mmaNames = map[string][2]string{
	"f16":  {"tl_mma_m16n8k16_f16", "tl_mma_m16n8k16_packed_f16"},
	"bf16": {"tl_mma_m16n8k16_bf16", "tl_mma_m16n8k16_packed_bf16"},
}

// mmaPacked returns the helper that issues one mma.sync.m16n8k16 on packed
// A and B fragments (two 16-bit values per register, as ldmatrix gives
// them).
func (h *helperSet) mmaPacked(in string) string {
	name := mmaName(in, true)
	return h.define(name, func() string {
		return fmt.Sprintf(`static inline void %[1]s(private float* d, private const uint* a, private const uint* b) {
    __asm__ volatile ("mma.sync.aligned.m16n8k16.row.col.f32.%[2]s.%[2]s.f32 {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}`, name, in)
	})
}

// pack2 returns the helper packing two f16 or bf16 values, held in
// registers of type half (native) or float, into the 32 bits of a uint.
func (h *helperSet) pack2(in string, native bool) string {
	switch {
	case in == "bf16":
		store := h.bf16Store()
		return h.define("tl_pack_bf162", func() string {
			return fmt.Sprintf(`static inline uint tl_pack_bf162(float lo, float hi) {
    return (uint)%[1]s(lo) | ((uint)%[1]s(hi) << 16);
}`, store)
		})
	case native:
		return h.add("tl_pack_half2_native", `static inline uint tl_pack_half2_native(half lo, half hi) {
    return as_uint((half2)(lo, hi));
}`)
	}
	return h.add("tl_pack_half2", `static inline uint tl_pack_half2(float lo, float hi) {
    ushort b[2];
    vstore_half_rte(lo, 0, (private half*)b);
    vstore_half_rte(hi, 1, (private half*)b);
    return (uint)b[0] | ((uint)b[1] << 16);
}`)
}

// dpas calls intel_sub_group_<in>_<in>_matrix_mad_k16 on one 8×16 A
// block, one 16×sgs B block and one 8×sgs accumulator block of fragments,
// starting at elements offA, offB and offC. At 16 lanes A passes one 16-bit
// value per row (short8), at 8 lanes two (int8); B always passes 16 values
// packed in pairs (int8). The call is written inline rather than through a
// helper taking the fragments by pointer: PoCL mishandles private arrays
// passed by pointer into functions with barriers, and on PoCL 5 the
// built-ins' test emulation (compiler/testdata/targets/dpas_emulation.h)
// exchanges values between lanes through barriers.
func (e *fn) dpas(in *ir.Type, acc string, offC int, a string, offA int, b string, offB int) {
	pack, t := e.u.helpers.pack2(in.String(), e.regType(in) == "half"), in.String()
	var room [8 + 8*12]string // the parts of the longest line, an operand's 8 calls: no allocation
	call := append(room[:0], "vstore8(intel_sub_group_", t, "_", t, "_matrix_mad_k16(")
	if e.launch.SubgroupSize == 16 {
		// One 16-bit value per row: the low half of a packed pair.
		call = packCalls(call, "(short8)(", "(short)", pack, a, offA, 1)
	} else {
		call = packCalls(call, "(int8)(", "", pack, a, offA, 2)
	}
	e.put(append(call, ",")...)
	e.put(append(packCalls(append(room[:0], "    "), "(int8)(", "", pack, b, offB, 2), ",")...)
	c := decimal(offC)
	e.put("    vload8(0, &", acc, ".v[", c, "])), 0, &", acc, ".v[", c, "]);")
}

// packCalls appends to parts a dpas operand: the C vector vec( of eight
// calls of pack, each after cast, on elements off+i·step and
// off+i·step+step-1 of fragment v (pairs with step 2, an element twice
// with step 1).
func packCalls(parts []string, vec, cast, pack, v string, off, step int) []string {
	parts = append(parts, vec)
	for i := range 8 {
		if i > 0 {
			parts = append(parts, ", ")
		}
		lo := off + i*step
		parts = append(parts, cast, pack, "(", v, ".v[", decimal(lo), "], ", v, ".v[", decimal(lo+step-1), "])")
	}
	return append(parts, ")")
}

// emulatedBlock multiplies one block of fragments the way the engine
// would, through local memory, written inline (PoCL mishandles private
// arrays passed by pointer into functions with barriers): every lane
// stores its A and B elements at their (row, column) in local tiles, and
// after a barrier computes its accumulator elements. It exercises the
// fragment layouts (loads, stores, block indexing) without the engine.
func (e *fn) emulatedBlock(acc string, offC int, a string, offA int, b string, offB int) {
	fa, fb, fc := e.frags[ir.MatrixA], e.frags[ir.MatrixB], e.frags[ir.MatrixAcc]
	if !e.tiles {
		e.tiles = true
		fmt.Fprintf(e.head, "    local float tl_sa[%d];\n    local float tl_sb[%d];\n", fa.br*fa.bc, fb.br*fb.bc)
	}
	k := fa.bc
	e.line("barrier(CLK_LOCAL_MEM_FENCE);")
	e.line("for (int tl_i = 0; tl_i < %d; ++tl_i) tl_sa[(%s) * %d + (%s)] = %s.v[%d + tl_i];", fa.per, fa.row, k, fa.col, a, offA)
	e.line("for (int tl_i = 0; tl_i < %d; ++tl_i) tl_sb[(%s) * %d + (%s)] = %s.v[%d + tl_i];", fb.per, fb.row, fb.bc, fb.col, b, offB)
	e.line("barrier(CLK_LOCAL_MEM_FENCE);")
	e.line("for (int tl_i = 0; tl_i < %d; ++tl_i) {", fc.per)
	e.indent++
	e.line("const int r = %s, c = %s;", fc.row, fc.col)
	e.line("float s = %s.v[%d + tl_i];", acc, offC)
	e.line("for (int k = 0; k < %d; ++k) s += tl_sa[r * %d + k] * tl_sb[k * %d + c];", k, k, fb.bc)
	e.line("%s.v[%d + tl_i] = s;", acc, offC)
	e.indent--
	e.line("}")
}
