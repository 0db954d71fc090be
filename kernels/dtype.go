package kernels

import (
	"fmt"
	"math"
	"strings"

	"tltune/compiler/numeric"
)

// DType is an element type a recipe can compute with: the floating and
// complex scalar types of the tensor language.
type DType uint8

// The element types, in promotion order within each family.
const (
	F16 DType = iota + 1
	BF16
	F32
	F64
	C32
	C64
)

// DTypes lists every element type, in the order help texts print them.
var DTypes = []DType{F16, BF16, F32, F64, C32, C64}

var dtypeNames = map[DType]string{F16: "f16", BF16: "bf16", F32: "f32", F64: "f64", C32: "c32", C64: "c64"}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// ParseDType returns the element type spelled s in the tensor language.
func ParseDType(s string) (DType, error) {
	for _, d := range DTypes {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want one of %s)", s, dtypeList(DTypes))
}

func dtypeList(ds []DType) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.String()
	}
	return strings.Join(names, ", ")
}

// IsComplex reports whether d is c32 or c64.
func (d DType) IsComplex() bool { return d == C32 || d == C64 }

// Size is the size of one element in bytes.
func (d DType) Size() int {
	switch d {
	case F16, BF16:
		return 2
	case F32:
		return 4
	case F64, C32:
		return 8
	case C64:
		return 16
	}
	panic("kernels: size of invalid DType " + d.String())
}

// componentSize is the size of one real component (the whole element for a
// real type).
func (d DType) componentSize() int {
	if d.IsComplex() {
		return d.Size() / 2
	}
	return d.Size()
}

// PromotesTo reports whether every value of d is exactly representable in
// to, the relation ⪯ of the language reference restricted to these types.
// The accumulation type of a recipe must satisfy dtype ⪯ acc.
func (d DType) PromotesTo(to DType) bool {
	switch d {
	case F16, BF16:
		return to == d || to == F32 || to == F64 || to == C32 || to == C64
	case F32:
		return to == F32 || to == F64 || to == C32 || to == C64
	case C32:
		return to == C32 || to == C64
	case F64:
		return to == F64 || to == C64
	case C64:
		return to == C64
	}
	return false
}

// UnitRoundoff is u = 2^-p for the p-bit significand of d's components: the
// largest relative error of one correctly rounded operation.
func (d DType) UnitRoundoff() float64 {
	switch d {
	case F16:
		return math.Ldexp(1, -11)
	case BF16:
		return math.Ldexp(1, -8)
	case F32, C32:
		return math.Ldexp(1, -24)
	}
	return math.Ldexp(1, -53)
}

// roundReal rounds x to the nearest value of d's component type.
func (d DType) roundReal(x float64) float64 {
	switch d {
	case F16:
		return numeric.RoundF16(x)
	case BF16:
		return numeric.RoundBF16(x)
	case F32, C32:
		return numeric.RoundF32(x)
	}
	return x
}

// Round rounds z to the nearest value of d, component by component. For a
// real type the imaginary part is dropped.
func (d DType) Round(z complex128) complex128 {
	if !d.IsComplex() {
		return complex(d.roundReal(real(z)), 0)
	}
	return complex(d.roundReal(real(z)), d.roundReal(imag(z)))
}
