package syntax

import (
	"strconv"
	"strings"
	"sync"

	"tltune/compiler/ir"
)

// extent is one entry of a shape written with "x" separators: a constant,
// Dynamic ("?") or, in expand shapes, a local identifier.
type extent struct {
	n   int64
	v   *ir.Value
	pos ir.Pos
}

// typ parses a type and consumes it.
func (p *parser) typ() (*ir.Type, ir.Pos) {
	pos := p.pos
	if p.tok != tWord {
		p.fail(pos, "expected type, found %s", p.describe())
	}
	switch p.lit {
	case "memref", "group", "coopmatrix":
		return p.compositeType(), pos
	}
	t := ir.BasicByName(p.lit)
	if p.dialect == Legacy && p.lit == "i1" {
		t = ir.Bool // the legacy reference's boolean
	}
	if t == nil {
		p.fail(pos, "unknown type '%s'", p.lit)
	}
	p.next()
	return t, pos
}

// scalarType consumes a scalar type.
func (p *parser) scalarType() (*ir.Type, ir.Pos) {
	t, pos := p.typ()
	if !t.IsScalar() {
		p.fail(pos, "expected scalar type, found %s", t)
	}
	return t, pos
}

// elementAndShape parses "<" SCALAR ("x" extent)* as glued in "f32x4x?":
// the scalar name starts the current word and the shape follows.
func (p *parser) elementAndShape(what string, entry func() extent) (*ir.Type, []extent) {
	p.expectOf(tLess, "after '", what, "'")
	if p.tok != tWord {
		p.fail(p.pos, "expected element type of the %s, found %s", what, p.describe())
	}
	word, pos := p.lit, p.pos
	for _, name := range [...]string{"index", "bf16", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "c32", "c64"} {
		if strings.HasPrefix(word, name) && (len(word) == len(name) || word[len(name)] == 'x') {
			rest := word[len(name):]
			pos.Col += int32(len(name))
			return ir.BasicByName(name), p.xTail(rest, pos, entry)
		}
	}
	p.fail(pos, "expected scalar element type of the %s (i8...i64, index, bf16, f16, f32, f64, c32, c64), found '%s'", what, word)
	return nil, nil
}

// xTail parses the "x"-separated extents that begin with rest, the
// remainder of the current word at pos ("x4x8", "x", ""), continuing with
// following tokens ("x" "?" "x4", "x" "%1"). entry parses an extent that is
// a token of its own. The word is consumed.
func (p *parser) xTail(rest string, pos ir.Pos, entry func() extent) []extent {
	var out []extent
	for {
		needEntry := false
		for len(rest) > 0 {
			if rest[0] != 'x' {
				p.fail(pos, "expected 'x' between mode sizes, found '%s'", rest)
			}
			rest, pos.Col = rest[1:], pos.Col+1
			i := strings.IndexByte(rest, 'x')
			if i < 0 {
				i = len(rest)
			}
			part := rest[:i]
			switch {
			case part == "" && i < len(rest):
				p.fail(pos, "missing mode size between 'x' and 'x'")
			case part == "":
				needEntry = true
			default:
				n, err := strconv.ParseInt(part, 10, 64)
				if err != nil || part[0] == '+' || part[0] == '-' {
					p.fail(pos, "invalid mode size '%s'", part)
				}
				out = append(out, extent{n: n, pos: pos})
			}
			rest, pos.Col = rest[i:], pos.Col+int32(i)
		}
		p.next()
		if needEntry {
			out = append(out, entry())
		}
		if p.tok != tWord || p.lit[0] != 'x' {
			return out
		}
		rest, pos = p.lit, p.pos
	}
}

// shapeExtent parses a standalone mode size: '?' or a non-negative integer.
func (p *parser) shapeExtent() extent {
	pos := p.pos
	if p.accept(tQuestion) {
		return extent{n: ir.Dynamic, pos: pos}
	}
	if p.tok != tInt {
		p.fail(pos, "expected mode size (integer or '?'), found %s", p.describe())
	}
	n := p.integer()
	if n < 0 {
		p.errs.Add(pos, "mode size %d is negative", n)
	}
	return extent{n: n, pos: pos}
}

// constExtent parses a standalone integer (coopmatrix shapes).
func (p *parser) constExtent() extent {
	pos := p.pos
	return extent{n: p.integer(), pos: pos}
}

// compositeType parses a memref, group or coopmatrix type, reusing the
// type of an identical spelling met before.
func (p *parser) compositeType() *ir.Type {
	start := p.sc.tokStart
	end, cacheable := p.sc.typeSpan(start)
	if cacheable {
		t, ok := p.typeCache[p.sc.src[start:end]]
		if !ok {
			t, ok = spelledTypes.get(p.dialect, p.sc.src[start:end])
		}
		if ok {
			p.sc.off = end
			p.next()
			return t
		}
	}
	nerrs := len(p.errs)
	var t *ir.Type
	switch p.lit {
	case "memref":
		t = p.memrefType()
	case "group":
		t = p.groupType()
	default:
		t = p.coopmatrixType()
	}
	if cacheable && len(p.errs) == nerrs && p.sc.tokStart >= end {
		if len(p.typeCache) >= maxSpelledTypes {
			clear(p.typeCache)
		}
		p.typeCache[strings.Clone(p.sc.src[start:end])] = t // not pinning the source
		spelledTypes.put(p.dialect, p.sc.src[start:end], t)
	}
	return t
}

// spelledTypes remembers composite types by spelling across parses, as
// typeCache does within one: the tuner compiles many sources that spell
// the same few memref types, and types are interned and immutable. A
// spelling is context-free (typeSpan refuses those that use compile-time
// variables), but the dialect decides how it reads.
var spelledTypes typeSpellings

type typeSpellings struct {
	mu sync.RWMutex
	m  map[spelling]*ir.Type
}

type spelling struct {
	dialect Dialect
	text    string
}

// maxSpelledTypes bounds the spellings remembered.
const maxSpelledTypes = 1 << 12

func (ts *typeSpellings) get(d Dialect, text string) (*ir.Type, bool) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	t, ok := ts.m[spelling{d, text}]
	return t, ok
}

func (ts *typeSpellings) put(d Dialect, text string, t *ir.Type) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.m == nil {
		ts.m = map[spelling]*ir.Type{}
	}
	if len(ts.m) < maxSpelledTypes {
		ts.m[spelling{d, strings.Clone(text)}] = t // not pinning the source
	}
}

func (p *parser) memrefType() *ir.Type {
	p.next() // memref
	elem, exts := p.elementAndShape("memref", p.shapeExtent)
	shape := make([]int64, len(exts))
	for i, e := range exts {
		shape[i] = e.n
	}
	var stride []int64
	space := ir.Global
	if p.accept(tComma) && p.isWord("strided") {
		stridePos := p.pos
		p.next()
		stride = []int64{}
		p.list(tLess, tGreater, "strides", func() { stride = append(stride, p.shapeExtentOrNegative()) })
		if len(stride) != len(shape) {
			p.errs.Add(stridePos, "strided layout has %d entries but the memref has order %d", len(stride), len(shape))
			stride = nil
		}
		if p.tok == tComma {
			p.next()
			space = p.addressSpace()
		}
	} else if p.tok != tGreater {
		space = p.addressSpace()
	}
	p.expect(tGreater, "to close the memref type")
	return ir.Memref(elem, shape, stride, space)
}

// shapeExtentOrNegative parses a stride: '?' or any integer (negative
// strides are the verifier's to reject, with a better message).
func (p *parser) shapeExtentOrNegative() int64 {
	if p.accept(tQuestion) {
		return ir.Dynamic
	}
	return p.integer()
}

func (p *parser) addressSpace() ir.AddrSpace {
	switch {
	case p.isWord("global"):
		p.next()
		return ir.Global
	case p.isWord("local"):
		p.next()
		return ir.Local
	}
	p.fail(p.pos, "expected 'strided<...>', 'global' or 'local' in memref type, found %s", p.describe())
	return ir.Global
}

func (p *parser) groupType() *ir.Type {
	p.next() // group
	p.expect(tLess, "after 'group'")
	if !p.isWord("memref") {
		p.fail(p.pos, "expected memref type in group, found %s", p.describe())
	}
	m := p.memrefType()
	sizes := []extent{{n: ir.Dynamic}} // the legacy group has no size: any
	if p.dialect != Legacy || p.tok == tWord {
		if p.tok != tWord || p.lit[0] != 'x' {
			p.fail(p.pos, "expected 'x' and the group size after the memref type, found %s", p.describe())
		}
		sizes = p.xTail(p.lit, p.pos, p.shapeExtent)
	}
	if len(sizes) != 1 {
		p.fail(sizes[0].pos, "a group has exactly one size, found %d", len(sizes))
	}
	offset := int64(0)
	if p.accept(tComma) {
		p.expectWord("offset", "in group type")
		p.expect(tColon, "after 'offset'")
		offset = p.shapeExtentOrNegative()
	}
	p.expect(tGreater, "to close the group type")
	return ir.Group(m, sizes[0].n, offset)
}

func (p *parser) coopmatrixType() *ir.Type {
	p.next() // coopmatrix
	comp, exts := p.elementAndShape("coopmatrix", p.constExtent)
	if len(exts) != 2 {
		pos := p.pos
		if len(exts) > 0 {
			pos = exts[0].pos
		}
		p.fail(pos, "a coopmatrix has 2 modes (rows x columns), found %d", len(exts))
	}
	p.expect(tComma, "before the matrix use")
	var use ir.MatrixUse
	switch {
	case p.isWord("matrix_a"):
		use = ir.MatrixA
	case p.isWord("matrix_b"):
		use = ir.MatrixB
	case p.isWord("matrix_acc"):
		use = ir.MatrixAcc
	default:
		p.fail(p.pos, "expected matrix use (matrix_a, matrix_b or matrix_acc), found %s", p.describe())
	}
	p.next()
	p.expect(tGreater, "to close the coopmatrix type")
	return ir.Coopmatrix(comp, exts[0].n, exts[1].n, use)
}
