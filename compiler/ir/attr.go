package ir

import (
	"math"
	"strconv"
	"strings"
)

// AttrKind classifies an Attr.
type AttrKind uint8

// Attribute kinds.
const (
	AttrInt AttrKind = iota
	AttrBool
	AttrString
	AttrArray
	AttrDict
)

// Attr is an attribute value: an integer, a boolean, a string, an array of
// attributes or a dictionary.
type Attr struct {
	// (The byte-sized fields and the position first, together: 88 bytes
	// instead of 96, and a parsed kernel has a few dozen attributes.)
	Kind  AttrKind
	Bool  bool   // AttrBool
	Pos   Pos    // where the attribute starts in the source (zero when built)
	Int   int64  // AttrInt
	Str   string // AttrString (without quotes)
	Array []Attr // AttrArray
	Dict  Attrs  // AttrDict
}

// Known attribute names. Names outside this list are written as strings.
const (
	AttrAlignment     = "alignment"
	AttrShapeGCD      = "shape_gcd"
	AttrStrideGCD     = "stride_gcd"
	AttrSubgroupSize  = "subgroup_size"
	AttrUnroll        = "unroll"
	AttrWorkGroupSize = "work_group_size"
	// AttrSwizzle on a local alloca (set by the lowering, never written by
	// hand) asks that the 16-byte chunks of each 128-byte row of the buffer
	// be permuted: byte b lives at b ^ (((b >> s) & 7) << 4), s the
	// attribute's value (at least 7). It is a physical layout only: every
	// access through the buffer's views sees the logical layout, so a back
	// end may ignore it.
	AttrSwizzle = "tltune.swizzle"
)

// IsKeywordAttrName reports whether name is written without quotes.
func IsKeywordAttrName(name string) bool {
	switch name {
	case AttrAlignment, AttrShapeGCD, AttrStrideGCD, AttrSubgroupSize, AttrUnroll, AttrWorkGroupSize:
		return true
	}
	return false
}

// IntAttr, BoolAttr, StringAttr and ArrayAttr build attributes.
func IntAttr(v int64) Attr         { return Attr{Kind: AttrInt, Int: v} }
func BoolAttr(v bool) Attr         { return Attr{Kind: AttrBool, Bool: v} }
func StringAttr(s string) Attr     { return Attr{Kind: AttrString, Str: s} }
func ArrayAttr(elems ...Attr) Attr { return Attr{Kind: AttrArray, Array: elems} }

// IntArrayAttr builds an array of integer attributes.
func IntArrayAttr(vs ...int64) Attr {
	a := Attr{Kind: AttrArray, Array: make([]Attr, len(vs))}
	for i, v := range vs {
		a.Array[i] = IntAttr(v)
	}
	return a
}

// Ints returns the entries of an array of integers, or ok=false if a is not
// such an array.
func (a Attr) Ints() (vs []int64, ok bool) {
	if a.Kind != AttrArray {
		return nil, false
	}
	vs = make([]int64, len(a.Array))
	for i, e := range a.Array {
		if e.Kind != AttrInt {
			return nil, false
		}
		vs[i] = e.Int
	}
	return vs, true
}

// String returns the canonical spelling of a.
func (a Attr) String() string {
	var b strings.Builder
	a.write(&b)
	return b.String()
}

func (a Attr) write(b *strings.Builder) {
	switch a.Kind {
	case AttrInt:
		b.WriteString(strconv.FormatInt(a.Int, 10))
	case AttrBool:
		b.WriteString(strconv.FormatBool(a.Bool))
	case AttrString:
		b.WriteString(`"` + a.Str + `"`)
	case AttrArray:
		b.WriteString("[")
		for i, e := range a.Array {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteString("]")
	case AttrDict:
		a.Dict.write(b)
	}
}

// NamedAttr is one entry of an attribute dictionary.
type NamedAttr struct {
	Name  string // without quotes
	Value Attr
	Pos   Pos // of the name
}

// Attrs is an attribute dictionary in source order. Names are unique (the
// verifier checks it).
type Attrs []NamedAttr

// Lookup returns the attribute called name.
func (d Attrs) Lookup(name string) (Attr, bool) {
	for _, a := range d {
		if a.Name == name {
			return a.Value, true
		}
	}
	return Attr{}, false
}

// Int returns the integer attribute called name.
func (d Attrs) Int(name string) (int64, bool) {
	a, ok := d.Lookup(name)
	if !ok || a.Kind != AttrInt {
		return 0, false
	}
	return a.Int, true
}

// Bool returns the boolean attribute called name.
func (d Attrs) Bool(name string) (v, ok bool) {
	a, ok := d.Lookup(name)
	if !ok || a.Kind != AttrBool {
		return false, false
	}
	return a.Bool, true
}

// Ints returns the integer-array attribute called name.
func (d Attrs) Ints(name string) ([]int64, bool) {
	a, ok := d.Lookup(name)
	if !ok {
		return nil, false
	}
	return a.Ints()
}

// Set replaces the attribute called name or appends it.
func (d *Attrs) Set(name string, v Attr) {
	for i := range *d {
		if (*d)[i].Name == name {
			(*d)[i].Value = v
			return
		}
	}
	*d = append(*d, NamedAttr{Name: name, Value: v})
}

// String returns the canonical spelling of the dictionary.
func (d Attrs) String() string {
	var b strings.Builder
	d.write(&b)
	return b.String()
}

func (d Attrs) write(b *strings.Builder) {
	b.WriteString("{")
	for i, a := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		if IsKeywordAttrName(a.Name) {
			b.WriteString(a.Name)
		} else {
			b.WriteString(`"` + a.Name + `"`)
		}
		b.WriteString("=")
		a.Value.write(b)
	}
	b.WriteString("}")
}

// ConstKind classifies a Constant.
type ConstKind uint8

// Constant kinds.
const (
	ConstBool ConstKind = iota
	ConstInt
	ConstFloat
	ConstComplex
)

// Constant is the literal of a constant instruction. Float constants keep
// their float64 value; the printer writes the shortest spelling that parses
// back to the same float64, so printing never changes a program.
type Constant struct {
	Kind  ConstKind
	Bool  bool    // ConstBool
	Int   int64   // ConstInt, in [-2^63+1, 2^63-1]
	Float float64 // ConstFloat; the real part of ConstComplex
	Imag  float64 // ConstComplex
}

// String returns the canonical spelling of c.
func (c Constant) String() string {
	switch c.Kind {
	case ConstBool:
		return strconv.FormatBool(c.Bool)
	case ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case ConstFloat:
		return FormatFloat(c.Float)
	}
	return "[" + FormatFloat(c.Float) + ", " + FormatFloat(c.Imag) + "]"
}

// FormatFloat writes f so that the language reads it back as a floating
// constant with exactly the same value: decimal with a "." (infinities and
// NaN as inf, -inf and nan, as the released tinytc spells them).
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	} else if i := strings.IndexByte(s, 'e'); i >= 0 && !strings.Contains(s[:i], ".") {
		// The grammar needs a "." or an exponent; "1e+10" is fine, but keep
		// the mantissa explicit for readability: "1.0e+10".
		s = s[:i] + ".0" + s[i:]
	}
	return s
}

// ParseInt parses a decimal integer constant with optional sign and reports
// whether it lies in the range of the language, -2^63+1 ... 2^63-1.
// Constants of up to 18 digits, which cannot leave that range and are
// what kernels are made of, are read here; strconv's general parser was a
// twentieth of parsing a GEMM kernel.
func ParseInt(s string) (int64, bool) {
	if v, ok := parseShortInt(s); ok {
		return v, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v == Dynamic {
		return 0, false
	}
	return v, true
}

// parseShortInt parses s when it is a sign and at most 18 decimal digits;
// ok is false for anything else, which ParseInt leaves to strconv.
func parseShortInt(s string) (v int64, ok bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int64(c-'0')
	}
	if s[0] == '-' {
		v = -v
	}
	return v, true
}
