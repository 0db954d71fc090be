// Package syntax owns the concrete syntax of the tensor language: a scanner
// and a recursive-descent parser that builds the typed IR of compiler/ir
// directly, with source positions, resolving names as it goes (an SSA value
// is visible after its definition, in its region and the regions nested in
// it, and may not be redefined while visible).
//
// The parser checks the grammar and name resolution only; type rules are the
// verifier's (compiler/check).
package syntax

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"tltune/compiler/diag"
	"tltune/compiler/ir"
)

// Parse parses a whole source file in the current dialect. On syntax
// errors it returns the functions it could parse and every error found
// (sorted); the program is then only good for diagnostics. Read parses the
// other dialects.
func Parse(src []byte) (prog *ir.Program, errs diag.List) { return parse(src, Current) }

func parse(src []byte, d Dialect) (prog *ir.Program, errs diag.List) {
	p := parsers.Get().(*parser)
	defer p.release()
	p.dialect = d
	if d != p.typeCacheDialect {
		clear(p.typeCache)
		p.typeCacheDialect = d
	}
	p.sc.init(string(src), p.onError)
	p.next()
	prog = &ir.Program{}
	for p.tok != tEOF {
		if f := p.function(); f != nil {
			f.Number()
			prog.Funcs = append(prog.Funcs, f)
		}
	}
	prog.Comments = p.texts(p.takeComments())
	return prog, p.errs.Sort()
}

type parser struct {
	sc      scanner
	onError func(ir.Pos, string) // errorAt, for the scanner
	dialect Dialect
	tok     token
	pos     ir.Pos
	lit     string
	prevEnd ir.Pos // just after the previous token
	errs    diag.List

	// defs are the compile-time variables of the released dialect; while
	// expansion is not empty, tokens come from it (a variable's tokens at
	// the position of its use) instead of the scanner.
	defs      defScopes
	expansion []defToken
	expandAt  ir.Pos

	// pending are the instructions the legacy dialect's upgrade adds before
	// the instruction being read (its constants and computed sizes);
	// usedNames holds every local name of the file and the names made up
	// for them.
	pending   []*ir.Inst
	usedNames map[string]bool
	constants map[string]*ir.Value // by type and spelling: the constant made for it

	// names maps every visible name to its value, in definition order;
	// scopes holds the start of each open scope in it, so closing a scope
	// forgets its names. Redefining a visible name is an error, so a name
	// maps to one value at a time.
	names  nameTable
	scopes []int

	// typeCache maps the spellings of composite types already read to
	// their type, for the dialect typeCacheDialect: kernels repeat the same
	// memref and coopmatrix types many times, and the tuner's sources the
	// same few. A spelling reads the same in every source of a dialect
	// (see spelledTypes), so the cache lives as long as the parser, its
	// keys copied out of the sources.
	typeCache        map[string]*ir.Type
	typeCacheDialect Dialect

	// results is the number of names left of the '=' of the instruction
	// being parsed: vector_load has one result per name.
	results int

	slabs
}

// slabs are the parser's allocation slabs for the objects of the IR.
type slabs struct {
	// typeLists hands out the result types of an instruction, which live
	// until bindResults.
	typeLists sliceSlab[*ir.Type]
	insts     slab[ir.Inst]
	extras    slab[ir.Extra]   // for the instructions the parser makes up
	records   slab[annotation] // every instruction read has its source record
	values    slab[ir.Value]
	operands  sliceSlab[*ir.Value]
	positions sliceSlab[ir.Pos]
	extents   sliceSlab[int64] // subviews' offsets and sizes

	// The attribute tables of the instructions that have them (setOp).
	constAttrs slab[ir.ConstAttr]
	modeAttrs  slab[ir.ModeAttrs]
	lists      slab[ir.Lists]

	// The attribute dictionaries and arrays, collected on the stack and
	// copied here once complete.
	namedAttrs sliceSlab[ir.NamedAttr]
	attrs      sliceSlab[ir.Attr]
	paramAttrs sliceSlab[ir.Attrs]

	commentTexts sliceSlab[string]
}

// annotation is what an instruction read from the source has besides
// itself: its Extra and the source record that Extra points to, taken
// from one slab (two were a tenth of the allocations of parsing a GEMM
// kernel).
type annotation struct {
	extra ir.Extra
	src   ir.Source
}

// annotate gives in, which has no Extra yet, its Extra and source record.
func (p *parser) annotate(in *ir.Inst) *ir.Source {
	a := p.records.new()
	in.Extra = &a.extra
	in.SetSource(&a.src)
	return &a.src
}

// restart lets go of the chunks for the next source, each slab starting
// with a chunk of the size this source took.
func (s *slabs) restart() {
	s.typeLists.restart()
	s.insts.restart()
	s.extras.restart()
	s.records.restart()
	s.values.restart()
	s.operands.restart()
	s.positions.restart()
	s.extents.restart()
	s.constAttrs.restart()
	s.modeAttrs.restart()
	s.lists.restart()
	s.namedAttrs.restart()
	s.attrs.restart()
	s.paramAttrs.restart()
	s.commentTexts.restart()
}

// parsers keeps parsers, with their tables, from source to source: made
// afresh, a parser and its name and type tables were a fifth of the bytes
// parsing a GEMM kernel allocated. Nothing a parse returns is the
// parser's: the IR comes from slabs each parse starts anew, the errors
// from a list it starts anew.
var parsers = sync.Pool{New: func() any {
	p := &parser{typeCache: map[string]*ir.Type{}}
	p.onError = p.errorAt
	return p
}}

// release hands p back for the next source, emptied (so that the pool
// refers to no program); it must not be used after.
func (p *parser) release() {
	p.names.reset()
	slabs := p.slabs
	slabs.restart()
	*p = parser{onError: p.onError, names: p.names, typeCache: p.typeCache, typeCacheDialect: p.typeCacheDialect,
		scopes: p.scopes[:0], slabs: slabs}
	parsers.Put(p)
}

// newValue returns a value with the given name, type and position.
func (p *parser) newValue(name string, t *ir.Type, pos ir.Pos) *ir.Value {
	v := p.values.new()
	v.Name, v.Type, v.Pos = name, t, pos
	return v
}

// setOp is in.SetOp with the attribute tables op needs taken from the
// slabs: allocated one by one by SetOp, a GEMM kernel's (its constants'
// and subviews') were a sixth of the objects parsing it allocated.
func (p *parser) setOp(in *ir.Inst, op ir.Op) {
	if in.Extra == nil && (op.HasConst() || op.HasModes() || op.HasLists()) {
		in.Extra = p.extras.new()
	}
	if op.HasConst() && in.ConstAttr == nil {
		in.ConstAttr = p.constAttrs.new()
	}
	if op.HasModes() && in.ModeAttrs == nil {
		in.ModeAttrs = p.modeAttrs.new()
	}
	if op.HasLists() && in.Lists == nil {
		in.Lists = p.lists.new()
	}
	in.SetOp(op)
}

// bailout unwinds the parse of one instruction or function after a syntax
// error; the parser then skips to a plausible restart point.
type bailout struct{}

// next moves to the next token. In the released dialect it also reads the
// definitions of compile-time variables ($name = ...) wherever they stand,
// expands their uses, and scopes them by braces.
func (p *parser) next() {
	p.prevEnd = p.sc.pos()
	for {
		if len(p.expansion) > 0 {
			t := p.expansion[0]
			p.expansion = p.expansion[1:]
			p.tok, p.pos, p.lit = t.tok, p.expandAt, t.lit
			return
		}
		p.tok, p.pos, p.lit = p.sc.next()
		if p.dialect != Released {
			if p.tok == tDef {
				p.errs.Add(p.pos, "compile-time variables ($%s) are released tinytc syntax; read the file with --dialect released", p.lit)
				p.tok = tIllegal
			}
			return
		}
		switch p.tok {
		case tLBrace:
			p.defs.open()
		case tRBrace:
			p.defs.close()
		case tDef:
			if p.sc.peekToken() == tEqual {
				p.defineVar()
				continue
			}
			if !p.expandVar() {
				return
			}
			continue
		}
		return
	}
}

func (p *parser) errorAt(pos ir.Pos, msg string) { p.errs.Add(pos, "%s", msg) }

// fail reports a syntax error and abandons the current instruction.
func (p *parser) fail(pos ir.Pos, format string, args ...any) {
	if p.tok != tIllegal || pos != p.pos { // the scanner reported that one
		p.errs.Add(pos, format, args...)
	}
	panic(bailout{})
}

// missing reports that something expected before the current token is
// absent. When the current token starts a later line, the caret goes to
// the end of the previous token, where the missing text belongs.
func (p *parser) missing(format string, args ...any) {
	pos := p.pos
	if p.tok != tIllegal && p.pos.Line > p.prevEnd.Line {
		pos = p.prevEnd
	}
	p.fail(pos, format, args...)
}

func (p *parser) describe() string {
	switch p.tok {
	case tEOF:
		return "end of file"
	case tWord, tInt, tFloat:
		return "'" + p.lit + "'"
	case tLocal:
		return "'%" + p.lit + "'"
	case tGlobal:
		return "'@" + p.lit + "'"
	case tDef:
		return "'$" + p.lit + "'"
	case tString:
		return strconv.Quote(p.lit)
	}
	return p.tok.String()
}

func (p *parser) expect(t token, context string) ir.Pos {
	pos := p.pos
	if p.tok != t {
		p.missing("expected %s %s, found %s", t, context, p.describe())
	}
	p.next()
	return pos
}

// expectOf is expect with a context in parts, joined only for an error:
// lists and types name theirs after what they parse, and joining every
// context up front was a tenth of the parser's allocations.
func (p *parser) expectOf(t token, context ...string) ir.Pos {
	if p.tok != t {
		return p.expect(t, strings.Join(context, ""))
	}
	pos := p.pos
	p.next()
	return pos
}

func (p *parser) accept(t token) bool {
	if p.tok == t {
		p.next()
		return true
	}
	return false
}

func (p *parser) isWord(w string) bool { return p.tok == tWord && p.lit == w }

func (p *parser) expectWord(w, context string) {
	if !p.isWord(w) {
		p.missing("expected '%s' %s, found %s", w, context, p.describe())
	}
	p.next()
}

// ---- scopes ----

func (p *parser) openScope() { p.scopes = append(p.scopes, p.names.len()) }

func (p *parser) closeScope() { p.truncateScopes(len(p.scopes) - 1) }

// truncateScopes closes scopes until depth remain open.
func (p *parser) truncateScopes(depth int) {
	if depth >= len(p.scopes) {
		return
	}
	p.names.truncate(p.scopes[depth])
	p.scopes = p.scopes[:depth]
}

func (p *parser) lookup(name string) *ir.Value { return p.names.lookup(name) }

// define makes v visible in the innermost scope. Redefining a visible name
// is an error (reported, not fatal: parsing goes on).
func (p *parser) define(v *ir.Value) {
	if old := p.lookup(v.Name); old != nil {
		p.errs.Add(v.Pos, "%%%s is already defined at %s", v.Name, old.Pos)
		return
	}
	p.names.define(v.Name, v)
}

// use resolves the current local identifier and consumes it.
func (p *parser) use() (*ir.Value, ir.Pos) {
	pos := p.pos
	if p.tok != tLocal {
		p.fail(pos, "expected local identifier, found %s", p.describe())
	}
	v := p.lookup(p.lit)
	if v == nil {
		p.fail(pos, "undefined value %%%s", p.lit)
	}
	p.next()
	return v, pos
}

// ---- functions ----

// function parses one function definition; on a syntax error it skips to
// the next "func" keyword and returns nil.
func (p *parser) function() (f *ir.Func) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			p.truncateScopes(0)
			for p.tok != tEOF && !p.isWord("func") {
				p.next()
			}
			f = nil
		}
	}()
	f = &ir.Func{Pos: p.pos, Comments: p.texts(p.takeComments())}
	p.expectWord("func", "at the start of a function definition")
	f.NamePos = p.pos
	if p.tok != tGlobal {
		p.fail(p.pos, "expected global identifier (the function name, e.g. @kernel), found %s", p.describe())
	}
	f.Name = p.lit
	p.next()
	p.openScope()
	defer p.closeScope()
	// Collected on the stack and copied once, as dictionary's entries.
	var params [8]*ir.Value
	var paramAttrs [8]ir.Attrs
	ps, as := params[:0], paramAttrs[:0]
	p.list(tLParen, tRParen, "parameters", func() {
		v, attrs := p.parameter(len(ps))
		ps, as = append(ps, v), append(as, attrs)
	})
	if len(ps) > 0 {
		f.Params, f.ParamAttrs = p.operands.clone(ps), p.paramAttrs.clone(as)
	}
	if p.isWord("attributes") {
		p.next()
		f.Attrs = p.dictionary()
	}
	if p.dialect == Legacy {
		p.legacyFuncAttrs(f)
	}
	f.Body = &ir.Region{Kind: ir.RegionCollective}
	p.regionBody(f.Body)
	return f
}

func (p *parser) parameter(index int) (*ir.Value, ir.Attrs) {
	if p.tok != tLocal {
		p.fail(p.pos, "expected parameter name (a local identifier), found %s", p.describe())
	}
	v := p.newValue(p.lit, nil, p.pos)
	v.Index = int32(index)
	p.next()
	p.expect(tColon, "after the parameter name")
	v.Type, _ = p.typ()
	p.define(v)
	var attrs ir.Attrs
	if p.tok == tLBrace {
		attrs = p.dictionary()
	}
	return v, attrs
}

// regionBody parses "{" *instruction "}" into r in a new scope. Syntax
// errors inside an instruction are reported and the parser resumes at the
// next line that can start an instruction, so one file yields all its errors.
func (p *parser) regionBody(r *ir.Region) {
	p.expect(tLBrace, "to open a region")
	for {
		if p.tok == tRBrace {
			r.EndComments = p.texts(p.takeComments())
			break
		}
		if p.tok == tEOF {
			p.fail(p.pos, "region not closed: expected '}' before end of file")
		}
		if p.isWord("func") {
			p.fail(p.pos, "region not closed: expected '}' before the next function")
		}
		p.instructionOrSkip(r)
	}
	p.next()
}

func (p *parser) instructionOrSkip(r *ir.Region) {
	depth := len(p.scopes)
	outer := p.pending // an instruction of a nested region is read while its parent's are pending
	p.pending = nil
	defer func() { p.pending = outer }()
	defer func() {
		if rec := recover(); rec != nil {
			if _, ok := rec.(bailout); !ok {
				panic(rec)
			}
			p.truncateScopes(depth)
			p.skipInstruction()
		}
	}()
	lead := p.takeComments()
	in := p.instruction()
	p.claimComments(in, lead)
	if len(p.pending) > 0 {
		// The comment lines stay before what the instruction became (an
		// instruction the parser made up has no source record of its own).
		first := p.pending[0]
		if first.Src() == nil {
			first.SetSource(&ir.Source{})
		}
		first.Src().Comments, in.Src().Comments = in.Src().Comments, nil
	}
	for _, added := range p.pending {
		r.Append(added)
	}
	r.Append(in)
}

// takeComments returns the comments scanned so far and not yet claimed.
func (p *parser) takeComments() []comment {
	cs := p.sc.pending
	p.sc.pending = nil
	return cs
}

// claimComments attaches comments to the instruction just parsed: lead
// (the comment lines before it) and the comments scanned while parsing it
// that lie before its end go before it; a comment after its last token on
// the same line is its line comment. Later comments wait for the next
// instruction.
func (p *parser) claimComments(in *ir.Inst, lead []comment) {
	end := p.prevEnd
	rest := p.takeComments()
	for len(rest) > 0 && before(rest[0].pos, end) {
		lead, rest = append(lead, rest[0]), rest[1:]
	}
	if len(rest) > 0 && !rest[0].ownLine && rest[0].pos.Line == end.Line {
		in.Src().LineComment, rest = rest[0].text, rest[1:]
	}
	p.sc.pending = rest
	in.Src().Comments = p.texts(lead)
}

func before(a, b ir.Pos) bool { return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col }

// texts returns the texts of cs, nil for none.
func (p *parser) texts(cs []comment) []string {
	if len(cs) == 0 {
		return nil
	}
	out := p.commentTexts.make(len(cs))
	for _, c := range cs {
		out = append(out, c.text)
	}
	return out
}

// skipInstruction skips tokens up to the first token of a later line that
// can begin an instruction (a local identifier or a keyword) or closes the
// region, keeping braces balanced.
func (p *parser) skipInstruction() {
	line := p.pos.Line
	depth := 0
	for p.tok != tEOF {
		if p.pos.Line > line && depth == 0 && (p.tok == tLocal || p.tok == tWord || p.tok == tRBrace) {
			return
		}
		switch p.tok {
		case tLBrace:
			depth++
		case tRBrace:
			if depth == 0 {
				return
			}
			depth--
		case tWord:
			if p.lit == "func" {
				return
			}
		}
		p.next()
	}
}

// list parses OPEN [item {"," item}] CLOSE; what names the items in
// messages.
func (p *parser) list(open, close token, what string, item func()) {
	p.expectOf(open, "to open the ", what)
	for n := 0; p.tok != close; n++ {
		if n > 0 {
			p.expectOf(tComma, "between ", what)
		}
		item()
	}
	p.next()
}

// ---- attributes ----

func (p *parser) dictionary() ir.Attrs {
	// The entries are collected on the stack and copied once, at their
	// number, into a slab: grown by appending, a kernel's few dictionaries
	// were a sixth of parsing it, and copied into allocations of their
	// own, a tenth.
	var entries [8]ir.NamedAttr
	d := ir.Attrs(entries[:0])
	p.list(tLBrace, tRBrace, "attributes", func() {
		na := ir.NamedAttr{Pos: p.pos}
		switch {
		case p.tok == tString:
			na.Name = p.lit
		case p.tok == tWord && ir.IsKeywordAttrName(p.lit):
			na.Name = p.lit
		case p.tok == tWord:
			p.fail(p.pos, "unknown attribute name '%s' (known: alignment, shape_gcd, stride_gcd, subgroup_size, unroll, work_group_size; quote other names)", p.lit)
		default:
			p.fail(p.pos, "expected attribute name, found %s", p.describe())
		}
		p.next()
		p.expect(tEqual, "after the attribute name")
		na.Value = p.attribute()
		if _, dup := d.Lookup(na.Name); dup {
			p.errs.Add(na.Pos, "attribute %s given twice", na.Name)
		}
		d = append(d, na)
	})
	return p.namedAttrs.clone(d)
}

func (p *parser) attribute() ir.Attr {
	pos := p.pos
	var a ir.Attr
	switch {
	case p.tok == tInt:
		a = ir.IntAttr(p.integer())
	case p.isWord("true"), p.isWord("false"):
		a = ir.BoolAttr(p.lit == "true")
		p.next()
	case p.tok == tString:
		a = ir.StringAttr(p.lit)
		p.next()
	case p.tok == tLBrack:
		var entries [4]ir.Attr // collected on the stack, copied once (see dictionary)
		array := entries[:0]
		p.list(tLBrack, tRBrack, "array entries", func() { array = append(array, p.attribute()) })
		a = ir.Attr{Kind: ir.AttrArray, Array: p.attrs.clone(array)}
	case p.tok == tLBrace:
		a = ir.Attr{Kind: ir.AttrDict, Dict: p.dictionary()}
	default:
		p.fail(pos, "expected attribute value (integer, boolean, string, array or dictionary), found %s", p.describe())
	}
	a.Pos = pos
	return a
}

// ---- constants ----

// integer parses an integer constant and consumes it.
func (p *parser) integer() int64 {
	if p.tok != tInt {
		p.fail(p.pos, "expected integer constant, found %s", p.describe())
	}
	v, ok := ir.ParseInt(p.lit)
	if !ok {
		p.errs.Add(p.pos, "integer constant %s out of range [-2^63+1, 2^63-1]", p.lit)
	}
	p.next()
	return v
}

// float parses a floating constant and consumes it.
func (p *parser) float() float64 {
	if p.isWord("inf") || p.isWord("nan") {
		p.tok = tFloat
	}
	if p.tok != tFloat {
		p.fail(p.pos, "expected floating constant, found %s", p.describe())
	}
	text := p.lit
	if strings.Contains(strings.ToLower(text), "x") && !strings.ContainsAny(text, "pP") {
		text += "p0" // strconv wants the binary exponent of hexadecimal floats
	}
	v, err := strconv.ParseFloat(text, 64)
	if special := strings.TrimLeft(text, "+-"); special == "inf" || special == "nan" {
		p.next()
		return v
	}
	if err != nil || math.IsInf(v, 0) {
		p.errs.Add(p.pos, "floating constant %s out of the range of f64", p.lit)
	}
	p.next()
	return v
}

func (p *parser) constant() ir.Constant {
	switch {
	case p.isWord("true"), p.isWord("false"):
		c := ir.Constant{Kind: ir.ConstBool, Bool: p.lit == "true"}
		p.next()
		return c
	case p.tok == tInt:
		return ir.Constant{Kind: ir.ConstInt, Int: p.integer()}
	case p.tok == tFloat, p.isWord("inf"), p.isWord("nan"):
		return ir.Constant{Kind: ir.ConstFloat, Float: p.float()}
	case p.tok == tLBrack:
		p.next()
		c := ir.Constant{Kind: ir.ConstComplex, Float: p.float()}
		p.expect(tComma, "between the real and imaginary part")
		c.Imag = p.float()
		p.expect(tRBrack, "after the imaginary part")
		return c
	}
	p.fail(p.pos, "expected constant (true, false, integer, floating or [re, im]), found %s", p.describe())
	return ir.Constant{}
}
