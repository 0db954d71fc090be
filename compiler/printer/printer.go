// Package printer owns the canonical text form of the tensor language: it
// writes an ir.Program as source that compiler/syntax reads back into an
// equal program (parse(print(p)) == p, checked by ir.Diff).
//
// The canonical form is one instruction per line, four spaces per nesting
// level, single spaces around "=" and after commas, modifiers in grammar
// order, default types (index loop variables) and default layouts omitted,
// and floats in the shortest spelling that reads back to the same float64.
// Names are kept; values without a name get the smallest free number.
// Comments are kept: comment lines before the instruction (or function, or
// closing brace) they preceded, and end-of-line comments at the end of
// their instruction's last line; a comment inside an instruction moves to
// the line before it.
package printer

import (
	"io"
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// Fprint writes p in canonical form.
func Fprint(w io.Writer, p *ir.Program) error {
	_, err := io.WriteString(w, String(p))
	return err
}

// String returns p in canonical form.
func String(p *ir.Program) string {
	pr := &printer{}
	for i, f := range p.Funcs {
		if i > 0 {
			pr.b.WriteByte('\n')
		}
		pr.function(f)
	}
	pr.comments(p.Comments)
	return pr.b.String()
}

// FuncString returns one function in canonical form.
func FuncString(f *ir.Func) string {
	pr := &printer{}
	pr.function(f)
	return pr.b.String()
}

type printer struct {
	released bool  // write the released tinytc's spelling (released.go)
	err      error // the first instruction the dialect cannot spell
	b        strings.Builder
	indent   int
	names    map[*ir.Value]string // names invented for unnamed values
	taken    map[string]bool
	next     int
	used     map[*ir.Value]bool
}

func (p *printer) function(f *ir.Func) {
	p.prepareNames(f)
	p.comments(f.Comments)
	p.b.WriteString("func @")
	p.b.WriteString(f.Name)
	p.b.WriteByte('(')
	for i, v := range f.Params {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.value(v)
		p.b.WriteString(": ")
		p.b.WriteString(v.Type.String())
		if i < len(f.ParamAttrs) && len(f.ParamAttrs[i]) > 0 {
			p.b.WriteByte(' ')
			p.b.WriteString(f.ParamAttrs[i].String())
		}
	}
	p.b.WriteByte(')')
	if len(f.Attrs) > 0 {
		p.b.WriteString(" attributes ")
		p.b.WriteString(f.Attrs.String())
	}
	p.b.WriteByte(' ')
	p.region(f.Body)
	p.b.WriteByte('\n')
}

// prepareNames records the names in use in f and which values are used, so
// that unnamed values get fresh numbers and unused unnamed results of for
// and if can stay unnamed.
func (p *printer) prepareNames(f *ir.Func) {
	p.names, p.taken, p.used, p.next = map[*ir.Value]string{}, map[string]bool{}, map[*ir.Value]bool{}, 0
	for _, v := range f.Params {
		p.take(v)
	}
	var visit func(r *ir.Region)
	visit = func(r *ir.Region) {
		for _, a := range r.Args {
			p.take(a)
		}
		for _, in := range r.Insts {
			for _, v := range in.Operands {
				p.used[v] = true
			}
			for _, v := range in.Results {
				p.take(v)
			}
			for _, sub := range in.Regions {
				visit(sub)
			}
		}
	}
	visit(f.Body)
}

func (p *printer) take(v *ir.Value) {
	if v != nil && v.Name != "" {
		p.taken[v.Name] = true
	}
}

func (p *printer) name(v *ir.Value) string {
	if v == nil {
		return "<nil>"
	}
	if v.Name != "" {
		return v.Name
	}
	if n, ok := p.names[v]; ok {
		return n
	}
	for p.taken[strconv.Itoa(p.next)] {
		p.next++
	}
	n := strconv.Itoa(p.next)
	p.taken[n] = true
	p.names[v] = n
	return n
}

func (p *printer) value(v *ir.Value) {
	p.b.WriteByte('%')
	p.b.WriteString(p.name(v))
}

func (p *printer) values(vs []*ir.Value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.value(v)
	}
}

func (p *printer) region(r *ir.Region) {
	p.b.WriteString("{\n")
	p.indent++
	for _, in := range r.Insts {
		p.inst(in)
	}
	p.comments(r.EndComments)
	p.indent--
	p.writeIndent()
	p.b.WriteByte('}')
}

func (p *printer) writeIndent() {
	for i := 0; i < p.indent; i++ {
		p.b.WriteString("    ")
	}
}

// needsLHS reports whether the results of in must be named: always for
// value instructions, for for and if unless every result is unnamed and
// unused.
func (p *printer) needsLHS(in *ir.Inst) bool {
	if len(in.Results) == 0 {
		return false
	}
	if in.Op != ir.OpFor && in.Op != ir.OpIf {
		return true
	}
	for _, v := range in.Results {
		if v.Name != "" || p.used[v] {
			return true
		}
	}
	return false
}

// comments writes comment lines at the current indentation.
func (p *printer) comments(cs []string) {
	for _, c := range cs {
		p.writeIndent()
		p.b.WriteString(c)
		p.b.WriteByte('\n')
	}
}

func (p *printer) inst(in *ir.Inst) {
	src := in.Source()
	p.comments(src.Comments)
	if p.released && p.expandForReleased(in) {
		return
	}
	p.writeIndent()
	if p.needsLHS(in) {
		p.values(in.Results)
		p.b.WriteString(" = ")
	}
	p.b.WriteString(p.mnemonic(in))
	p.operandsOf(in)
	if src.LineComment != "" {
		p.b.WriteByte(' ')
		p.b.WriteString(src.LineComment)
	}
	p.b.WriteByte('\n')
}

func (p *printer) typeSuffix(in *ir.Inst) {
	if len(in.Results) == 1 {
		p.b.WriteString(" : ")
		p.b.WriteString(in.Results[0].Type.String())
	}
}

// operand writes operand i of in (or "%<nil>" if the IR is malformed, so
// that -debug-passes output of a broken pass is still readable).
func (p *printer) operand(in *ir.Inst, i int) {
	if i >= len(in.Operands) {
		p.b.WriteString("%<missing>")
		return
	}
	p.value(in.Operands[i])
}

func (p *printer) operandsOf(in *ir.Inst) {
	switch in.Op {
	case ir.OpAlloca:
		if len(in.Attrs) > 0 {
			p.b.WriteByte(' ')
			p.b.WriteString(in.Attrs.String())
		}
		p.typeSuffix(in)
	case ir.OpCumsum:
		p.b.WriteByte(' ')
		p.operand(in, 0)
		p.b.WriteString(", ")
		p.operand(in, 1)
		p.b.WriteString(", " + strconv.FormatInt(in.Mode, 10) + ", ")
		p.operand(in, 2)
		p.b.WriteString(", ")
		p.operand(in, 3)
	case ir.OpForeach:
		p.foreach(in)
	case ir.OpForeachTile:
		p.foreachTile(in)
	case ir.OpParallel:
		p.regions(in)
	case ir.OpFor:
		p.forLoop(in)
	case ir.OpIf:
		p.ifElse(in)
	case ir.OpBuiltin:
		p.typeSuffix(in)
	case ir.OpConstant:
		p.b.WriteByte(' ')
		p.b.WriteString(in.Const.String())
		p.typeSuffix(in)
	case ir.OpExpand:
		p.expand(in)
	case ir.OpFuse:
		p.b.WriteByte(' ')
		p.operand(in, 0)
		p.b.WriteString("[" + strconv.FormatInt(in.Mode, 10) + ", " + strconv.FormatInt(in.ModeTo, 10) + "]")
		p.typeSuffix(in)
	case ir.OpLoad:
		p.b.WriteByte(' ')
		p.indexed(in, 0, 1)
		p.typeSuffix(in)
	case ir.OpSize:
		p.b.WriteByte(' ')
		p.operand(in, 0)
		p.b.WriteString("[" + strconv.FormatInt(in.Mode, 10) + "]")
		p.typeSuffix(in)
	case ir.OpVectorLoad:
		p.b.WriteByte(' ')
		p.indexed(in, 0, 1)
		if len(in.Results) > 0 {
			p.b.WriteString(" : " + in.Results[0].Type.String())
		}
	case ir.OpVectorStore:
		xs, _, _ := in.VectorStoreOperands()
		p.b.WriteByte(' ')
		for i := range xs {
			p.operand(in, i)
			p.b.WriteString(", ")
		}
		p.indexed(in, len(xs), len(xs)+1)
	case ir.OpAsyncCopy:
		p.asyncCopy(in)
	case ir.OpStore, ir.OpCoopMatrixStore, ir.OpAtomicStore, ir.OpCoopMatrixAtomicStore,
		ir.OpAtomicUpdate, ir.OpCoopMatrixAtomicUpdate:
		p.b.WriteByte(' ')
		p.operand(in, 0)
		p.b.WriteString(", ")
		p.indexed(in, 1, 2)
		p.typeSuffix(in)
	case ir.OpCoopMatrixLoad, ir.OpAtomicLoad, ir.OpCoopMatrixAtomicLoad:
		p.b.WriteByte(' ')
		p.indexed(in, 0, 1)
		p.typeSuffix(in)
	case ir.OpCoopMatrixExtract, ir.OpCoopMatrixInsert:
		p.b.WriteByte(' ')
		for i := range len(in.Operands) - 1 {
			p.operand(in, i)
			p.b.WriteString(", ")
		}
		p.operand(in, len(in.Operands)-1)
		p.b.WriteString("[" + strconv.FormatInt(in.Mode, 10) + "]")
		p.typeSuffix(in)
	case ir.OpCoopMatrixPrefetch:
		p.coopPrefetch(in)
	case ir.OpCoopMatrixApply:
		p.coopApply(in)
	case ir.OpSubview:
		p.subview(in)
	case ir.OpYield:
		p.b.WriteString(" (")
		p.values(in.Operands)
		p.b.WriteByte(')')
	default:
		// Plain comma-separated operands, then the result type if any:
		// BLAS instructions, arith, cmp, cast, math, lifetime_stop,
		// cooperative_matrix_mul_add/scale, subgroup instructions.
		if len(in.Operands) > 0 {
			p.b.WriteByte(' ')
			p.values(in.Operands)
		}
		p.typeSuffix(in)
	}
}

// indexed writes operand m followed by "[operands from first on]".
// asyncCopy prints " %A[%i, %j], %L[%p, %q], %valid".
func (p *printer) asyncCopy(in *ir.Inst) {
	src, srcIdx, dst, dstIdx, _ := in.AsyncCopyOperands()
	if src == nil || dst == nil {
		p.b.WriteByte(' ')
		p.values(in.Operands)
		return
	}
	side := func(at, n int) {
		p.operand(in, at)
		p.b.WriteByte('[')
		p.values(in.Operands[at+1 : at+1+n])
		p.b.WriteByte(']')
	}
	p.b.WriteByte(' ')
	side(0, len(srcIdx))
	p.b.WriteString(", ")
	side(1+len(srcIdx), len(dstIdx))
	p.b.WriteString(", ")
	p.operand(in, len(in.Operands)-1)
}

func (p *printer) indexed(in *ir.Inst, m, first int) {
	p.operand(in, m)
	p.b.WriteByte('[')
	if first < len(in.Operands) {
		p.values(in.Operands[first:])
	}
	p.b.WriteByte(']')
}

func (p *printer) regions(in *ir.Inst) {
	for _, r := range in.Regions {
		p.b.WriteByte(' ')
		p.region(r)
	}
}

func (p *printer) loopVarType(t *ir.Type) {
	if t != ir.Index && !p.released { // released: the bounds' type
		p.b.WriteString(" : ")
		p.b.WriteString(t.String())
	}
}

func (p *printer) foreach(in *ir.Inst) {
	body := in.Body()
	from, to := in.ForeachBounds()
	p.b.WriteString(" (")
	p.values(body.Args)
	p.b.WriteByte(')')
	if len(body.Args) > 0 {
		p.loopVarType(body.Args[0].Type)
	}
	p.b.WriteString(" = (")
	p.values(from)
	p.b.WriteString("), (")
	p.values(to)
	p.b.WriteByte(')')
	p.regions(in)
}

func (p *printer) coopPrefetch(in *ir.Inst) {
	if len(in.Static) != 3 {
		p.b.WriteString(" <malformed>")
		return
	}
	p.b.WriteString(" " + strconv.FormatInt(in.Static[0], 10) + ", ")
	p.indexed(in, 0, 1)
	p.b.WriteString(", " + strconv.FormatInt(in.Static[1], 10) + ", " + strconv.FormatInt(in.Static[2], 10))
}

func (p *printer) coopApply(in *ir.Inst) {
	p.b.WriteString(" (")
	if body := in.Body(); body != nil {
		p.values(body.Args)
	}
	p.b.WriteString(") = ")
	p.operand(in, 0)
	if len(in.Results) == 1 {
		p.b.WriteString(" -> " + in.Result().Type.String())
	}
	p.regions(in)
}

func (p *printer) foreachTile(in *ir.Inst) {
	args := in.Body().Args
	n := len(args) / 2
	from, to := in.ForeachBounds()
	p.b.WriteString(" (")
	p.values(args[:n])
	p.b.WriteString(") = (")
	p.values(from)
	p.b.WriteString("), (")
	p.values(to)
	p.b.WriteString(") as (")
	p.values(args[n:])
	p.b.WriteString(") <= (")
	for i, t := range in.Static {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(strconv.FormatInt(t, 10))
	}
	p.b.WriteByte(')')
	p.regions(in)
}

func (p *printer) forLoop(in *ir.Inst) {
	body := in.Body()
	from, to, step, init := in.LoopBounds()
	p.b.WriteByte(' ')
	p.value(body.Args[0])
	p.loopVarType(body.Args[0].Type)
	p.b.WriteString(" = ")
	p.values([]*ir.Value{from, to})
	if step != nil {
		p.b.WriteString(", ")
		p.value(step)
	}
	if len(init) > 0 {
		p.b.WriteString(" init(")
		for i, v := range init {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.value(body.Args[i+1])
			p.b.WriteString(" = ")
			p.value(v)
		}
		p.b.WriteString(") -> ")
		p.typeList(in.Results)
	}
	p.regions(in)
	if len(in.Attrs) > 0 {
		p.b.WriteByte(' ')
		p.b.WriteString(in.Attrs.String())
	}
}

func (p *printer) typeList(vs []*ir.Value) {
	p.b.WriteByte('(')
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(v.Type.String())
	}
	p.b.WriteByte(')')
}

func (p *printer) ifElse(in *ir.Inst) {
	p.b.WriteByte(' ')
	p.operand(in, 0)
	if len(in.Results) > 0 {
		p.b.WriteString(" -> ")
		p.typeList(in.Results)
	}
	if len(in.Regions) > 0 {
		p.b.WriteByte(' ')
		p.region(in.Regions[0])
	}
	if len(in.Regions) > 1 && (len(in.Regions[1].Insts) > 0 || len(in.Regions[1].EndComments) > 0) {
		p.b.WriteString(" else ")
		p.region(in.Regions[1])
	}
}

func (p *printer) extent(e ir.Extent) {
	if e.Value != nil {
		p.value(e.Value)
		return
	}
	p.b.WriteString(strconv.FormatInt(e.Static, 10))
}

func (p *printer) expand(in *ir.Inst) {
	p.b.WriteByte(' ')
	p.operand(in, 0)
	p.b.WriteString("[" + strconv.FormatInt(in.Mode, 10) + " -> ")
	for i, e := range in.ExpandShape() {
		if i > 0 {
			p.b.WriteString(" x ")
		}
		p.extent(e)
	}
	p.b.WriteByte(']')
	p.typeSuffix(in)
}

func (p *printer) subview(in *ir.Inst) {
	p.b.WriteByte(' ')
	p.operand(in, 0)
	p.b.WriteByte('[')
	offsets, sizes := in.SubviewSlices()
	for i := range offsets {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.extent(offsets[i])
		if sizes[i].Value != nil || sizes[i].Static != 0 {
			p.b.WriteByte(':')
			p.extent(sizes[i])
		}
	}
	p.b.WriteByte(']')
	p.typeSuffix(in)
}
