package syntax

import (
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// The legacy dialect (the legacy language reference) is read into the same
// IR as the current one, which makes `tltune fmt --from legacy` an upgrade:
// the instructions below are parsed by their legacy productions, and what
// the current language spells differently is rewritten as it is read.
//
//   - Constants as operands become constant instructions before the
//     instruction (named after their value: %c16, %c1_0), typed by the
//     instruction's type annotation.
//   - Type annotations after the colon describe the operands; result types
//     follow from them (cmp gives bool, load the element or the group's
//     memref, the views what the view rules prescribe).
//   - Slices ":" and "off:?" and "?" in expand shapes, whose sizes the
//     current language has no spelling for, become static sizes where the
//     mode is static, else size and arithmetic instructions.
//   - alloca -> memref<...> allocates in the local address space; barrier
//     fences global and local memory; i1 is bool; a group type without a
//     size has a dynamic one; work_group_size(m, n) and subgroup_size(n)
//     become the function's attribute dictionary.

// legacyArg is an operand as written: a local identifier (v) or a constant
// (lit, with its token kind), which becomes a value once its type is known.
type legacyArg struct {
	v   *ir.Value
	tok token
	lit string
	pos ir.Pos
}

// legacyOperand parses an identifier or a constant.
func (p *parser) legacyOperand() legacyArg {
	a := legacyArg{pos: p.pos}
	switch {
	case p.tok == tLocal:
		a.v, _ = p.use()
		return a
	case p.tok == tInt, p.tok == tFloat, p.isWord("true"), p.isWord("false"):
		a.tok, a.lit = p.tok, p.lit
		p.next()
		return a
	}
	p.fail(p.pos, "expected a local identifier or a constant, found %s", p.describe())
	return a
}

// value returns the operand as a value of type t, emitting the constant
// instruction a constant operand becomes.
func (p *parser) legacyValue(a legacyArg, t *ir.Type) *ir.Value {
	if a.v != nil {
		return a.v
	}
	key := t.String() + " " + a.lit
	if v, ok := p.constants[key]; ok && p.lookup(v.Name) == v {
		return v // the same constant, still visible
	}
	c := ir.Constant{Kind: ir.ConstInt}
	switch {
	case a.tok == tWord:
		c = ir.Constant{Kind: ir.ConstBool, Bool: a.lit == "true"}
		if t != ir.Bool {
			c = ir.Constant{Kind: ir.ConstInt, Int: map[bool]int64{true: 1}[a.lit == "true"]}
		}
	case a.tok == tFloat || t.IsFloat() || t.IsComplex():
		f, err := strconv.ParseFloat(strings.TrimSuffix(a.lit, "."), 64)
		if strings.Contains(strings.ToLower(a.lit), "x") {
			f, err = strconv.ParseFloat(hexFloat(a.lit), 64)
		}
		if err != nil {
			p.errs.Add(a.pos, "constant %s out of the range of f64", a.lit)
		}
		c = ir.Constant{Kind: ir.ConstFloat, Float: f}
		if t.IsComplex() {
			c.Kind = ir.ConstComplex
		}
	case t == ir.Bool:
		n, _ := ir.ParseInt(a.lit)
		c = ir.Constant{Kind: ir.ConstBool, Bool: n != 0}
	default:
		n, ok := ir.ParseInt(a.lit)
		if !ok {
			p.errs.Add(a.pos, "integer constant %s out of range [-2^63+1, 2^63-1]", a.lit)
		}
		c.Int = n
	}
	in := ir.NewInst(ir.OpConstant, nil, t)
	in.Const = c
	in.Pos = a.pos
	v := in.Result()
	v.Name, v.Pos = p.constantName(a.lit), a.pos
	p.define(v)
	p.pending = append(p.pending, in)
	if p.constants == nil {
		p.constants = map[string]*ir.Value{}
	}
	p.constants[key] = v
	return v
}

func hexFloat(s string) string {
	if !strings.ContainsAny(s, "pP") {
		return s + "p0"
	}
	return s
}

// constantName is a fresh name for a constant spelled lit: c16, c1_0,
// cm2 (minus two).
func (p *parser) constantName(lit string) string {
	base := "c" + strings.NewReplacer("-", "m", "+", "", ".", "_").Replace(strings.ToLower(lit))
	if !isIdentName(base) {
		base = "c"
	}
	return p.freshName(base)
}

// freshName returns base, or base_N, unique against every name of the file
// and every name made up before.
func (p *parser) freshName(base string) string {
	if p.usedNames == nil {
		p.usedNames = localNames(p.sc.src)
	}
	name := base
	for i := 1; p.usedNames[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	p.usedNames[name] = true
	return name
}

func isIdentName(s string) bool {
	for _, c := range []byte(s) {
		if !isIdent(c) {
			return false
		}
	}
	return true
}

// localNames collects every local identifier of src, so that names made up
// for constants never collide with the file's own.
func localNames(src string) map[string]bool {
	var s scanner
	s.init(src, func(ir.Pos, string) {})
	names := map[string]bool{}
	for {
		tok, _, lit := s.next()
		if tok == tEOF {
			return names
		}
		if tok == tLocal {
			names[lit] = true
		}
	}
}

// legacyTypes parses ":" type {"," type}.
func (p *parser) legacyTypes(in *ir.Inst, n int, what string) []*ir.Type {
	p.expectOf(tColon, "before the types of the operands (", what, ")")
	in.Src().TypePos = p.pos
	var types []*ir.Type
	for i := 0; i < n; i++ {
		if i > 0 {
			p.expect(tComma, "between the operand types")
		}
		t, _ := p.typ()
		types = append(types, t)
	}
	return types
}

// annotated checks that operand a, a value, has the type the annotation
// says, and returns the operand as a value.
func (p *parser) annotated(a legacyArg, t *ir.Type) *ir.Value {
	v := p.legacyValue(a, t)
	if v.Type != t && !(v.Type.Kind() == ir.KindMemref && t.Kind() == ir.KindMemref &&
		ir.Memref(t.Elem(), t.Shape(), t.Stride(), v.Type.Space()) == v.Type) { // legacy types have no address space
		p.errs.Add(a.pos, "%%%s has type %s, but the type annotation says %s", v.Name, v.Type, t)
	}
	return v
}

// legacyOperands parses n comma-separated operands.
func (p *parser) legacyOperands(n int) []legacyArg {
	var out []legacyArg
	for i := 0; i < n; i++ {
		if i > 0 {
			p.expect(tComma, "between operands")
		}
		out = append(out, p.legacyOperand())
	}
	return out
}

func (p *parser) addOperand(in *ir.Inst, v *ir.Value, pos ir.Pos) {
	in.Operands = p.operands.append(in.Operands, v)
	in.Src().OperandPos = p.positions.append(in.Src().OperandPos, pos)
}

// legacyBody parses everything after the mnemonic of a legacy instruction
// and returns the result types; multi is true for if.
func (p *parser) legacyBody(in *ir.Inst, m *modifiers) (types []*ir.Type, multi bool) {
	switch m.name {
	case "arith":
		_, unary := ir.UnaryOpByName(m.peek())
		n := 2
		if unary {
			in.Op, in.Unary = ir.OpArithUnary, kind(m, "arithmetic operation", ir.UnaryOpByName)
			n = 1
		} else {
			in.Op, in.Arith = ir.OpArith, kind(m, "arithmetic operation", ir.ArithOpByName)
		}
		args := p.legacyOperands(n)
		t := p.legacyTypes(in, 1, "the operands' type")[0]
		for _, a := range args {
			p.addOperand(in, p.annotated(a, t), a.pos)
		}
		return []*ir.Type{t}, false
	case "cmp":
		in.Op, in.Cmp = ir.OpCmp, kind(m, "comparison", ir.CmpOpByName)
		args := p.legacyOperands(2)
		t := p.legacyTypes(in, 1, "the operands' type")[0]
		for _, a := range args {
			p.addOperand(in, p.annotated(a, t), a.pos)
		}
		return []*ir.Type{ir.Bool}, false
	case "cast":
		in.Op = ir.OpCast
		a := p.legacyOperand()
		from := p.legacyTypes(in, 1, "the operand's type")[0]
		p.expect(tArrow, "before the type cast to")
		to, _ := p.typ()
		x := p.annotated(a, from)
		switch {
		case from == ir.Bool && to != ir.Bool:
			return p.legacyFromBool(in, x, to, a.pos), true
		case to == ir.Bool && from != ir.Bool:
			// The legacy i1 is an integer; the current bool has no cast:
			// x != 0.
			in.Op, in.Cmp = ir.OpCmp, ir.Ne
			p.addOperand(in, x, a.pos)
			p.addOperand(in, p.legacyValue(legacyArg{tok: tInt, lit: "0", pos: a.pos}, from), a.pos)
		default:
			p.addOperand(in, x, a.pos)
		}
		return []*ir.Type{to}, false
	case "alloca":
		p.setOp(in, ir.OpAlloca)
		p.expect(tArrow, "after alloca")
		t, pos := p.typ()
		in.Src().TypePos = pos
		if t.Kind() == ir.KindMemref {
			t = ir.Memref(t.Elem(), t.Shape(), t.Stride(), ir.Local)
		}
		return []*ir.Type{t}, false
	case "group_id", "group_size":
		in.Op, in.Builtin = ir.OpBuiltin, map[string]ir.BuiltinKind{"group_id": ir.GroupID, "group_size": ir.GroupSize}[m.name]
		return []*ir.Type{ir.Index}, false
	case "load":
		in.Op = ir.OpLoad
		p.operand(in)
		p.legacyIndices(in)
		t := p.legacyTypes(in, 1, "the operand's type")[0]
		p.annotated(legacyArg{v: in.Operands[0], pos: in.Src().OperandPos[0]}, t)
		if t.Kind() != ir.KindMemref && t.Kind() != ir.KindGroup {
			p.fail(in.Src().TypePos, "load reads a memref or a group, found %s", t)
		}
		return []*ir.Type{t.Elem()}, false // the element, or the group's memref
	case "store":
		in.Op = ir.OpStore
		x := p.legacyOperand()
		p.expect(tComma, "between the value and the memref")
		mv, mpos := p.use()
		at := len(in.Operands)
		p.legacyIndices(in)
		t := p.legacyTypes(in, 1, "the memref's type")[0]
		if t.Kind() != ir.KindMemref {
			p.fail(in.Src().TypePos, "store writes to a memref, found %s", t)
		}
		p.annotated(legacyArg{v: mv, pos: mpos}, t)
		idx := append([]*ir.Value(nil), in.Operands[at:]...)
		ipos := append([]ir.Pos(nil), in.Src().OperandPos[at:]...)
		in.Operands, in.Src().OperandPos = in.Operands[:0], in.Src().OperandPos[:0]
		p.addOperand(in, p.legacyValue(x, t.Elem()), x.pos)
		p.addOperand(in, mv, mpos)
		in.Operands = append(in.Operands, idx...)
		in.Src().OperandPos = append(in.Src().OperandPos, ipos...)
		return nil, false
	case "size":
		p.sizeOperands(in)
		p.annotated(legacyArg{v: in.Operands[0], pos: in.Src().OperandPos[0]}, p.legacyTypes(in, 1, "the operand's type")[0])
		return []*ir.Type{ir.Index}, false
	case "subview":
		return []*ir.Type{p.legacySubview(in)}, false
	case "expand":
		return []*ir.Type{p.legacyExpand(in)}, false
	case "fuse":
		p.fuseOperands(in)
		t := p.legacyTypes(in, 1, "the operand's type")[0]
		p.annotated(legacyArg{v: in.Operands[0], pos: in.Src().OperandPos[0]}, t)
		return []*ir.Type{fuseType(t, in.Mode, in.ModeTo)}, false
	case "if":
		in.Op = ir.OpIf
		c := p.legacyOperand()
		p.addOperand(in, p.legacyValue(c, ir.Bool), c.pos)
		return p.ifTail(in), true
	case "yield":
		in.Op = ir.OpYield
		var args []legacyArg
		for p.tok != tColon {
			if len(args) > 0 {
				p.expect(tComma, "between yielded values")
			}
			args = append(args, p.legacyOperand())
		}
		types := p.legacyTypes(in, len(args), "the yielded values' types")
		for i, a := range args {
			p.addOperand(in, p.annotated(a, types[i]), a.pos)
		}
		return nil, false
	case "for", "foreach":
		return nil, p.legacyLoop(in, m.name)
	case "barrier":
		in.Op, in.Fence = ir.OpBarrier, ir.FenceGlobal|ir.FenceLocal
		return nil, false
	case "lifetime_stop":
		in.Op = ir.OpLifetimeStop
		p.operand(in)
		return nil, false
	case "gemm", "gemv", "ger", "hadamard_product", "axpby", "sum":
		p.legacyBLAS(in, m)
		return nil, false
	}
	p.unknownInstruction(in.OpPos(), m.name)
	return nil, false
}

// legacyIndices parses "[" index {"," index} "]" with constants as index
// constants.
func (p *parser) legacyIndices(in *ir.Inst) {
	p.list(tLBrack, tRBrack, "indices", func() {
		a := p.legacyOperand()
		p.addOperand(in, p.legacyValue(a, ir.Index), a.pos)
	})
}

// legacyBLAS parses gemm, gemv, ger, hadamard_product, axpby and sum: the
// modifiers, an optional comma (the grammar has one, its samples do not),
// the operands and their types. gemm with one transpose is gemv (the
// grammar's gemv rule spells it so).
func (p *parser) legacyBLAS(in *ir.Inst, m *modifiers) {
	name := m.name
	transposes := map[string]int{"gemm": 2, "gemv": 1, "axpby": 1, "sum": 1}[name]
	if name == "gemm" && m.n > 0 && (m.n == 1 || m.parts[1] == "atomic") {
		name, transposes = "gemv", 1
	}
	in.Op = map[string]ir.Op{"gemm": ir.OpGemm, "gemv": ir.OpGemv, "ger": ir.OpGer, "hadamard_product": ir.OpHadamardProduct,
		"axpby": ir.OpAxpby, "sum": ir.OpSum}[name]
	if transposes > 0 {
		in.TransA = m.transpose()
	}
	if transposes > 1 {
		in.TransB = m.transpose()
	}
	in.Atomic = m.atomic()
	p.accept(tComma)
	n := 5
	if name == "axpby" || name == "sum" {
		n = 4
	}
	args := p.legacyOperands(n)
	types := p.legacyTypes(in, n, "alpha, the tensors and beta")
	for i, a := range args {
		p.addOperand(in, p.annotated(a, types[i]), a.pos)
	}
}

// legacyLoop parses "for %i = from, to [, step] [: type] region" and
// "foreach %i = from, to [: type] region" (a one-dimensional foreach).
func (p *parser) legacyLoop(in *ir.Inst, name string) bool {
	iv := p.newName("loop variable")
	p.expect(tEqual, "after the loop variable")
	bounds := p.legacyOperands(2)
	if name == "for" && p.accept(tComma) {
		bounds = append(bounds, p.legacyOperand())
		in.HasStep = true
	}
	t, tpos := p.loopVarType()
	in.Src().TypePos = tpos
	for _, b := range bounds {
		p.addOperand(in, p.annotated(b, t), b.pos)
	}
	kind := ir.RegionInherit
	p.setOp(in, ir.OpFor)
	if name == "foreach" {
		in.Op, kind = ir.OpForeach, ir.RegionSPMD
	}
	body := in.AddRegion(&ir.Region{Kind: kind})
	p.openScope()
	p.regionArg(body, iv, t)
	p.regionBody(body)
	p.closeScope()
	return false
}

// legacySubview parses "%v[slices] : memref-type" and returns the result
// type. A slice is an index (the mode is dropped), "offset:size",
// "offset:?" (to the end of the mode) or ":" (the whole mode).
func (p *parser) legacySubview(in *ir.Inst) *ir.Type {
	p.setOp(in, ir.OpSubview)
	v, vpos := p.use()
	type slice struct {
		off, size legacyArg
		toEnd     bool // size "?" or the slice ":"
		pos       ir.Pos
	}
	var slices []slice
	p.list(tLBrack, tRBrack, "slices", func() {
		s := slice{pos: p.pos}
		if p.accept(tColon) {
			s.off, s.toEnd = legacyArg{tok: tInt, lit: "0", pos: s.pos}, true
		} else {
			s.off = p.legacyOperand()
			if p.accept(tColon) {
				if p.accept(tQuestion) {
					s.toEnd = true
				} else {
					s.size = p.legacyOperand()
				}
			} else {
				s.size = legacyArg{tok: tInt, lit: "0", pos: s.pos} // an index: the mode is dropped
			}
		}
		slices = append(slices, s)
	})
	t := p.legacyTypes(in, 1, "the operand's type")[0]
	p.annotated(legacyArg{v: v, pos: vpos}, t)
	if t.Kind() != ir.KindMemref || len(slices) != t.Order() {
		p.fail(in.OpPos(), "subview of %s needs one slice per mode of a memref", t)
	}
	p.addOperand(in, v, vpos)
	var shape, stride []int64
	for i, s := range slices {
		off := p.staticOrValue(in, s.off)
		size := ir.Dynamic
		switch {
		case s.toEnd && off != ir.Dynamic && t.Shape()[i] != ir.Dynamic:
			size = t.Shape()[i] - off
		case s.toEnd && off == 0:
			p.addOperand(in, p.legacyModeSize(v, i, t), s.pos)
		case s.toEnd:
			end := p.legacyModeSize(v, i, t)
			start := in.Operands[len(in.Operands)-1]
			if off != ir.Dynamic {
				start = p.legacyValue(legacyArg{tok: tInt, lit: strconv.FormatInt(off, 10), pos: s.pos}, ir.Index)
			}
			p.addOperand(in, p.legacyArith(ir.Sub, end, start, s.pos), s.pos)
		default:
			size = p.staticOrValue(in, s.size)
		}
		in.Offsets = append(in.Offsets, off)
		in.Sizes = append(in.Sizes, size)
		if size != 0 {
			shape = append(shape, size)
			stride = append(stride, t.Stride()[i])
		}
	}
	return ir.Memref(t.Elem(), shape, stride, t.Space())
}

// staticOrValue makes an index operand of a view: a constant is static, a
// value becomes the next operand (Dynamic).
func (p *parser) staticOrValue(in *ir.Inst, a legacyArg) int64 {
	if a.v == nil {
		n, ok := ir.ParseInt(a.lit)
		if !ok || a.tok != tInt {
			p.errs.Add(a.pos, "expected an integer constant or a local identifier, found %s", a.lit)
		}
		return n
	}
	if a.v.Type != ir.Index {
		p.errs.Add(a.pos, "%%%s has type %s; view indices and sizes are index", a.v.Name, a.v.Type)
	}
	p.addOperand(in, a.v, a.pos)
	return ir.Dynamic
}

// legacyModeSize emits "size %v[mode]" and returns its value.
func (p *parser) legacyModeSize(v *ir.Value, mode int, t *ir.Type) *ir.Value {
	if n := t.Shape()[mode]; n != ir.Dynamic {
		return p.legacyValue(legacyArg{tok: tInt, lit: strconv.FormatInt(n, 10), pos: v.Pos}, ir.Index)
	}
	in := ir.NewInst(ir.OpSize, []*ir.Value{v}, ir.Index)
	in.Mode = int64(mode)
	return p.legacyDerived(in, "size")
}

// legacyArith emits "arith.OP x, y : index" and returns its value.
func (p *parser) legacyArith(op ir.ArithOp, x, y *ir.Value, pos ir.Pos) *ir.Value {
	in := ir.NewInst(ir.OpArith, []*ir.Value{x, y}, ir.Index)
	in.Arith = op
	in.Pos = pos
	return p.legacyDerived(in, op.String())
}

// legacyDerived names and defines the result of an instruction the upgrade
// adds, and queues it before the instruction being read.
func (p *parser) legacyDerived(in *ir.Inst, hint string) *ir.Value {
	v := in.Result()
	v.Name = p.freshName(hint)
	p.define(v)
	p.pending = append(p.pending, in)
	return v
}

// legacyExpand parses "%v[mode -> shape] : memref-type" and returns the
// result type. A "?" in the shape is the mode size divided by the other
// entries: static where all are, else computed by instructions.
func (p *parser) legacyExpand(in *ir.Inst) *ir.Type {
	p.setOp(in, ir.OpExpand)
	v, vpos := p.use()
	p.expect(tLBrack, "after the expand operand")
	p.mode(in)
	p.expect(tArrow, "after the expanded mode")
	entry := func() extent {
		pos := p.pos
		switch p.tok {
		case tQuestion:
			p.next()
			return extent{n: ir.Dynamic, pos: pos}
		case tLocal:
			u, _ := p.use()
			return extent{n: ir.Dynamic, v: u, pos: pos}
		}
		return extent{n: p.integer(), pos: pos}
	}
	exts := []extent{entry()}
	if p.tok == tWord && p.lit[0] == 'x' {
		exts = append(exts, p.xTail(p.lit, p.pos, entry)...)
	}
	p.expect(tRBrack, "to close the expand shape")
	t := p.legacyTypes(in, 1, "the operand's type")[0]
	p.annotated(legacyArg{v: v, pos: vpos}, t)
	mode := int(in.Mode)
	if t.Kind() != ir.KindMemref || mode < 0 || mode >= t.Order() || len(exts) < 2 {
		p.fail(in.OpPos(), "expand needs a mode of a memref and an expand shape of at least two sizes")
	}
	p.addOperand(in, v, vpos)
	for i, e := range exts {
		switch {
		case e.v != nil:
			p.addOperand(in, e.v, e.pos)
			in.Static = append(in.Static, ir.Dynamic)
		case e.n == ir.Dynamic:
			in.Static = append(in.Static, p.legacyUnknownExtent(in, v, t, mode, exts, i))
		default:
			in.Static = append(in.Static, e.n)
		}
	}
	return expandType(t, mode, in.Static)
}

// legacyUnknownExtent resolves the "?" at index unknown of an expand
// shape: the mode size over the product of the other entries.
func (p *parser) legacyUnknownExtent(in *ir.Inst, v *ir.Value, t *ir.Type, mode int, exts []extent, unknown int) int64 {
	static, dynamic := int64(1), false
	for i, e := range exts {
		switch {
		case i == unknown:
		case e.v != nil:
			dynamic = true
		case e.n != ir.Dynamic:
			static *= max(e.n, 1)
		}
	}
	if size := t.Shape()[mode]; size != ir.Dynamic && !dynamic {
		return size / static
	}
	pos := exts[unknown].pos
	q := p.legacyModeSize(v, mode, t)
	for i, e := range exts {
		switch {
		case i == unknown || e.v == nil && e.n == ir.Dynamic:
		case e.v != nil:
			q = p.legacyArith(ir.Div, q, e.v, pos)
		default:
			q = p.legacyArith(ir.Div, q, p.legacyValue(legacyArg{tok: tInt, lit: strconv.FormatInt(e.n, 10), pos: pos}, ir.Index), pos)
		}
	}
	p.addOperand(in, q, pos)
	return ir.Dynamic
}

// expandType is the type expand gives mode of t with the expand shape
// (Dynamic entries dynamic): the mode replaced by the shape, with the
// canonical strides of the new modes.
func expandType(t *ir.Type, mode int, shape []int64) *ir.Type {
	sh := append(append(append([]int64{}, t.Shape()[:mode]...), shape...), t.Shape()[mode+1:]...)
	st := append([]int64{}, t.Stride()[:mode]...)
	s := t.Stride()[mode]
	for _, e := range shape {
		st = append(st, s)
		if s != ir.Dynamic && e != ir.Dynamic {
			s *= e
		} else {
			s = ir.Dynamic
		}
	}
	st = append(st, t.Stride()[mode+1:]...)
	return ir.Memref(t.Elem(), sh, st, t.Space())
}

// fuseType is the type fuse gives modes from..to of t: their product, the
// first one's stride.
func fuseType(t *ir.Type, from, to int64) *ir.Type {
	if t.Kind() != ir.KindMemref || from < 0 || from >= to || to >= int64(t.Order()) {
		return t // the verifier reports it
	}
	n := int64(1)
	for _, s := range t.Shape()[from : to+1] {
		if s == ir.Dynamic || n == ir.Dynamic {
			n = ir.Dynamic
		} else {
			n *= s
		}
	}
	sh := append(append(append([]int64{}, t.Shape()[:from]...), n), t.Shape()[to+1:]...)
	st := append(append([]int64{}, t.Stride()[:from+1]...), t.Stride()[to+1:]...)
	return ir.Memref(t.Elem(), sh, st, t.Space())
}

// legacyFuncAttrs parses the attributes work_group_size(m, n) and
// subgroup_size(n) before a function's body.
func (p *parser) legacyFuncAttrs(f *ir.Func) {
	for p.isWord("work_group_size") || p.isWord("subgroup_size") {
		name, pos := p.lit, p.pos
		p.next()
		var vals []int64
		p.list(tLParen, tRParen, "attribute values", func() { vals = append(vals, p.integer()) })
		a := ir.IntArrayAttr(vals...)
		if name == ir.AttrSubgroupSize {
			if len(vals) != 1 {
				p.fail(pos, "subgroup_size takes one size")
			}
			a = ir.IntAttr(vals[0])
		} else if len(vals) != 2 {
			p.fail(pos, "work_group_size takes two sizes")
		}
		a.Pos = pos
		if _, dup := f.Attrs.Lookup(name); dup {
			p.errs.Add(pos, "attribute %s given twice", name)
		}
		f.Attrs = append(f.Attrs, ir.NamedAttr{Name: name, Value: a, Pos: pos})
	}
}

// legacyFromBool makes in, a cast of the legacy i1 x to integer or floating
// type t, an if that yields 1 or 0 (the current bool has no cast).
func (p *parser) legacyFromBool(in *ir.Inst, x *ir.Value, t *ir.Type, pos ir.Pos) []*ir.Type {
	one := p.legacyValue(legacyArg{tok: tInt, lit: "1", pos: pos}, t)
	zero := p.legacyValue(legacyArg{tok: tInt, lit: "0", pos: pos}, t)
	in.Op = ir.OpIf
	p.addOperand(in, x, pos)
	for _, v := range []*ir.Value{one, zero} {
		r := in.AddRegion(&ir.Region{Kind: ir.RegionInherit})
		ir.NewBuilder(r).Yield(v)
	}
	return []*ir.Type{t}
}
