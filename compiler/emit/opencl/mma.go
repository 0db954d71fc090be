package opencl

import (
	"fmt"

	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Matrix-engine layouts. On a target with mma.sync (nvidia), cooperative
// matrices that meet only in mul_adds the engine executes are held in its
// fragment layout instead of rows-over-lanes: the matrix is a grid of
// blocks (16×16 for matrix_a, 16×8 for matrix_b and the accumulator), and
// lane l (group g = l/4, thread t = l mod 4) holds elements of each block
// at the positions the PTX ISA gives for mma.m16n8k16 with .row.col:
//
//	A  (8 per block): row g + 8·((i/2) mod 2), column 2t + (i mod 2) + 8·(i/4)
//	B  (4 per block): row 2t + (i mod 2) + 8·(i/2), column g
//	C  (4 per block): row g + 8·(i/2),         column 2t + (i mod 2)
//
// Element i of block b is slot b·per + i; blocks are numbered column-major
// over the block grid. Element-wise instructions do not care about the
// layout; loads, stores and mul_add do.

// fragment describes the fragment layout of one matrix use.
type fragment struct {
	br, bc, per int
	row, col    func(i string) string // block-relative position of element i of this lane
}

var fragments = map[ir.MatrixUse]fragment{
	ir.MatrixA: {16, 16, 8,
		func(i string) string { return fmt.Sprintf("(tl_lane >> 2) + 8 * ((%s >> 1) & 1)", i) },
		func(i string) string { return fmt.Sprintf("2 * (tl_lane & 3) + (%s & 1) + 8 * (%s >> 2)", i, i) }},
	ir.MatrixB: {16, 8, 4,
		func(i string) string { return fmt.Sprintf("2 * (tl_lane & 3) + (%s & 1) + 8 * (%s >> 1)", i, i) },
		func(string) string { return "(tl_lane >> 2)" }},
	ir.MatrixAcc: {16, 8, 4,
		func(i string) string { return fmt.Sprintf("(tl_lane >> 2) + 8 * (%s >> 1)", i) },
		func(i string) string { return fmt.Sprintf("2 * (tl_lane & 3) + (%s & 1)", i) }},
}

// mmaEligible reports whether the target's matrix engine executes mul_add
// in: f16 (or bf16) inputs into f32, shapes multiples of m16n8k16.
func mmaEligible(t *target.Target, sgs int, in *ir.Inst) bool {
	a, b, c := in.Operands[0].Type, in.Operands[1].Type, in.Operands[2].Type
	for _, s := range t.MMA {
		if sgs == 32 && a.Elem().String() == s.In && b.Elem() == a.Elem() &&
			c.Elem().String() == s.Acc && in.Result().Type == c &&
			a.Rows()%int64(s.M) == 0 && a.Cols()%int64(s.K) == 0 && b.Cols()%int64(s.N) == 0 {
			return true
		}
	}
	return false
}

// fragmentValues decides which coopmatrix values of f use the fragment
// layout. Values that must share a layout (through loops, ifs, element-wise
// operations and mul_add's accumulator) form classes; a class uses the
// fragment layout when some eligible mul_add uses it and no ineligible
// mul_add does.
func fragmentValues(f *ir.Func, t *target.Target, sgs int) map[*ir.Value]bool {
	if len(t.MMA) == 0 {
		return nil
	}
	uf := unionFind{}
	var mulAdds []*ir.Inst
	f.Body.Walk(func(in *ir.Inst) bool {
		switch in.Op {
		case ir.OpFor:
			_, _, _, init := in.LoopBounds()
			for i, r := range in.Results {
				uf.union(r, init[i])
				uf.union(r, in.Body().Args[i+1])
			}
		case ir.OpYield:
			if p := in.Parent.Parent; p != nil && (p.Op == ir.OpFor || p.Op == ir.OpIf) {
				for i, v := range in.Operands {
					uf.union(v, p.Results[i])
				}
			}
		case ir.OpArith, ir.OpArithUnary, ir.OpCast, ir.OpCoopMatrixScale:
			if r := in.Result(); r.Type.Kind() == ir.KindCoopmatrix {
				for _, v := range in.Operands {
					if v.Type.Kind() == ir.KindCoopmatrix {
						uf.union(r, v)
					}
				}
			}
		case ir.OpCoopMatrixMulAdd:
			uf.union(in.Result(), in.Operands[2])
			mulAdds = append(mulAdds, in)
		}
		return true
	})
	want, veto := map[*ir.Value]bool{}, map[*ir.Value]bool{}
	for _, in := range mulAdds {
		ok := mmaEligible(t, sgs, in)
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
	out := map[*ir.Value]bool{}
	for v := range uf.parent {
		if r := uf.find(v); want[r] && !veto[r] {
			out[v] = true
		}
	}
	return out
}

type unionFind struct{ parent map[*ir.Value]*ir.Value }

func (u *unionFind) find(v *ir.Value) *ir.Value {
	if u.parent == nil {
		u.parent = map[*ir.Value]*ir.Value{}
	}
	p, ok := u.parent[v]
	if !ok {
		u.parent[v] = v
		return v
	}
	if p == v {
		return v
	}
	r := u.find(p)
	u.parent[v] = r
	return r
}

func (u *unionFind) union(a, b *ir.Value) { u.parent[u.find(a)] = u.find(b) }

// mmaMulAdd writes D = A·B + C as a grid of mma.sync.m16n8k16 calls on
// the fragments.
func (e *fn) mmaMulAdd(in *ir.Inst) {
	av, bv, cv := in.Operands[0], in.Operands[1], in.Operands[2]
	a, b, c := e.value(av), e.value(bv), e.value(cv)
	bm := int(cv.Type.Rows()) / 16
	bk := int(av.Type.Cols()) / 16
	bn := int(cv.Type.Cols()) / 8
	h := e.u.helpers.mma(av.Type.Elem().String())
	acc := e.fresh("acc")
	typ, _ := e.coopType(cv)
	e.line("%s %s = %s;", typ, acc, c)
	for ni := range bn {
		for mi := range bm {
			for ki := range bk {
				e.line("%s(&%s.v[%d], &%s.v[%d], &%s.v[%d]);", h,
					acc, (mi+ni*bm)*4, a, (mi+ki*bm)*8, b, (ki+ni*bk)*4)
			}
		}
	}
	e.names[in.Result()] = acc
}

// mma returns the helper that issues one mma.sync.m16n8k16 on fragments
// held as floats (f16/bf16 values are packed two per 32-bit register).
func (h *helperSet) mma(in string) string {
	name := "tl_mma_m16n8k16_" + in
	pack := "tl_pack_half2"
	if in == "f16" {
		h.add(pack, `static inline uint tl_pack_half2(float lo, float hi) {
    ushort b[2];
    vstore_half_rte(lo, 0, (private half*)b);
    vstore_half_rte(hi, 1, (private half*)b);
    return (uint)b[0] | ((uint)b[1] << 16);
}`)
	}
	if in == "bf16" {
		pack = "tl_pack_bf162"
		h.bf16Store()
		h.add(pack, `static inline uint tl_pack_bf162(float lo, float hi) {
    return (uint)tl_f32_to_bf16(lo) | ((uint)tl_f32_to_bf16(hi) << 16);
}`)
	}
	return h.add(name, fmt.Sprintf(`static inline void %[1]s(private float* d, private const float* a, private const float* b) {
    const uint a0 = %[2]s(a[0], a[1]), a1 = %[2]s(a[2], a[3]), a2 = %[2]s(a[4], a[5]), a3 = %[2]s(a[6], a[7]);
    const uint b0 = %[2]s(b[0], b[1]), b1 = %[2]s(b[2], b[3]);
    __asm__ volatile ("mma.sync.aligned.m16n8k16.row.col.f32.%[3]s.%[3]s.f32 {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}`, name, pack, in))
}
