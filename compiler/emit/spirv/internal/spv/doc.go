// Package spv owns the SPIR-V binary encoding used by tltune's back end: the
// grammar tables generated from Khronos' JSON (tables.go, by `go generate`),
// a module Builder that tracks the capabilities, extensions and SPIR-V
// version a module needs from what it emits, and a disassembler that prints
// a module as stable, readable text for golden tests and
// `tltune compile --emit=spirv-asm`.
package spv

import "sync"

//go:generate go run ./gen -o tables.go

// Op is a SPIR-V opcode.
type Op uint16

// OperandKind is a kind of operand in the grammar (IdRef, LiteralInteger,
// Decoration, ...).
type OperandKind uint8

// Quantifier says how often an operand occurs.
type Quantifier uint8

const (
	One      Quantifier = iota // exactly once
	Optional                   // zero or one time ("?")
	Variadic                   // zero or more times ("*")
)

// Operand is one entry of an opcode's operand layout.
type Operand struct {
	Kind  OperandKind
	Quant Quantifier
}

// OpInfo describes an opcode: its name, its operands and what a module
// using it must declare. Caps lists alternatives: any one suffices.
type OpInfo struct {
	Name     string
	Operands []Operand
	Caps     []Capability
	Exts     []string
	Version  uint32 // minimum SPIR-V version, encoded as in the header; 0: only through Exts
}

// EnumInfo describes one enumerant; Params are the operands that follow it
// (LocalSize's three sizes, BuiltIn's built-in, ...).
type EnumInfo struct {
	Name    string
	Value   uint32
	Caps    []Capability
	Exts    []string
	Version uint32 // as OpInfo.Version
	Params  []OperandKind
}

type kindEntry struct{ name, category string }

// CLExtInst is an instruction number of the OpenCL.std extended instruction
// set.
type CLExtInst uint32

// Info returns the grammar entry of op, or nil for an unknown opcode.
func (op Op) Info() *OpInfo { return opInfo[op] }

func (op Op) String() string {
	if in := opInfo[op]; in != nil {
		return in.Name
	}
	return "Op?" + itoa(uint32(op))
}

func (k OperandKind) String() string { return kindInfo[k].name }

// Category is the grammar's category of k: Id, Literal, ValueEnum, BitEnum
// or Composite.
func (k OperandKind) Category() string { return kindInfo[k].category }

// Enumerant returns the entry of value v of enumeration kind k.
func Enumerant(k OperandKind, v uint32) (EnumInfo, bool) {
	if e := enumIndex()[enumKey(k, v)]; e != nil {
		return *e, true
	}
	return EnumInfo{}, false
}

// enumIndex maps kind and value to the enumerant's entry, the first of
// aliases as the grammar lists them. Scanning a kind's entries instead
// (two hundred capabilities of a hundred bytes each) was a twentieth of
// writing a module: every capability a module declares is looked up.
var enumIndex = sync.OnceValue(func() map[uint64]*EnumInfo {
	idx := map[uint64]*EnumInfo{}
	for k, es := range enumInfo {
		for i := range es {
			if key := enumKey(k, es[i].Value); idx[key] == nil {
				idx[key] = &es[i]
			}
		}
	}
	return idx
})

func enumKey(k OperandKind, v uint32) uint64 { return uint64(k)<<32 | uint64(v) }

// Enumerants lists the generated enumerants of kind k in grammar order.
func Enumerants(k OperandKind) []EnumInfo { return enumInfo[k] }

func (i CLExtInst) String() string {
	if s, ok := clExtNames[i]; ok {
		return s
	}
	return "cl?" + itoa(uint32(i))
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
