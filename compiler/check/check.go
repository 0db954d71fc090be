// Package check owns the verifier of the tensor language: every restriction
// of the language reference that the grammar does not express (types and
// the promotion lattice, shapes, orders and strides, casts, region classes,
// coopmatrix uses, atomics, attributes, SSA scoping, constant ranges), and,
// when a Target is given, the limits of a device.
//
// The verifier accepts any ir.Program, also one built or rewritten by a
// pass, and never panics on malformed IR: operand counts and value
// definitions are checked before they are relied on.
package check

import (
	"fmt"
	"slices"
	"sync"

	"tltune/compiler/diag"
	"tltune/compiler/ir"
)

// Target holds the device limits that attributes are checked against. A
// zero field is not checked. The compiler's target package fills it.
type Target struct {
	SubgroupSizes    []int64 // supported subgroup sizes
	MaxWorkGroupSize int64   // maximum number of work-items in a work-group
	LocalMemory      int64   // bytes of local memory per work-group
}

// Program verifies p and returns every error found, sorted by position.
// target may be nil.
func Program(p *ir.Program, target *Target) diag.List {
	c := getChecker(target)
	defer putChecker(c)
	c.duplicateNames(p.Funcs)
	for _, f := range p.Funcs {
		c.function(f)
	}
	return c.errs.Sort()
}

// duplicateNames reports every function named as an earlier one, at the
// last earlier one. It searches when there are few functions, as a
// program has one or a few (the map it made was a fiftieth of verifying
// a GEMM kernel's source), and uses a map for many (CompileMany's).
func (c *checker) duplicateNames(fs []*ir.Func) {
	const few = 16
	if len(fs) > few {
		seen := make(map[string]ir.Pos, len(fs))
		for _, f := range fs {
			if old, dup := seen[f.Name]; dup {
				c.duplicateName(f, old)
			}
			seen[f.Name] = f.NamePos
		}
		return
	}
	for i, f := range fs {
		for j := i - 1; j >= 0; j-- {
			if fs[j].Name == f.Name {
				c.duplicateName(f, fs[j].NamePos)
				break
			}
		}
	}
}

func (c *checker) duplicateName(f *ir.Func, old ir.Pos) {
	c.errorf(f.NamePos, "function @%s is already defined at %s", f.Name, old)
}

// Func verifies one function.
func Func(f *ir.Func, target *Target) diag.List {
	c := getChecker(target)
	defer putChecker(c)
	c.function(f)
	return c.errs.Sort()
}

type checker struct {
	target *Target
	errs   diag.List

	scopes scopes // the values in scope

	localBytes int64 // sum of the sizes of the function's allocas
	sgs        int64 // the function's subgroup_size attribute (0: not given)

	good       typeSet    // composite types found well formed, kept from program to program
	promotions promotions // likewise, ir.Promotable's answers
	types      []*ir.Type // typesOf's buffer
}

// checkers recycles the checkers' scope tables: every compile verifies
// its program twice, and the tables, sized by the function's values, were
// a twentieth of the bytes a GEMM compile allocates.
var checkers = sync.Pool{New: func() any { return &checker{} }}

func getChecker(target *Target) *checker {
	c := checkers.Get().(*checker)
	c.target = target
	return c
}

// putChecker returns c to the pool, its errors handed over and its tables
// emptied, so that the pool keeps no program alive.
func putChecker(c *checker) {
	c.scopes.reset(0)
	*c = checker{scopes: c.scopes, good: c.good, promotions: c.promotions, types: c.types[:0]}
	checkers.Put(c)
}

func (c *checker) errorf(pos ir.Pos, format string, args ...any) {
	c.errs.Add(pos, format, args...)
}

func (c *checker) function(f *ir.Func) {
	c.scopes.reset(f.NumValues)
	c.localBytes = 0
	c.sgs, _ = f.SubgroupSize()
	for i, v := range f.Params {
		pos := v.Pos
		if !pos.IsValid() {
			pos = f.NamePos
		}
		switch {
		case v.Type == nil || v.Type.Kind() == ir.KindVoid:
			c.errorf(pos, "parameter %%%s cannot have type void", v.Name)
		case v.Type.Kind() == ir.KindCoopmatrix:
			c.errorf(pos, "parameter %%%s cannot have coopmatrix type (coopmatrices live in registers of one subgroup)", v.Name)
		default:
			c.typ(v.Type, pos)
		}
		if i < len(f.ParamAttrs) {
			c.paramAttrs(v, f.ParamAttrs[i], pos)
		}
		c.define(v)
	}
	c.funcAttrs(f)
	if f.Body == nil {
		c.errorf(f.Pos, "function @%s has no body", f.Name)
		return
	}
	c.region(f.Body, ir.RegionCollective)
	if c.target != nil && c.target.LocalMemory > 0 && c.localBytes > c.target.LocalMemory {
		c.errorf(f.NamePos, "the allocas of @%s need %d bytes of local memory, the target has %d", f.Name, c.localBytes, c.target.LocalMemory)
	}
}

func (c *checker) define(v *ir.Value) { c.scopes.define(v) }

func (c *checker) isVisible(v *ir.Value) bool { return c.scopes.visible(v) }

// region checks r, whose effective class is kind (collective or SPMD).
func (c *checker) region(r *ir.Region, kind ir.RegionKind) {
	outer := c.scopes.enter()
	for _, a := range r.Args {
		if a.Region != r {
			c.errorf(a.Pos, "region argument %%%s is not linked to its region", a.Name)
		}
		if a.Type == nil {
			c.errorf(a.Pos, "region argument %%%s has no type", a.Name)
		} else {
			c.typ(a.Type, a.Pos)
		}
		c.define(a)
	}
	for i, in := range r.Insts {
		if in.Parent != r {
			c.errorf(in.Pos, "%s is not linked to its region (a pass forgot Region.Append)", in.Mnemonic())
		}
		if in.Op == ir.OpYield && i != len(r.Insts)-1 {
			c.errorf(in.OpPos(), "yield must be the last instruction of its region")
		}
		c.inst(in, kind)
	}
	c.scopes.leave(outer)
}

// inst checks one instruction: its class against the region, its operands'
// visibility, its own rules, its regions, then defines its results.
func (c *checker) inst(in *ir.Inst, kind ir.RegionKind) {
	switch class := in.Class(); {
	case class == ir.Collective && kind == ir.RegionSPMD:
		c.errorf(in.OpPos(), "%s is a collective instruction and cannot appear in an SPMD region (the body of foreach or parallel)", in.Mnemonic())
	case class == ir.SPMD && kind == ir.RegionCollective:
		c.errorf(in.OpPos(), "%s is an SPMD instruction and can only appear in an SPMD region (wrap it in parallel or foreach)", in.Mnemonic())
	}
	for i, v := range in.Operands {
		if v == nil || !c.isVisible(v) || v.Type == nil {
			c.badOperand(in, i)
			return
		}
	}
	for _, r := range in.Results {
		if r.Def != in || r.Type == nil {
			c.errorf(in.Pos, "result %%%s of %s is not linked to its instruction or has no type", r.Name, in.Mnemonic())
			return
		}
	}
	rule := rules[in.Op]
	if rule == nil {
		c.errorf(in.OpPos(), "invalid opcode %d", in.Op)
		return
	}
	rule(c, in, kind)
	for _, r := range in.Results {
		if !c.known(r.Type) { // (resultType, inlined)
			c.typ(r.Type, in.TypePos()) // duplicates of a rule's report are dropped by Sort
		}
		c.define(r)
	}
}

// badOperand reports why operand i of in, which is nil, not visible or
// untyped, cannot be used.
func (c *checker) badOperand(in *ir.Inst, i int) {
	switch v := in.Operands[i]; {
	case v == nil:
		c.errorf(in.OpPos(), "operand %d of %s is missing", i+1, in.Mnemonic())
	case !c.isVisible(v):
		c.errorf(in.OperandPos(i), "%%%s is not visible here (values defined inside a region cannot be used outside it, and a value must be defined before its use)", v.Name)
	default:
		c.errorf(in.OperandPos(i), "%%%s has no type", v.Name)
	}
}

// typ checks the well-formedness rules of a type that the constructors do
// not enforce: non-negative sizes, the strided-layout order, group offsets
// and coopmatrix sizes.
func (c *checker) typ(t *ir.Type, pos ir.Pos) bool {
	if c.known(t) {
		return true
	}
	ok := c.typeRules(t, pos)
	if ok {
		c.good.add(t)
	}
	return ok
}

// resultType is typ for t, the type of a result of in, reported at in's
// type annotation, whose position is looked up only for a report.
func (c *checker) resultType(in *ir.Inst, t *ir.Type) bool {
	return c.known(t) || c.typ(t, in.TypePos())
}

// known reports whether t is well formed without checking it: a scalar
// (the rules are about composite types), or a composite type found well
// formed before.
func (c *checker) known(t *ir.Type) bool {
	switch t.Kind() {
	case ir.KindMemref, ir.KindGroup, ir.KindCoopmatrix:
		return c.good.has(t)
	}
	return true
}

func (c *checker) typeRules(t *ir.Type, pos ir.Pos) bool {
	switch t.Kind() {
	case ir.KindMemref:
		return c.memrefLayout(t, pos)
	case ir.KindGroup:
		ok := c.memrefLayout(t.Elem(), pos)
		if n := t.GroupSize(); n != ir.Dynamic && n < 0 {
			c.errorf(pos, "group size %d is negative", n)
			ok = false
		}
		if o := t.GroupOffset(); o != ir.Dynamic && o < 0 {
			c.errorf(pos, "group offset %d is negative", o)
			ok = false
		}
		return ok
	case ir.KindCoopmatrix:
		if t.Rows() < 1 || t.Cols() < 1 {
			c.errorf(pos, "coopmatrix shape %dx%d must be positive", t.Rows(), t.Cols())
			return false
		}
	}
	return true
}

// memrefLayout checks 1 ≤ S_1 and S_{i-1}·s_{i-1} ≤ S_i where known.
func (c *checker) memrefLayout(t *ir.Type, pos ir.Pos) bool {
	shape, stride := t.Shape(), t.Stride()
	for i, n := range shape {
		if n != ir.Dynamic && n < 0 {
			c.errorf(pos, "mode %d of %s has negative size", i, t)
			return false
		}
	}
	if len(stride) > 0 && stride[0] != ir.Dynamic && stride[0] < 1 {
		c.errorf(pos, "the first stride of %s must be at least 1", t)
		return false
	}
	for i := 1; i < len(stride); i++ {
		prev, size, s := stride[i-1], shape[i-1], stride[i]
		if prev == ir.Dynamic || size == ir.Dynamic || s == ir.Dynamic {
			continue
		}
		if p, ok := mul(prev, size); ok && p > s {
			c.errorf(pos, "stride %d of %s is %d but must be at least stride×size of mode %d = %d (modes may not overlap)", i, t, s, i-1, p)
			return false
		}
	}
	return true
}

// mul multiplies two non-negative sizes, reporting overflow.
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || p < 0 {
		return 0, false
	}
	return p, true
}

// ---- attributes ----

func (c *checker) paramAttrs(v *ir.Value, attrs ir.Attrs, pos ir.Pos) {
	c.uniqueNames(attrs)
	var m *ir.Type
	if v.Type != nil {
		switch v.Type.Kind() {
		case ir.KindMemref:
			m = v.Type
		case ir.KindGroup:
			m = v.Type.Elem()
		}
	}
	for _, a := range attrs {
		apos := attrPos(a, pos)
		switch a.Name {
		case ir.AttrAlignment, ir.AttrShapeGCD, ir.AttrStrideGCD:
			if m == nil {
				c.errorf(apos, "%s applies to memref and group parameters only, %%%s has type %s", a.Name, v.Name, v.Type)
				continue
			}
		case ir.AttrSubgroupSize, ir.AttrWorkGroupSize, ir.AttrUnroll:
			c.errorf(apos, "%s is not a parameter attribute", a.Name)
			continue
		}
		switch a.Name {
		case ir.AttrAlignment:
			c.alignment(a.Value, m.Elem(), apos)
		case ir.AttrShapeGCD:
			c.gcd(a, m.Shape(), "shape", apos)
		case ir.AttrStrideGCD:
			c.gcd(a, m.Stride(), "stride", apos)
		}
	}
}

func attrPos(a ir.NamedAttr, fallback ir.Pos) ir.Pos {
	if a.Pos.IsValid() {
		return a.Pos
	}
	return fallback
}

func (c *checker) uniqueNames(attrs ir.Attrs) {
	for i, a := range attrs {
		for _, b := range attrs[:i] {
			if a.Name == b.Name {
				c.errorf(a.Pos, "attribute %s given twice", a.Name)
			}
		}
	}
}

func (c *checker) alignment(a ir.Attr, elem *ir.Type, pos ir.Pos) {
	if a.Kind != ir.AttrInt || a.Int < 1 {
		c.errorf(pos, "alignment must be a positive integer, found %s", a)
		return
	}
	if a.Int%elem.Size() != 0 {
		c.errorf(pos, "alignment %d is not a multiple of the size of %s (%d bytes)", a.Int, elem, elem.Size())
	}
}

// gcd checks shape_gcd or stride_gcd against the memref's entries.
func (c *checker) gcd(a ir.NamedAttr, entries []int64, what string, pos ir.Pos) {
	ds, ok := a.Value.Ints()
	if !ok {
		c.errorf(pos, "%s must be an array of integers, found %s", a.Name, a.Value)
		return
	}
	if len(ds) > len(entries) {
		c.errorf(pos, "%s has %d entries but the memref has order %d", a.Name, len(ds), len(entries))
		return
	}
	for i, d := range ds {
		switch {
		case d < 1:
			c.errorf(pos, "%s entry %d must be positive, found %d", a.Name, i, d)
		case entries[i] != ir.Dynamic && entries[i]%d != 0:
			c.errorf(pos, "%s entry %d asserts that %s %d is a multiple of %d, but it is %d", a.Name, i, what, i, d, entries[i])
		}
	}
}

func (c *checker) funcAttrs(f *ir.Func) {
	c.uniqueNames(f.Attrs)
	sgs := int64(0)
	for _, a := range f.Attrs {
		pos := attrPos(a, f.NamePos)
		switch a.Name {
		case ir.AttrSubgroupSize:
			if a.Value.Kind != ir.AttrInt || a.Value.Int < 1 {
				c.errorf(pos, "subgroup_size must be a positive integer, found %s", a.Value)
				continue
			}
			sgs = a.Value.Int
			if c.target != nil && len(c.target.SubgroupSizes) > 0 && !slices.Contains(c.target.SubgroupSizes, sgs) {
				c.errorf(pos, "subgroup_size %d is not supported by the target (supported: %v)", sgs, c.target.SubgroupSizes)
			}
		case ir.AttrWorkGroupSize:
			if wg, ok := intPair(a.Value); !ok || wg[0] < 1 || wg[1] < 1 {
				c.errorf(pos, "work_group_size must be an array of 2 positive integers, found %s", a.Value)
			}
		case ir.AttrAlignment, ir.AttrShapeGCD, ir.AttrStrideGCD, ir.AttrUnroll:
			c.errorf(pos, "%s is not a function attribute", a.Name)
		}
	}
	a, _ := f.Attrs.Lookup(ir.AttrWorkGroupSize) // f.WorkGroupSize, without its allocation
	if wg, ok := intPair(a); ok && wg[0] >= 1 && wg[1] >= 1 {
		c.workGroupSize(f, wg, sgs)
	}
}

// intPair returns the entries of a, an array of two integers, without
// the slice a.Ints allocates (the verifier's only allocations).
func intPair(a ir.Attr) (pair [2]int64, ok bool) {
	if a.Kind != ir.AttrArray || len(a.Array) != 2 {
		return pair, false
	}
	for i, e := range a.Array {
		if e.Kind != ir.AttrInt {
			return pair, false
		}
		pair[i] = e.Int
	}
	return pair, true
}

func (c *checker) workGroupSize(f *ir.Func, wg [2]int64, sgs int64) {
	pos := f.NamePos
	for _, a := range f.Attrs {
		if a.Name == ir.AttrWorkGroupSize {
			pos = attrPos(a, pos)
		}
	}
	if sgs > 0 && wg[0]%sgs != 0 {
		c.errorf(pos, "the first mode of work_group_size (%d) must be a multiple of subgroup_size (%d)", wg[0], sgs)
	}
	if c.target == nil {
		return
	}
	if sizes := c.target.SubgroupSizes; sgs == 0 && len(sizes) > 0 &&
		!slices.ContainsFunc(sizes, func(s int64) bool { return wg[0]%s == 0 }) {
		c.errorf(pos, "the first mode of work_group_size (%d) must be a multiple of a subgroup size the target supports (%v)", wg[0], sizes)
	}
	if max := c.target.MaxWorkGroupSize; max > 0 && (wg[0] > max || wg[1] > max || wg[0]*wg[1] > max) {
		c.errorf(pos, "work_group_size %dx%d has more work-items than the target allows (%d)", wg[0], wg[1], max)
	}
}

// ---- shared rule helpers ----

// count checks the number of operands and results; rules rely on it.
// (The test is inlined into every rule, the report is not.)
func (c *checker) count(in *ir.Inst, operands, results int) bool {
	if len(in.Operands) == operands && len(in.Results) == results {
		return true
	}
	return c.miscounted(in, operands, results)
}

// miscounted reports the counts of in that are not what count wants and
// returns false.
func (c *checker) miscounted(in *ir.Inst, operands, results int) bool {
	if len(in.Operands) != operands {
		c.errorf(in.OpPos(), "%s takes %d operands, found %d", in.Mnemonic(), operands, len(in.Operands))
	}
	if len(in.Results) != results {
		c.errorf(in.OpPos(), "%s returns %d values, found %d", in.Mnemonic(), results, len(in.Results))
	}
	return false
}

// want checks that operand i has a kind accepted by ok and reports what was
// expected otherwise.
func (c *checker) want(in *ir.Inst, i int, what string, ok func(*ir.Type) bool) bool {
	t := in.Operands[i].Type
	if ok(t) {
		return true
	}
	c.errorf(in.OperandPos(i), "operand %d of %s (%%%s) must be %s, found %s", i+1, in.Mnemonic(), in.Operands[i].Name, what, t)
	return false
}

func isMemref(t *ir.Type) bool { return t.Kind() == ir.KindMemref }
func isScalar(t *ir.Type) bool { return t.IsScalar() }
func isIndex(t *ir.Type) bool  { return t == ir.Index }
func isCoop(t *ir.Type) bool   { return t.Kind() == ir.KindCoopmatrix }

// indices checks that operands from first on are of index type.
func (c *checker) indices(in *ir.Inst, first int) {
	for i := first; i < len(in.Operands); i++ {
		c.wantIndex(in, i)
	}
}

// wantIndex is want(in, i, "of index type", isIndex) with the test
// inlined: index operands are checked by the hundred.
func (c *checker) wantIndex(in *ir.Inst, i int) {
	if in.Operands[i].Type != ir.Index {
		c.want(in, i, "of index type", isIndex)
	}
}

// resultIs checks the single result's type against want.
func (c *checker) resultIs(in *ir.Inst, want *ir.Type) {
	if got := in.Results[0].Type; got != want {
		c.errorf(in.TypePos(), "%s returns %s, not %s", in.Mnemonic(), want, got)
	}
}

// promotes checks a ⪯ b and reports it with the operands' roles.
func (c *checker) promotes(in *ir.Inst, pos ir.Pos, a, b *ir.Type, aWhat, bWhat role) {
	if a != nil && b != nil && !c.promotions.promotable(a, b) {
		c.errorf(pos, "%s: %s (%s) does not promote to %s (%s)", in.Mnemonic(), aWhat, a, bWhat, b)
	}
}

// role says what a type is in a message: text, then the name of value of
// when there is one ("the element type of %C"). It is spelled out only
// for a report: joined up front, the roles of a BLAS instruction were
// most of the verifier's allocations on a GEMM source.
type role struct {
	text string
	of   *ir.Value
}

func (r role) String() string {
	if r.of == nil {
		return r.text
	}
	return r.text + name(r.of)
}

func dims(t *ir.Type) string {
	s := "("
	for i, n := range t.Shape() {
		if i > 0 {
			s += ","
		}
		if n == ir.Dynamic {
			s += "?"
		} else {
			s += fmt.Sprint(n)
		}
	}
	return s + ")"
}
