package ir

import (
	"fmt"
	"math"
	"slices"
)

// Diff compares two programs structurally (comments included), ignoring
// source positions, and
// returns "" if they are equal or a description of the first difference.
// Values correspond when they are defined at the same place; names must be
// equal too (the printer keeps names, so parse(print(p)) has p's names).
// Float constants compare by bits, so -0.0 differs from 0.0.
func Diff(a, b *Program) string {
	if len(a.Funcs) != len(b.Funcs) {
		return fmt.Sprintf("%d functions vs %d", len(a.Funcs), len(b.Funcs))
	}
	if !slices.Equal(a.Comments, b.Comments) {
		return "comments after the last function"
	}
	for i := range a.Funcs {
		if d := diffFunc(a.Funcs[i], b.Funcs[i]); d != "" {
			return "func @" + a.Funcs[i].Name + ": " + d
		}
	}
	return ""
}

type differ struct {
	vmap map[*Value]*Value
}

func diffFunc(f, g *Func) string {
	if f.Name != g.Name {
		return "name " + g.Name
	}
	if !slices.Equal(f.Comments, g.Comments) {
		return "comments before the function"
	}
	if f.Attrs.String() != g.Attrs.String() {
		return "attributes " + f.Attrs.String() + " vs " + g.Attrs.String()
	}
	if len(f.Params) != len(g.Params) {
		return "parameter count"
	}
	d := &differ{vmap: map[*Value]*Value{}}
	for i := range f.Params {
		if s := d.bind(f.Params[i], g.Params[i]); s != "" {
			return s
		}
		if attrsAt(f.ParamAttrs, i).String() != attrsAt(g.ParamAttrs, i).String() {
			return "attributes of parameter %" + f.Params[i].Name
		}
	}
	return d.region(f.Body, g.Body)
}

func attrsAt(a []Attrs, i int) Attrs {
	if i < len(a) {
		return a[i]
	}
	return nil
}

func (d *differ) bind(x, y *Value) string {
	if x.Name != y.Name || x.Type != y.Type {
		return fmt.Sprintf("value %%%s : %s vs %%%s : %s", x.Name, x.Type, y.Name, y.Type)
	}
	d.vmap[x] = y
	return ""
}

func (d *differ) region(r, s *Region) string {
	if !slices.Equal(r.EndComments, s.EndComments) {
		return "comments at the end of a region"
	}
	if r.Kind != s.Kind || len(r.Args) != len(s.Args) || len(r.Insts) != len(s.Insts) {
		return fmt.Sprintf("region shape (%d args, %d instructions vs %d, %d)",
			len(r.Args), len(r.Insts), len(s.Args), len(s.Insts))
	}
	for i := range r.Args {
		if m := d.bind(r.Args[i], s.Args[i]); m != "" {
			return m
		}
	}
	for i := range r.Insts {
		if m := d.inst(r.Insts[i], s.Insts[i]); m != "" {
			return m
		}
	}
	return ""
}

func (d *differ) inst(x, y *Inst) string {
	where := x.Mnemonic() + " at " + x.Pos.String()
	if !sameAttributes(x, y) {
		return where + ": attributes differ from " + y.Mnemonic()
	}
	if len(x.Operands) != len(y.Operands) || len(x.Results) != len(y.Results) || len(x.Regions) != len(y.Regions) {
		return where + ": operand, result or region count"
	}
	for i, v := range x.Operands {
		w, ok := d.vmap[v]
		if !ok {
			w = v // defined outside both programs (only in hand-built IR)
		}
		if w != y.Operands[i] {
			return fmt.Sprintf("%s: operand %d %%%s vs %%%s", where, i, v.Name, y.Operands[i].Name)
		}
	}
	for i := range x.Regions {
		if m := d.region(x.Regions[i], y.Regions[i]); m != "" {
			return m
		}
	}
	for i := range x.Results {
		if m := d.bind(x.Results[i], y.Results[i]); m != "" {
			return where + ": " + m
		}
	}
	return ""
}

func sameAttributes(x, y *Inst) bool {
	return x.Op == y.Op && x.TransA == y.TransA && x.TransB == y.TransB && x.Atomic == y.Atomic &&
		x.Checked == y.Checked && x.Fence == y.Fence && x.Arith == y.Arith && x.Unary == y.Unary &&
		x.Cmp == y.Cmp && x.Math == y.Math && x.Builtin == y.Builtin && x.Scan == y.Scan &&
		sameConst(constOf(x), constOf(y)) && sameModes(modesOf(x), modesOf(y)) &&
		x.HasStep == y.HasStep && x.Scope == y.Scope && x.Semantics == y.Semantics &&
		sameLists(listsOf(x), listsOf(y)) &&
		slices.Equal(x.Source().Comments, y.Source().Comments) && x.Source().LineComment == y.Source().LineComment
}

// sameLists compares list attributes; nil has none.
func sameLists(x, y *Lists) bool {
	var none Lists
	if x == nil {
		x = &none
	}
	if y == nil {
		y = &none
	}
	return slices.Equal(x.Static, y.Static) && slices.Equal(x.Offsets, y.Offsets) &&
		slices.Equal(x.Sizes, y.Sizes) && x.Attrs.String() == y.Attrs.String()
}

// constOf is in's constant; the zero Constant when it has none.
func constOf(in *Inst) Constant {
	if in.Extra == nil || in.ConstAttr == nil {
		return Constant{}
	}
	return in.Const
}

// modesOf is in's mode attributes, zero when it has none.
func modesOf(in *Inst) ModeAttrs {
	if in.Extra == nil || in.ModeAttrs == nil {
		return ModeAttrs{}
	}
	return *in.ModeAttrs
}

// listsOf is in's lists, nil when it has none.
func listsOf(in *Inst) *Lists {
	if in.Extra == nil {
		return nil
	}
	return in.Lists
}

// sameModes compares the modes (not the count, which Diff never did).
func sameModes(a, b ModeAttrs) bool { return a.Mode == b.Mode && a.ModeTo == b.ModeTo }

func sameConst(a, b Constant) bool {
	return a.Kind == b.Kind && a.Bool == b.Bool && a.Int == b.Int &&
		math.Float64bits(a.Float) == math.Float64bits(b.Float) &&
		math.Float64bits(a.Imag) == math.Float64bits(b.Imag)
}
