package printer_test

import (
	"math"
	"math/rand/v2"
	"strconv"

	"tltune/compiler/ir"
)

// gen builds random programs for the round-trip property. They follow the
// IR's structural conventions (operand layouts, region arguments, every
// value named) but not the type rules: the printer and the parser must not
// care whether a program verifies.
type gen struct {
	r       *rand.Rand
	next    int
	visible []*ir.Value
}

func (g *gen) intn(n int) int { return g.r.IntN(n) }

func (g *gen) name() string {
	g.next++
	if g.intn(3) == 0 {
		return strconv.Itoa(g.next)
	}
	return "v" + strconv.Itoa(g.next) + []string{"", "_x", "Y"}[g.intn(3)]
}

func (g *gen) size() int64 {
	if g.intn(4) == 0 {
		return ir.Dynamic
	}
	return int64(g.intn(40))
}

var scalars = []*ir.Type{ir.I8, ir.I16, ir.I32, ir.I64, ir.Index, ir.BF16, ir.F16, ir.F32, ir.F64, ir.C32, ir.C64}

func (g *gen) scalar() *ir.Type { return scalars[g.intn(len(scalars))] }

func (g *gen) memref() *ir.Type {
	shape := make([]int64, g.intn(4))
	for i := range shape {
		shape[i] = g.size()
	}
	var stride []int64
	if g.intn(2) == 0 {
		stride = make([]int64, len(shape))
		for i := range stride {
			stride[i] = g.size()
		}
	}
	return ir.Memref(g.scalar(), shape, stride, ir.AddrSpace(g.intn(2)))
}

func (g *gen) typ() *ir.Type {
	switch g.intn(6) {
	case 0:
		return ir.Bool
	case 1, 2:
		return g.memref()
	case 3:
		return ir.Group(g.memref(), g.size(), []int64{0, 0, ir.Dynamic, 7}[g.intn(4)])
	case 4:
		return ir.Coopmatrix(g.scalar(), int64(1+g.intn(32)), int64(1+g.intn(32)), ir.MatrixUse(g.intn(3)))
	}
	return g.scalar()
}

func (g *gen) attr(depth int) ir.Attr {
	switch k := g.intn(5); {
	case k == 0:
		return ir.IntAttr(g.r.Int64N(math.MaxInt64) - g.r.Int64N(math.MaxInt64))
	case k == 1:
		return ir.BoolAttr(g.intn(2) == 0)
	case k == 2 || depth > 2:
		return ir.StringAttr([]string{"", "a b", "x.y", "{[,]}", "@%;"}[g.intn(5)])
	case k == 3:
		a := ir.Attr{Kind: ir.AttrArray, Array: []ir.Attr{}}
		for i := g.intn(3); i > 0; i-- {
			a.Array = append(a.Array, g.attr(depth+1))
		}
		return a
	}
	return ir.Attr{Kind: ir.AttrDict, Dict: g.attrs(depth + 1)}
}

func (g *gen) attrs(depth int) ir.Attrs {
	names := []string{ir.AttrAlignment, ir.AttrShapeGCD, ir.AttrStrideGCD, ir.AttrSubgroupSize,
		ir.AttrUnroll, ir.AttrWorkGroupSize, "custom", "with space", "dotted.name"}
	var d ir.Attrs
	for _, i := range g.r.Perm(len(names))[:g.intn(3)] {
		d = append(d, ir.NamedAttr{Name: names[i], Value: g.attr(depth)})
	}
	return d
}

func (g *gen) constant() ir.Constant {
	float := func() float64 {
		for {
			f := math.Float64frombits(g.r.Uint64())
			switch g.intn(3) {
			case 0:
				f = float64(g.intn(2000)-1000) / 8
			case 1:
				f = g.r.NormFloat64() * math.Pow(10, float64(g.intn(40)-20))
			}
			if !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		}
	}
	switch g.intn(4) {
	case 0:
		return ir.Constant{Kind: ir.ConstBool, Bool: g.intn(2) == 0}
	case 1:
		v := g.r.Int64()
		if v == math.MinInt64 || g.intn(2) == 0 {
			v = int64(g.intn(100) - 50)
		}
		return ir.Constant{Kind: ir.ConstInt, Int: v}
	case 2:
		return ir.Constant{Kind: ir.ConstFloat, Float: float()}
	}
	return ir.Constant{Kind: ir.ConstComplex, Float: float(), Imag: float()}
}

// comments returns zero to two comment lines (with their ';').
func (g *gen) comments() []string {
	var cs []string
	for i := g.intn(5) - 2; i > 0; i-- {
		cs = append(cs, []string{";", "; note", ";;x = 1 ; y", "; trailing %v @f {}"}[g.intn(4)])
	}
	return cs
}

func (g *gen) program() *ir.Program {
	p := &ir.Program{Comments: g.comments()}
	for i := 1 + g.intn(2); i > 0; i-- {
		g.visible = nil
		f := &ir.Func{Name: g.name(), Attrs: g.attrs(0), Body: &ir.Region{Kind: ir.RegionCollective}, Comments: g.comments()}
		for j := 1 + g.intn(4); j > 0; j-- {
			v := &ir.Value{Name: g.name(), Type: g.typ(), Index: int32(len(f.Params))}
			f.Params = append(f.Params, v)
			f.ParamAttrs = append(f.ParamAttrs, g.attrs(0))
			g.visible = append(g.visible, v)
		}
		g.region(f.Body, 0)
		p.Funcs = append(p.Funcs, f)
	}
	return p
}

func (g *gen) region(r *ir.Region, depth int) {
	mark := len(g.visible)
	for _, a := range r.Args {
		a.Name = g.name()
		g.visible = append(g.visible, a)
	}
	for i := g.intn(6); i > 0; i-- {
		in := g.inst(depth)
		src := &ir.Source{Comments: g.comments()}
		in.SetSource(src)
		if g.intn(4) == 0 {
			src.LineComment = "; at the end"
		}
		r.Append(in)
		for _, v := range in.Results {
			v.Name = g.name()
			g.visible = append(g.visible, v)
		}
	}
	r.EndComments = g.comments()
	g.visible = g.visible[:mark]
}

func (g *gen) value() *ir.Value { return g.visible[g.intn(len(g.visible))] }

func (g *gen) values(n int) []*ir.Value {
	vs := make([]*ir.Value, n)
	for i := range vs {
		vs[i] = g.value()
	}
	return vs
}

// staticOrDynamic returns n entries, each a constant or Dynamic; every
// Dynamic entry appends an operand to in.
func (g *gen) staticOrDynamic(in *ir.Inst, n int, allowZero bool) []int64 {
	out := make([]int64, n)
	for i := range out {
		switch {
		case g.intn(3) == 0:
			out[i] = ir.Dynamic
			in.Operands = append(in.Operands, g.value())
		case allowZero && g.intn(3) == 0:
			out[i] = 0
		default:
			out[i] = int64(g.intn(64)) - 4
		}
	}
	return out
}

var plainOps = []ir.Op{
	ir.OpAxpby, ir.OpCumsum, ir.OpGemm, ir.OpGemv, ir.OpGer, ir.OpHadamardProduct, ir.OpSum,
	ir.OpArith, ir.OpArithUnary, ir.OpBarrier, ir.OpBuiltin, ir.OpCast, ir.OpCmp, ir.OpConstant,
	ir.OpExpand, ir.OpFuse, ir.OpLifetimeStop, ir.OpLoad, ir.OpMath, ir.OpSize, ir.OpStore,
	ir.OpSubview, ir.OpYield, ir.OpAlloca, ir.OpCoopMatrixLoad, ir.OpCoopMatrixMulAdd,
	ir.OpCoopMatrixScale, ir.OpCoopMatrixStore, ir.OpSubgroupBroadcast, ir.OpSubgroupAdd,
	ir.OpSubgroupMax, ir.OpSubgroupMin,
}

func (g *gen) inst(depth int) *ir.Inst {
	if depth < 3 && g.intn(5) == 0 {
		return g.structured(depth)
	}
	op := plainOps[g.intn(len(plainOps))]
	in := &ir.Inst{}
	in.SetOp(op)
	operands, results := 0, 1
	switch op {
	case ir.OpAxpby, ir.OpSum:
		in.TransA, in.Atomic, operands, results = ir.Transpose(g.intn(2)), ir.AtomicMode(g.intn(2)), 4, 0
	case ir.OpCumsum:
		in.Mode, in.Atomic, operands, results = int64(g.intn(5)), ir.AtomicMode(g.intn(2)), 4, 0
	case ir.OpGemm:
		in.TransA, in.TransB, in.Atomic, operands, results = ir.Transpose(g.intn(2)), ir.Transpose(g.intn(2)), ir.AtomicMode(g.intn(2)), 5, 0
	case ir.OpGemv:
		in.TransA, in.Atomic, operands, results = ir.Transpose(g.intn(2)), ir.AtomicMode(g.intn(2)), 5, 0
	case ir.OpGer, ir.OpHadamardProduct:
		in.Atomic, operands, results = ir.AtomicMode(g.intn(2)), 5, 0
	case ir.OpArith:
		in.Arith, operands = ir.ArithOp(g.intn(12)), 2
	case ir.OpArithUnary:
		in.Unary, operands = ir.UnaryOp(g.intn(6)), 1
	case ir.OpCmp:
		in.Cmp, operands = ir.CmpOp(g.intn(6)), 2
	case ir.OpMath:
		in.Math, operands = ir.MathOp(g.intn(2)), 1
	case ir.OpBuiltin:
		in.Builtin = ir.BuiltinKind(g.intn(6))
	case ir.OpBarrier:
		in.Fence, results = ir.Fence(g.intn(4)), 0
	case ir.OpCast, ir.OpLifetimeStop:
		operands = 1
		if op == ir.OpLifetimeStop {
			results = 0
		}
	case ir.OpConstant:
		in.Const = g.constant()
	case ir.OpAlloca:
		in.Attrs = g.attrs(0)
	case ir.OpSize:
		in.Mode, operands = int64(g.intn(4)), 1
	case ir.OpFuse:
		in.Mode, in.ModeTo, operands = int64(g.intn(3)), int64(g.intn(4)), 1
	case ir.OpLoad:
		operands = 1 + g.intn(4)
	case ir.OpStore:
		in.Atomic, operands, results = ir.AtomicMode(g.intn(3)), 2+g.intn(3), 0
	case ir.OpYield:
		operands, results = g.intn(3), 0
	case ir.OpCoopMatrixLoad:
		in.TransA, in.Checked, operands = ir.Transpose(g.intn(2)), ir.Checked(g.intn(4)), 3
	case ir.OpCoopMatrixStore:
		in.Checked, in.Atomic, operands, results = ir.Checked(g.intn(4)), ir.AtomicMode(g.intn(3)), 4, 0
	case ir.OpCoopMatrixMulAdd:
		operands = 3
	case ir.OpCoopMatrixScale, ir.OpSubgroupBroadcast:
		operands = 2
	case ir.OpSubgroupAdd, ir.OpSubgroupMax, ir.OpSubgroupMin:
		in.Scan, operands = ir.ScanKind(g.intn(3)), 1
	case ir.OpExpand:
		in.Operands = []*ir.Value{g.value()}
		in.Mode = int64(g.intn(3))
		in.Static = g.staticOrDynamic(in, 2+g.intn(3), false)
	case ir.OpSubview:
		in.Operands = []*ir.Value{g.value()}
		n := g.intn(4)
		in.Offsets, in.Sizes = make([]int64, n), make([]int64, n)
		for i := 0; i < n; i++ {
			in.Offsets[i] = g.staticOrDynamic(in, 1, false)[0]
			in.Sizes[i] = g.staticOrDynamic(in, 1, true)[0]
		}
	}
	in.Operands = append(in.Operands, g.values(operands)...)
	if results == 1 {
		in.Results = []*ir.Value{{Type: g.typ(), Def: in}}
	}
	return in
}

// structured builds for, if, foreach or parallel with nested regions.
func (g *gen) structured(depth int) *ir.Inst {
	var in *ir.Inst
	switch g.intn(4) {
	case 0:
		in = &ir.Inst{Op: ir.OpParallel}
		g.region(in.AddRegion(ir.NewRegion(ir.RegionSPMD)), depth+1)
	case 1:
		n := 1 + g.intn(3)
		in = &ir.Inst{Op: ir.OpForeach, Operands: g.values(2 * n)}
		t := []*ir.Type{ir.Index, ir.I32, ir.I16}[g.intn(3)]
		types := make([]*ir.Type, n)
		for i := range types {
			types[i] = t
		}
		g.region(in.AddRegion(ir.NewRegion(ir.RegionSPMD, types...)), depth+1)
	case 2:
		in = &ir.Inst{HasStep: g.intn(2) == 0}
		in.SetOp(ir.OpFor)
		in.Attrs = g.attrs(0)
		in.Operands = g.values(2)
		if in.HasStep {
			in.Operands = append(in.Operands, g.value())
		}
		carried := g.intn(3)
		in.Operands = append(in.Operands, g.values(carried)...)
		args := []*ir.Type{[]*ir.Type{ir.Index, ir.I64}[g.intn(2)]}
		for i := 0; i < carried; i++ {
			t := g.typ()
			args = append(args, t)
			in.Results = append(in.Results, &ir.Value{Type: t, Def: in, Index: int32(i)})
		}
		g.region(in.AddRegion(ir.NewRegion(ir.RegionInherit, args...)), depth+1)
	default:
		in = &ir.Inst{Op: ir.OpIf, Operands: g.values(1)}
		for i := g.intn(3); i > 0; i-- {
			in.Results = append(in.Results, &ir.Value{Type: g.typ(), Def: in, Index: int32(len(in.Results))})
		}
		g.region(in.AddRegion(ir.NewRegion(ir.RegionInherit)), depth+1)
		g.region(in.AddRegion(ir.NewRegion(ir.RegionInherit)), depth+1)
	}
	return in
}
