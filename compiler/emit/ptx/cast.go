package ptx

import "tltune/compiler/ir"

// cast writes a cast between scalar types, as the OpenCL C writer's cast
// and convert: integers resize (C's conversions), reals convert through
// f32 where C holds f16 and bf16 in float, complex values part by part.
func (e *fn) cast(in *ir.Inst) error {
	a, r := in.Operands[0], in.Result()
	from, to := a.Type, r.Type
	if from.IsInteger() && to == ir.Index {
		defer e.learn(r, e.known(a)) // an index holds every integer
	}
	switch {
	case from == ir.Index && to == ir.Index:
		e.vals.Set(r, affineVal(e.affineOf(a, e.width(r))))
	case from.IsInteger() && to.IsInteger():
		e.vals.Set(r, one(widthClass(e.width(r)), e.intAs(a, e.width(r))))
	case from.IsComplex() && to.IsComplex():
		x := e.value(a)
		rc, _ := classOf(to, false)
		e.vals.Set(r, two(rc, e.convertReal(x.parts[0], from.ComponentType(), to.ComponentType()),
			e.convertReal(x.parts[1], from.ComponentType(), to.ComponentType())))
	case to.IsComplex() && from.IsFloat():
		rc, _ := classOf(to, false)
		zero := e.def(rc, movOf(rc), floatBits(0, to.ComponentType()))
		e.vals.Set(r, two(rc, e.convertReal(e.value(a).x(), from, to.ComponentType()), zero))
	case from.IsFloat() && to.IsFloat():
		e.vals.Set(r, one(mustClass(to), e.convertReal(e.value(a).x(), from, to)))
	case from.IsInteger() && to.IsFloat() && (to.Kind() == ir.KindF32 || to.Kind() == ir.KindF64):
		w := e.width(a)
		x := e.value(a).x()
		if isImm(x) {
			x = e.def(widthClass(w), movOf(widthClass(w)), x)
		}
		e.vals.Set(r, one(mustClass(to), e.def(mustClass(to), "cvt.rn."+typeName(to)+"."+widthSuffix(w), x)))
	default:
		return unsupported("cast from %s to %s", from, to)
	}
	return nil
}

// mustClass is the class of real type t.
func mustClass(t *ir.Type) class {
	c, _ := classOf(t, false)
	return c
}

// convertReal converts register x of real type from to real type to. C
// computes f16 and bf16 in float: a conversion between them or from f64
// rounds to f32 first, as the C's does.
func (e *fn) convertReal(x string, from, to *ir.Type) string {
	if from.Kind() == to.Kind() {
		return x
	}
	half := func(t *ir.Type) bool { return t.Kind() == ir.KindF16 || t.Kind() == ir.KindBF16 }
	if half(to) && from.Kind() != ir.KindF32 {
		x, from = e.convertReal(x, from, ir.F32), ir.F32
	}
	if half(from) && to.Kind() != ir.KindF32 && to.Kind() != ir.KindF64 {
		x, from = e.convertReal(x, from, ir.F32), ir.F32
	}
	widening := from.Size() < to.Size()
	mode := "cvt.rn."
	if widening {
		mode = "cvt." // exact
	}
	return e.def(mustClass(to), mode+typeName(to)+"."+typeName(from), x)
}
