package opencl

import (
	"fmt"

	"tltune/compiler/ir"
)

// scalarKind classifies a tensor-language scalar type for C generation.
type scalarKind int

const (
	kindBool scalarKind = iota
	kindInt
	kindFloat
	kindComplex
)

// scalarInfo is the C view of one tensor-language scalar type: how it is
// stored in memory, how it is computed with, and how it travels as a kernel
// argument (OpenCL forbids bool, and half without cl_khr_fp16, as arguments).
type scalarInfo struct {
	kind    scalarKind
	mem     string // element type behind a pointer
	reg     string // type of a private variable holding a value
	decl    string // reg and a space, as a declaration starts
	arg     string // kernel argument type
	size    int    // bytes in memory
	halfway bool   // memory is 16-bit float read with vload_half / written with vstore_half
	bf16    bool   // memory is bfloat16 stored as ushort
}

// scalarInfos is the C view of each scalar kind (and bool), f16 as on a
// target without native f16. A table by kind: the emitter asks for nearly
// every value it writes, and switching on the type's spelling was a
// twentieth of writing a kernel.
var scalarInfos = [...]scalarInfo{
	ir.KindBool:  {kind: kindBool, mem: "char", reg: "bool", decl: "bool ", arg: "int", size: 1},
	ir.KindI8:    {kind: kindInt, mem: "char", reg: "char", decl: "char ", arg: "char", size: 1},
	ir.KindI16:   {kind: kindInt, mem: "short", reg: "short", decl: "short ", arg: "short", size: 2},
	ir.KindI32:   {kind: kindInt, mem: "int", reg: "int", decl: "int ", arg: "int", size: 4},
	ir.KindI64:   {kind: kindInt, mem: "long", reg: "long", decl: "long ", arg: "long", size: 8},
	ir.KindIndex: {kind: kindInt, mem: "long", reg: "long", decl: "long ", arg: "long", size: 8},
	ir.KindF16:   {kind: kindFloat, mem: "half", reg: "float", decl: "float ", arg: "float", size: 2, halfway: true},
	ir.KindBF16:  {kind: kindFloat, mem: "ushort", reg: "float", decl: "float ", arg: "float", size: 2, bf16: true},
	ir.KindF32:   {kind: kindFloat, mem: "float", reg: "float", decl: "float ", arg: "float", size: 4},
	ir.KindF64:   {kind: kindFloat, mem: "double", reg: "double", decl: "double ", arg: "double", size: 8},
	ir.KindC32:   {kind: kindComplex, mem: "float2", reg: "float2", decl: "float2 ", arg: "float2", size: 8},
	ir.KindC64:   {kind: kindComplex, mem: "double2", reg: "double2", decl: "double2 ", arg: "double2", size: 16},
}

// nativeF16Info is the C view of f16 on a target with native f16.
var nativeF16Info = scalarInfo{kind: kindFloat, mem: "half", reg: "half", decl: "half ", arg: "half", size: 2}

// lookupScalar returns the C view of scalar or bool type t for a target
// with native f16 (nativeF16) or without: an entry of the tables above,
// which nothing modifies (a pointer: the views are asked for by the
// thousand, and copying them was a fortieth of writing a kernel).
func lookupScalar(t *ir.Type, nativeF16 bool) (*scalarInfo, error) {
	k := t.Kind()
	switch {
	case k == ir.KindF16 && nativeF16:
		return &nativeF16Info, nil
	case int(k) < len(scalarInfos) && scalarInfos[k].reg != "":
		return &scalarInfos[k], nil
	}
	return nil, fmt.Errorf("opencl: no C type for %q", t)
}

// realOf is the component type of a complex C type.
func realOf(reg string) string {
	if reg == "double2" {
		return "double"
	}
	return "float"
}
