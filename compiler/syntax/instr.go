package syntax

import (
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// modifiers walks the dot-separated parts of a mnemonic after the name
// ("gemm.n.t.atomic" → n, t, atomic) in the order the grammar fixes. It is
// a plain value with fixed arrays so that parsing an instruction does not
// allocate for it.
type modifiers struct {
	p     *parser
	name  string
	parts [maxModifiers]string
	cols  [maxModifiers]int32 // column of each part
	n     int                 // number of parts
	line  int32
	start int32 // column of the word
	end   int32 // column after the word, where a missing modifier belongs
	i     int   // next part to consume
}

// maxModifiers bounds the modifiers of a mnemonic; the longest valid one,
// "gemm.n.t.atomic", has three.
const maxModifiers = 4

func (m *modifiers) init(p *parser, word string, pos ir.Pos) {
	*m = modifiers{p: p, line: pos.Line, start: pos.Col}
	col := pos.Col
	for first := true; ; first = false {
		i := strings.IndexByte(word, '.')
		part := word
		if i >= 0 {
			part = word[:i]
		}
		switch {
		case first:
			m.name = part
		case m.n == maxModifiers:
			p.fail(ir.Pos{Line: pos.Line, Col: col - 1}, "too many modifiers on '%s'", m.name)
		default:
			m.parts[m.n], m.cols[m.n] = part, col
			m.n++
		}
		col += int32(len(part)) + 1
		if i < 0 {
			break
		}
		word = word[i+1:]
	}
	m.end = col - 1
}

func (m *modifiers) pos() ir.Pos {
	if m.i < m.n {
		return ir.Pos{Line: m.line, Col: m.cols[m.i] - 1} // at the '.'
	}
	return ir.Pos{Line: m.line, Col: m.end}
}

// take consumes the next modifier if it is one of opts and returns its index
// in opts, or -1.
func (m *modifiers) take(opts ...string) int {
	if m.i < m.n {
		for j, o := range opts {
			if m.parts[m.i] == o {
				m.i++
				return j
			}
		}
	}
	return -1
}

// kind consumes the mandatory kind modifier of "arith.add", "cmp.lt", ...
// and looks it up with byName.
func kind[T any](m *modifiers, what string, byName func(string) (T, bool)) T {
	if m.i < m.n {
		if k, ok := byName(m.parts[m.i]); ok {
			m.i++
			return k
		}
		m.p.fail(m.pos(), "unknown %s '%s.%s'", what, m.name, m.parts[m.i])
	}
	m.p.fail(m.pos(), "'%s' needs a modifier naming the %s, e.g. '%s.%s'", m.name, what, m.name, exampleModifier[m.name])
	panic("unreachable")
}

var exampleModifier = map[string]string{
	"arith": "add", "cmp": "lt", "math": "exp", "builtin": "group_id",
	"subgroup_add": "reduce", "subgroup_max": "reduce", "subgroup_min": "reduce",
	"async_copy": "8", "async_wait": "1",
}

func (m *modifiers) transpose() ir.Transpose {
	switch m.take("n", "t") {
	case 0:
		return ir.NoTrans
	case 1:
		return ir.Trans
	}
	m.p.fail(m.pos(), "'%s' needs a transpose modifier here ('.n' or '.t')", m.name)
	return 0
}

func (m *modifiers) atomic() ir.AtomicMode {
	if m.take("atomic") == 0 {
		return ir.Atomic
	}
	return ir.NotAtomic
}

func (m *modifiers) storeFlag() ir.AtomicMode {
	return ir.AtomicMode(m.take("atomic", "atomic_add", "atomic_max", "atomic_min") + 1)
}

// optionalTranspose consumes ".n" or ".t" if present (default .n).
func (m *modifiers) optionalTranspose() ir.Transpose {
	if m.take("n", "t") == 1 {
		return ir.Trans
	}
	return ir.NoTrans
}

// scopeSemantics consumes the optional memory scope and memory semantics of
// the released tinytc's atomic instructions.
func (m *modifiers) scopeSemantics(in *ir.Inst) {
	if i := m.take("work_group", "subgroup", "device", "cross_device"); i >= 0 {
		in.Scope = ir.MemoryScope(i)
	}
	if i := m.take("relaxed", "acquire", "release", "acquire_release", "sequentially_consistent"); i >= 0 {
		in.Semantics = ir.MemorySemantics(i)
	}
}

// updateOps are the operations of the atomic updates and of
// cooperative_matrix_reduce, by the suffix of their names.
var updateOps = map[string]ir.ArithOp{"add": ir.Add, "max": ir.Max, "min": ir.Min}

func (m *modifiers) checked() ir.Checked {
	return ir.Checked(m.take("rows_checked", "cols_checked", "both_checked") + 1)
}

// count consumes the mandatory numeric modifier of "async_copy.8" and
// "async_wait.1".
func (m *modifiers) count() int64 {
	if m.i < m.n {
		if n, err := strconv.ParseInt(m.parts[m.i], 10, 32); err == nil && n >= 0 {
			m.i++
			return n
		}
		m.p.fail(m.pos(), "'%s.%s': the modifier must be a count, e.g. '%s.%s'", m.name, m.parts[m.i], m.name, exampleModifier[m.name])
	}
	m.p.fail(m.pos(), "'%s' needs a count modifier, e.g. '%s.%s'", m.name, m.name, exampleModifier[m.name])
	panic("unreachable")
}

// done reports modifiers left over.
func (m *modifiers) done() {
	if m.i < m.n {
		m.p.fail(m.pos(), "unexpected modifier '.%s' on '%s'", m.parts[m.i], m.name)
	}
}

// opByName maps the mnemonics that share a parsing rule to their opcodes.
var opByName = map[string]ir.Op{
	"axpby": ir.OpAxpby, "sum": ir.OpSum, "ger": ir.OpGer, "hadamard_product": ir.OpHadamardProduct,
	"subgroup_add": ir.OpSubgroupAdd, "subgroup_max": ir.OpSubgroupMax, "subgroup_min": ir.OpSubgroupMin,
	"cooperative_matrix_scale": ir.OpCoopMatrixScale, "subgroup_broadcast": ir.OpSubgroupBroadcast,
	"subgroup_shuffle_xor": ir.OpSubgroupShuffleXor,
}

// resultName is a name on the left of "=".
type resultName struct {
	name string
	pos  ir.Pos
}

// instruction parses one instruction with its result names.
func (p *parser) instruction() *ir.Inst {
	in := p.insts.new()
	in.Pos = p.pos
	src := p.annotate(in)
	in.Operands, src.OperandPos = p.operands.make(4), p.positions.make(4)
	var names []resultName
	if p.tok == tLocal {
		for {
			names = append(names, resultName{p.lit, p.pos})
			p.next()
			if !p.accept(tComma) {
				break
			}
			if p.tok != tLocal {
				p.fail(p.pos, "expected local identifier after ',' in the result list, found %s", p.describe())
			}
		}
		p.expect(tEqual, "after the result names")
	}
	if p.tok != tWord {
		p.fail(p.pos, "expected instruction, found %s", p.describe())
	}
	src.OpPos = p.pos
	p.results = len(names)
	var m modifiers
	if p.dialect == Released {
		m = p.releasedModifiers()
	} else {
		m.init(p, p.lit, p.pos)
	}
	p.next()
	var types []*ir.Type
	var multi bool
	if p.dialect == Legacy {
		types, multi = p.legacyBody(in, &m)
	} else {
		types, multi = p.instructionBody(in, &m)
	}
	m.done()
	p.bindResults(in, m.name, names, types, multi)
	return in
}

// bindResults creates the results of in and defines their names. Value
// instructions need exactly one name; for and if take one name per result
// type or none at all.
func (p *parser) bindResults(in *ir.Inst, mnemonic string, names []resultName, types []*ir.Type, multi bool) {
	switch {
	case len(names) == len(types):
	case multi && len(names) == 0:
	case len(types) == 0:
		p.errs.Add(names[0].pos, "'%s' returns no value; remove the assignment", mnemonic)
		names = nil
	case !multi && len(names) == 0:
		p.errs.Add(in.OpPos(), "the value of '%s' must be assigned to a local identifier (%%name = %s ...)", mnemonic, mnemonic)
	default:
		p.errs.Add(names[0].pos, "'%s' returns %d values but %d names are given", mnemonic, len(types), len(names))
		names = nil
	}
	in.Results = p.operands.make(len(types))
	for i, t := range types {
		v := p.newValue("", t, in.OpPos())
		v.Def, v.Index = in, int32(i)
		if i < len(names) {
			v.Name, v.Pos = names[i].name, names[i].pos
			p.define(v)
		}
		in.Results = append(in.Results, v)
	}
}

// operand parses a local identifier operand and appends it to in.
func (p *parser) operand(in *ir.Inst) *ir.Value {
	v, pos := p.use()
	p.addOperand(in, v, pos)
	return v
}

// vectorStoreShape checks that the operand before the index list is the
// one memref of a vector_store: the IR tells the stored values from the
// memref by type (ir.Inst.VectorStoreOperands), so text where they are
// mixed up would print as another instruction.
func (p *parser) vectorStoreShape(in *ir.Inst) {
	last := len(in.Operands) - 1
	for i, v := range in.Operands {
		if v == nil || v.Type == nil {
			continue
		}
		isMemref := v.Type.Kind() == ir.KindMemref
		switch {
		case i == last && !isMemref:
			p.fail(in.Src().OperandPos[i], "vector_store: %%%s is %s, not the memref to store into", v.Name, v.Type)
		case i < last && isMemref:
			p.fail(in.Src().OperandPos[i], "vector_store: %%%s is a memref, not a value to store (vector_store %%x, %%y, %%m[...])", v.Name)
		}
	}
}

// operandList parses n comma-separated operands.
func (p *parser) operandList(in *ir.Inst, n int) {
	for i := 0; i < n; i++ {
		if i > 0 {
			p.expect(tComma, "between operands")
		}
		p.operand(in)
	}
}

// resultType parses ": TYPE" for a value instruction.
func (p *parser) resultType(in *ir.Inst) []*ir.Type {
	p.expect(tColon, "before the result type")
	t, pos := p.typ()
	in.Src().TypePos = pos
	return append(p.typeLists.make(1), t)
}

// indexList parses "[" [operands] "]".
func (p *parser) indexList(in *ir.Inst) {
	p.list(tLBrack, tRBrack, "indices", func() { p.operand(in) })
}

// mode parses an integer mode constant into in.Mode.
func (p *parser) mode(in *ir.Inst) {
	in.Src().ModePos = p.pos
	in.Mode = p.integer()
}

// instructionBody parses everything after the mnemonic and returns the
// result types; multi is true for for and if, whose results may be unnamed.
func (p *parser) instructionBody(in *ir.Inst, m *modifiers) (types []*ir.Type, multi bool) {
	switch m.name {
	case "alloca":
		p.setOp(in, ir.OpAlloca)
		if p.tok == tLBrace {
			in.Attrs = p.dictionary()
		}
		return p.resultType(in), false
	case "axpby", "sum":
		in.Op = opByName[m.name]
		in.TransA = m.transpose()
		in.Atomic = m.atomic()
		p.operandList(in, 4)
	case "gemm":
		in.Op = ir.OpGemm
		in.TransA, in.TransB = m.transpose(), m.transpose()
		in.Atomic = m.atomic()
		p.operandList(in, 5)
	case "gemv":
		in.Op = ir.OpGemv
		in.TransA = m.transpose()
		in.Atomic = m.atomic()
		p.operandList(in, 5)
	case "ger", "hadamard_product":
		in.Op = opByName[m.name]
		in.Atomic = m.atomic()
		p.operandList(in, 5)
	case "cumsum":
		p.setOp(in, ir.OpCumsum)
		in.Atomic = m.atomic()
		p.operandList(in, 2)
		p.expect(tComma, "between operands")
		p.mode(in)
		p.expect(tComma, "between operands")
		p.operandList(in, 2)
	case "foreach":
		in.Op = ir.OpForeach
		p.foreach(in)
	case "foreach_tile":
		p.setOp(in, ir.OpForeachTile)
		p.foreachTile(in)
	case "parallel":
		in.Op = ir.OpParallel
		p.regionBody(in.AddRegion(&ir.Region{Kind: ir.RegionSPMD}))
	case "for":
		p.setOp(in, ir.OpFor)
		return p.forLoop(in), true
	case "if":
		in.Op = ir.OpIf
		return p.ifElse(in), true
	case "arith":
		if _, unary := ir.UnaryOpByName(m.peek()); unary {
			in.Op = ir.OpArithUnary
			in.Unary = kind(m, "arithmetic operation", ir.UnaryOpByName)
			p.operandList(in, 1)
		} else {
			in.Op = ir.OpArith
			in.Arith = kind(m, "arithmetic operation", ir.ArithOpByName)
			p.operandList(in, 2)
		}
		return p.resultType(in), false
	case "cmp":
		in.Op = ir.OpCmp
		in.Cmp = kind(m, "comparison", ir.CmpOpByName)
		p.operandList(in, 2)
		return p.resultType(in), false
	case "math":
		in.Op = ir.OpMath
		in.Math = kind(m, "math function", ir.MathOpByName)
		p.operandList(in, 1)
		return p.resultType(in), false
	case "builtin":
		in.Op = ir.OpBuiltin
		in.Builtin = p.builtinKind(m)
		return p.resultType(in), false
	case "subgroup_add", "subgroup_max", "subgroup_min":
		in.Op = opByName[m.name]
		in.Scan = kind(m, "subgroup operation", ir.ScanKindByName)
		p.operandList(in, 1)
		return p.resultType(in), false
	case "barrier":
		in.Op = ir.OpBarrier
		if m.take("global") == 0 {
			in.Fence |= ir.FenceGlobal
		}
		if m.take("local") == 0 {
			in.Fence |= ir.FenceLocal
		}
	case "cast":
		in.Op = ir.OpCast
		p.operandList(in, 1)
		return p.resultType(in), false
	case "constant":
		p.setOp(in, ir.OpConstant)
		in.Const = p.constant()
		return p.resultType(in), false
	case "expand":
		p.setOp(in, ir.OpExpand)
		p.expand(in)
		return p.resultType(in), false
	case "fuse":
		p.fuseOperands(in)
		return p.resultType(in), false
	case "load":
		in.Op = ir.OpLoad
		p.operand(in)
		p.indexList(in)
		return p.resultType(in), false
	case "vector_load":
		in.Op = ir.OpVectorLoad
		p.operand(in)
		p.indexList(in)
		t := p.resultType(in)[0]
		types := make([]*ir.Type, max(p.results, 1)) // no names: bindResults says so
		for i := range types {
			types[i] = t
		}
		return types, false
	case "vector_store":
		in.Op = ir.OpVectorStore
		p.operand(in)
		if p.tok == tLBrack { // else it would print as a store of nothing
			p.missing("expected the values to store before the memref (vector_store %%x, %%y, %%m[...]), found %s", p.describe())
		}
		for p.tok != tLBrack {
			p.expect(tComma, "between the stored values and the memref")
			p.operand(in)
		}
		p.vectorStoreShape(in)
		p.indexList(in)
	case "async_copy":
		p.setOp(in, ir.OpAsyncCopy)
		in.Count = m.count()
		p.operand(in)
		p.indexList(in)
		p.expect(tComma, "between the source and the destination")
		p.operand(in)
		p.indexList(in)
		p.expect(tComma, "before the count of valid elements")
		p.operand(in)
	case "async_commit":
		in.Op = ir.OpAsyncCommit
	case "async_wait":
		p.setOp(in, ir.OpAsyncWait)
		in.Count = m.count()
	case "size":
		p.sizeOperands(in)
		return p.resultType(in), false
	case "store":
		in.Op = ir.OpStore
		in.Atomic = m.storeFlag()
		p.operandList(in, 2)
		p.indexList(in)
	case "subview":
		p.setOp(in, ir.OpSubview)
		p.subview(in)
		return p.resultType(in), false
	case "yield":
		in.Op = ir.OpYield
		p.list(tLParen, tRParen, "yielded values", func() { p.operand(in) })
	case "lifetime_stop":
		in.Op = ir.OpLifetimeStop
		p.operand(in)
	case "cooperative_matrix_load":
		in.Op = ir.OpCoopMatrixLoad
		in.TransA = m.transpose()
		in.Checked = m.checked()
		p.operand(in)
		p.coopIndices(in)
		return p.resultType(in), false
	case "cooperative_matrix_store":
		in.Op = ir.OpCoopMatrixStore
		in.TransA = m.optionalTranspose()
		in.Checked = m.checked()
		in.Atomic = m.storeFlag()
		p.operandList(in, 2)
		p.coopIndices(in)
	case "atomic_load", "atomic_store", "atomic_add", "atomic_max", "atomic_min", "associated",
		"cooperative_matrix_apply", "cooperative_matrix_construct", "cooperative_matrix_extract",
		"cooperative_matrix_insert", "cooperative_matrix_prefetch",
		"cooperative_matrix_atomic_load", "cooperative_matrix_atomic_store", "cooperative_matrix_atomic_add",
		"cooperative_matrix_atomic_max", "cooperative_matrix_atomic_min",
		"cooperative_matrix_reduce_add", "cooperative_matrix_reduce_max", "cooperative_matrix_reduce_min":
		return p.releasedInstruction(in, m), false
	case "cooperative_matrix_mul_add":
		in.Op = ir.OpCoopMatrixMulAdd
		p.operandList(in, 3)
		return p.resultType(in), false
	case "cooperative_matrix_scale", "subgroup_broadcast", "subgroup_shuffle_xor":
		in.Op = opByName[m.name]
		p.operandList(in, 2)
		return p.resultType(in), false
	default:
		p.unknownInstruction(in.OpPos(), m.name)
	}
	return nil, false
}

// unknownInstruction reports an unknown mnemonic, with a hint for the
// spellings of the reference's prose and of earlier dialects.
func (p *parser) unknownInstruction(pos ir.Pos, name string) {
	if _, ok := ir.BuiltinByName(name); ok {
		p.fail(pos, "unknown instruction '%s'; did you mean 'builtin.%s'? (or read the file with --dialect released or legacy)", name, name)
	}
	if p.dialect == Current && releasedOnly(name) {
		p.fail(pos, "unknown instruction '%s': it is released tinytc syntax; read the file with --dialect released", name)
	}
	p.fail(pos, "unknown instruction '%s'", name)
}

// builtinKind reads the builtin of "builtin.NAME" and its mode, if any
// ("builtin.group_id.y", "builtin.subgroup_id.x").
func (p *parser) builtinKind(m *modifiers) ir.BuiltinKind {
	b := kind(m, "builtin", ir.BuiltinByName)
	pos := m.pos()
	if mode := m.take("x", "y", "z"); mode >= 0 {
		name := b.String() + "." + "xyz"[mode:mode+1]
		nb, ok := ir.BuiltinByName(name)
		if !ok {
			p.fail(pos, "builtin %s has no mode %s", b, "xyz"[mode:mode+1])
		}
		b = nb
	}
	return b
}

// releasedInstruction parses the instructions tltune has from the released
// tinytc (docs/language.md, Extensions), spelled alike in both dialects.
func (p *parser) releasedInstruction(in *ir.Inst, m *modifiers) []*ir.Type {
	name, op, _ := strings.Cut(m.name, "_matrix_atomic_")
	if op == "" {
		name, op = m.name, ""
	}
	switch {
	case m.name == "atomic_load":
		in.Op = ir.OpAtomicLoad
		m.scopeSemantics(in)
		p.operand(in)
		p.indexList(in)
		return p.resultType(in)
	case m.name == "atomic_store":
		in.Op = ir.OpAtomicStore
		m.scopeSemantics(in)
		p.operandList(in, 2)
		p.indexList(in)
		return nil
	case strings.HasPrefix(m.name, "atomic_"):
		in.Op, in.Arith = ir.OpAtomicUpdate, updateOps[m.name[len("atomic_"):]]
		m.scopeSemantics(in)
		p.operandList(in, 2)
		p.indexList(in)
		return p.resultType(in)
	case m.name == "associated":
		in.Op = ir.OpAssociated
		p.operand(in)
		return p.resultType(in)
	case name == "cooperative" && op != "":
		in.TransA = m.optionalTranspose()
		in.Checked = m.checked()
		m.scopeSemantics(in)
		switch op {
		case "load":
			in.Op = ir.OpCoopMatrixAtomicLoad
			p.operand(in)
			p.coopIndices(in)
			return p.resultType(in)
		case "store":
			in.Op = ir.OpCoopMatrixAtomicStore
			p.operandList(in, 2)
			p.coopIndices(in)
			return nil
		}
		in.Op, in.Arith = ir.OpCoopMatrixAtomicUpdate, updateOps[op]
		p.operandList(in, 2)
		p.coopIndices(in)
		return p.resultType(in)
	case strings.HasPrefix(m.name, "cooperative_matrix_reduce_"):
		p.setOp(in, ir.OpCoopMatrixReduce)
		in.Arith = updateOps[m.name[len("cooperative_matrix_reduce_"):]]
		switch m.take("row", "column") {
		case 0:
		case 1:
			in.Mode = 1
		default:
			p.fail(m.pos(), "'%s' needs '.row' or '.column'", m.name)
		}
		p.operand(in)
		return p.resultType(in)
	case m.name == "cooperative_matrix_construct":
		in.Op = ir.OpCoopMatrixConstruct
		p.operand(in)
		return p.resultType(in)
	case m.name == "cooperative_matrix_extract":
		p.setOp(in, ir.OpCoopMatrixExtract)
		p.operand(in)
		p.bracketedMode(in)
		return p.resultType(in)
	case m.name == "cooperative_matrix_insert":
		p.setOp(in, ir.OpCoopMatrixInsert)
		p.operandList(in, 2)
		p.bracketedMode(in)
		return p.resultType(in)
	case m.name == "cooperative_matrix_prefetch":
		p.setOp(in, ir.OpCoopMatrixPrefetch)
		in.Static = append(in.Static, p.integer())
		p.expect(tComma, "after the cache level")
		p.operand(in)
		p.coopIndices(in)
		for _, what := range []string{"rows", "columns"} {
			p.expectOf(tComma, "before the number of ", what)
			in.Static = append(in.Static, p.integer())
		}
		return nil
	}
	return p.coopApply(in)
}

// sizeOperands parses the operands of size: "%v[mode]".
func (p *parser) sizeOperands(in *ir.Inst) {
	p.setOp(in, ir.OpSize)
	p.operand(in)
	p.bracketedMode(in)
}

// fuseOperands parses the operands of fuse: "%v[from, to]".
func (p *parser) fuseOperands(in *ir.Inst) {
	p.setOp(in, ir.OpFuse)
	p.operand(in)
	p.expect(tLBrack, "after the fuse operand")
	p.mode(in)
	p.expect(tComma, "between the fused modes")
	in.ModeTo = p.integer()
	p.expect(tRBrack, "after the fused modes")
}

// bracketedMode parses "[" integer "]" into in.Mode.
func (p *parser) bracketedMode(in *ir.Inst) {
	p.expect(tLBrack, "before the mode")
	p.mode(in)
	p.expect(tRBrack, "after the mode")
}

// coopApply parses "(%row, %col, %val) = %A -> TYPE { ... }".
func (p *parser) coopApply(in *ir.Inst) []*ir.Type {
	in.Op = ir.OpCoopMatrixApply
	var names []resultName
	p.list(tLParen, tRParen, "row, column and component names", func() { names = append(names, p.newName("region argument")) })
	if len(names) != 3 {
		p.fail(in.OpPos(), "cooperative_matrix_apply names a row, a column and a component, found %d names", len(names))
	}
	p.expect(tEqual, "after the row, column and component names")
	a := p.operand(in)
	p.expect(tArrow, "before the result type")
	t, pos := p.typ()
	in.Src().TypePos = pos
	comp := a.Type
	if a.Type.Kind() == ir.KindCoopmatrix {
		comp = a.Type.Elem()
	}
	body := in.AddRegion(&ir.Region{Kind: ir.RegionSPMD})
	p.openScope()
	defer p.closeScope()
	for i, n := range names {
		p.regionArg(body, n, []*ir.Type{ir.I32, ir.I32, comp}[i])
	}
	p.regionBody(body)
	return []*ir.Type{t}
}

func (m *modifiers) peek() string {
	if m.i < m.n {
		return m.parts[m.i]
	}
	return ""
}

func (p *parser) coopIndices(in *ir.Inst) {
	p.expect(tLBrack, "before the row and column index")
	p.operandList(in, 2)
	p.expect(tRBrack, "after the row and column index")
}

// staticOrDynamic parses an integer constant or a local identifier; a local
// identifier becomes the next operand of in and the entry is Dynamic.
func (p *parser) staticOrDynamic(in *ir.Inst) extent {
	pos := p.pos
	switch p.tok {
	case tInt:
		return extent{n: p.integer(), pos: pos}
	case tLocal:
		v := p.operand(in)
		return extent{n: ir.Dynamic, v: v, pos: pos}
	}
	p.fail(pos, "expected integer constant or local identifier, found %s", p.describe())
	return extent{}
}

func (p *parser) expand(in *ir.Inst) {
	p.operand(in)
	p.expect(tLBrack, "after the expand operand")
	p.mode(in)
	p.expect(tArrow, "after the expanded mode")
	entry := func() extent { return p.staticOrDynamic(in) }
	exts := []extent{entry()}
	if p.tok == tWord && p.lit[0] == 'x' {
		exts = append(exts, p.xTail(p.lit, p.pos, entry)...)
	}
	if len(exts) < 2 {
		p.fail(exts[0].pos, "the expand shape needs at least two sizes (e.g. 4x%%n)")
	}
	for _, e := range exts {
		in.Static = append(in.Static, e.n)
	}
	p.expect(tRBrack, "to close the expand shape")
}

func (p *parser) subview(in *ir.Inst) {
	p.operand(in)
	in.Offsets, in.Sizes = p.extents.make(4), p.extents.make(4) // room for four modes, not grown append by append
	p.list(tLBrack, tRBrack, "slices", func() {
		off := p.staticOrDynamic(in)
		size := int64(0) // a single index is offset:0, i.e. the mode is dropped
		if p.accept(tColon) {
			size = p.staticOrDynamic(in).n
		}
		in.Offsets = append(in.Offsets, off.n)
		in.Sizes = append(in.Sizes, size)
	})
}

// newName consumes a local identifier that names a new value.
func (p *parser) newName(what string) resultName {
	if p.tok != tLocal {
		p.fail(p.pos, "expected %s (a local identifier), found %s", what, p.describe())
	}
	n := resultName{p.lit, p.pos}
	p.next()
	return n
}

// localNames parses "(" %a, %b, ... ")" as names to be defined.
func (p *parser) localNames() []resultName {
	var names []resultName
	p.list(tLParen, tRParen, "loop variables", func() { names = append(names, p.newName("loop variable")) })
	return names
}

// parenOperands parses "(" %a, ... ")" as operands of in and returns how
// many there were.
func (p *parser) parenOperands(in *ir.Inst, what string) int {
	n := 0
	p.list(tLParen, tRParen, what, func() {
		p.operand(in)
		n++
	})
	return n
}

// loopVarType parses an optional ": integer-type" (default index).
func (p *parser) loopVarType() (*ir.Type, ir.Pos) {
	if !p.accept(tColon) {
		return ir.Index, ir.Pos{}
	}
	return p.typ()
}

func (p *parser) foreach(in *ir.Inst) {
	names := p.localNames()
	t, tpos := p.loopVarType()
	in.Src().TypePos = tpos
	p.expect(tEqual, "after the loop variables")
	nfrom := p.parenOperands(in, "lower bounds")
	p.expect(tComma, "between lower and upper bounds")
	nto := p.parenOperands(in, "upper bounds")
	if len(names) == 0 || nfrom != len(names) || nto != len(names) {
		p.fail(in.OpPos(), "foreach needs as many lower and upper bounds as loop variables (at least one): found %d variables, %d lower and %d upper bounds", len(names), nfrom, nto)
	}
	if !tpos.IsValid() && p.dialect == Released {
		t = p.boundsType(in, in.Operands)
	}
	body := in.AddRegion(&ir.Region{Kind: ir.RegionSPMD})
	p.openScope()
	defer p.closeScope()
	for _, n := range names {
		p.regionArg(body, n, t)
	}
	p.regionBody(body)
}

// foreachTile parses "(vars) = (from), (to) as (sizes) <= (tile shape)"
// and the body. Offsets and sizes have the type of their mode's bounds.
func (p *parser) foreachTile(in *ir.Inst) {
	vars := p.localNames()
	p.expect(tEqual, "after the tile offsets")
	nfrom := p.parenOperands(in, "lower bounds")
	p.expect(tComma, "between lower and upper bounds")
	nto := p.parenOperands(in, "upper bounds")
	p.expectWord("as", "before the tile sizes")
	sizes := p.localNames()
	p.expect(tLessEqual, "between the tile sizes and the tile shape")
	p.list(tLParen, tRParen, "tile shape", func() {
		pos := p.pos
		n := p.integer()
		if n <= 0 {
			p.errs.Add(pos, "tile size %d is not positive", n)
		}
		in.Static = append(in.Static, n)
	})
	n := len(vars)
	if n == 0 || nfrom != n || nto != n || len(sizes) != n || len(in.Static) != n {
		p.fail(in.OpPos(), "foreach_tile needs as many lower and upper bounds, tile sizes and tile shape entries as tile offsets (at least one): found %d offsets, %d lower and %d upper bounds, %d sizes and %d shape entries",
			n, nfrom, nto, len(sizes), len(in.Static))
	}
	body := in.AddRegion(&ir.Region{Kind: ir.RegionSPMD})
	p.openScope()
	defer p.closeScope()
	for _, names := range [][]resultName{vars, sizes} {
		for i, name := range names {
			p.regionArg(body, name, in.Operands[i].Type)
		}
	}
	p.regionBody(body)
}

func (p *parser) forLoop(in *ir.Inst) []*ir.Type {
	iv := p.newName("loop variable")
	t, tpos := p.loopVarType()
	in.Src().TypePos = tpos
	p.expect(tEqual, "after the loop variable")
	p.operandList(in, 2)
	if p.accept(tComma) {
		p.operand(in)
		in.HasStep = true
	}
	if !tpos.IsValid() && p.dialect == Released {
		t = p.boundsType(in, in.Operands)
	}
	var carried []resultName
	var types []*ir.Type
	if p.isWord("init") {
		p.next()
		p.list(tLParen, tRParen, "initial values", func() {
			carried = append(carried, p.newName("loop-carried value"))
			p.expect(tEqual, "after the loop-carried value name")
			p.operand(in)
		})
		p.expect(tArrow, "after the initial values")
		types = p.typeList()
		if len(types) != len(carried) {
			p.fail(in.OpPos(), "for has %d loop-carried values but %d return types", len(carried), len(types))
		}
	}
	body := in.AddRegion(&ir.Region{Kind: ir.RegionInherit})
	p.openScope()
	p.regionArg(body, iv, t)
	for i, c := range carried {
		p.regionArg(body, c, types[i])
	}
	p.regionBody(body)
	p.closeScope()
	if p.dialect == Released && p.isWord("attributes") {
		p.next()
		if p.tok != tLBrace {
			p.missing("expected the loop's attribute dictionary after 'attributes', found %s", p.describe())
		}
	}
	if p.tok == tLBrace {
		in.Attrs = p.dictionary()
	}
	return types
}

// boundsType is the type of a loop variable the released dialect leaves
// to the bounds: theirs, which must agree.
func (p *parser) boundsType(in *ir.Inst, bounds []*ir.Value) *ir.Type {
	t := bounds[0].Type
	for i, b := range bounds[1:] {
		if b.Type != t {
			p.fail(in.Src().OperandPos[i+1], "%%%s has type %s but %%%s has type %s; the loop variables take the type of the bounds, which must agree",
				b.Name, b.Type, bounds[0].Name, t)
		}
	}
	return t
}

// regionArg appends an argument called n to r and defines it.
func (p *parser) regionArg(r *ir.Region, n resultName, t *ir.Type) {
	v := p.newValue(n.name, t, n.pos)
	v.Region, v.Index = r, int32(len(r.Args))
	r.Args = append(r.Args, v)
	p.define(v)
}

// typeList parses "(" type, ... ")".
func (p *parser) typeList() []*ir.Type {
	types := []*ir.Type{}
	p.list(tLParen, tRParen, "return types", func() {
		t, _ := p.typ()
		types = append(types, t)
	})
	return types
}

func (p *parser) ifElse(in *ir.Inst) []*ir.Type {
	p.operand(in)
	return p.ifTail(in)
}

// ifTail parses what follows an if's condition: the optional result types
// and the regions.
func (p *parser) ifTail(in *ir.Inst) []*ir.Type {
	var types []*ir.Type
	if p.accept(tArrow) {
		in.Src().TypePos = p.pos
		types = p.typeList()
	}
	for i := 0; i < 2; i++ {
		r := in.AddRegion(&ir.Region{Kind: ir.RegionInherit})
		if i == 1 && !p.isWord("else") {
			break
		}
		if i == 1 {
			p.next()
		}
		p.openScope()
		p.regionBody(r)
		p.closeScope()
	}
	return types
}
