package hostcall

import (
	"fmt"

	"tltune/compiler"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
)

// cTypes maps the C types of scalar kernel arguments (docs/abi.md) to the
// tensor-language type with the same encoding.
var cTypes = map[string]*ir.Type{
	"char": ir.I8, "short": ir.I16, "int": ir.I32, "long": ir.I64,
	"half": ir.F16, "float": ir.F32, "double": ir.F64,
	"float2": ir.C32, "double2": ir.C64,
}

// scalar encodes p as argument a. The value is first rounded to the
// parameter's declared type (a.Elem), as the interpreter does when it binds
// a parameter, and then stored in the C type: an f16 parameter passed as
// float is therefore already an f16 value, and bool becomes int 0 or 1.
func scalar(a compiler.Arg, p Param) (Arg, error) {
	ct := cTypes[a.CType]
	if ct == nil {
		return Arg{}, fmt.Errorf("scalar argument of C type %q", a.CType)
	}
	declared := ct
	if a.Elem != "" {
		declared = ir.BasicByName(a.Elem)
		if declared == nil {
			return Arg{}, fmt.Errorf("unknown scalar type %q", a.Elem)
		}
	}
	v := roundTo(declared, p)
	out := interp.NewBuffer(ct, 1)
	switch {
	case ct.IsComplex():
		out.SetComplex(0, v.Complex)
	case ct.IsFloat():
		out.SetFloat(0, v.Float)
	default:
		out.SetInt(0, v.Int)
	}
	return Arg{Arg: a, Scalar: out.Data}, nil
}

// roundTo returns p's value of t's family rounded to t, in the field the C
// type's family reads (an integer parameter never feeds a float argument, but
// f16 and bf16 feed float).
func roundTo(t *ir.Type, p Param) Param {
	if t.Kind() == ir.KindBool {
		if p.Int != 0 {
			return Param{Int: 1}
		}
		return Param{}
	}
	b := interp.NewBuffer(t, 1)
	switch {
	case t.IsComplex():
		b.SetComplex(0, p.Complex)
		return Param{Complex: b.Complex(0)}
	case t.IsFloat():
		b.SetFloat(0, p.Float)
		return Param{Float: b.Float(0)}
	}
	b.SetInt(0, p.Int)
	return Param{Int: b.Int(0)}
}
