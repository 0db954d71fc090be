package opencl

import "fmt"

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
	arg     string // kernel argument type
	size    int    // bytes in memory
	halfway bool   // memory is 16-bit float read with vload_half / written with vstore_half
	bf16    bool   // memory is bfloat16 stored as ushort
}

// lookupScalar maps a type name to its C view for a target with native f16
// (nativeF16) or without.
func lookupScalar(name string, nativeF16 bool) (scalarInfo, error) {
	switch name {
	case "bool":
		return scalarInfo{kind: kindBool, mem: "char", reg: "bool", arg: "int", size: 1}, nil
	case "i8":
		return scalarInfo{kind: kindInt, mem: "char", reg: "char", arg: "char", size: 1}, nil
	case "i16":
		return scalarInfo{kind: kindInt, mem: "short", reg: "short", arg: "short", size: 2}, nil
	case "i32":
		return scalarInfo{kind: kindInt, mem: "int", reg: "int", arg: "int", size: 4}, nil
	case "i64", "index":
		return scalarInfo{kind: kindInt, mem: "long", reg: "long", arg: "long", size: 8}, nil
	case "f16":
		if nativeF16 {
			return scalarInfo{kind: kindFloat, mem: "half", reg: "half", arg: "half", size: 2}, nil
		}
		return scalarInfo{kind: kindFloat, mem: "half", reg: "float", arg: "float", size: 2, halfway: true}, nil
	case "bf16":
		return scalarInfo{kind: kindFloat, mem: "ushort", reg: "float", arg: "float", size: 2, bf16: true}, nil
	case "f32":
		return scalarInfo{kind: kindFloat, mem: "float", reg: "float", arg: "float", size: 4}, nil
	case "f64":
		return scalarInfo{kind: kindFloat, mem: "double", reg: "double", arg: "double", size: 8}, nil
	case "c32":
		return scalarInfo{kind: kindComplex, mem: "float2", reg: "float2", arg: "float2", size: 8}, nil
	case "c64":
		return scalarInfo{kind: kindComplex, mem: "double2", reg: "double2", arg: "double2", size: 16}, nil
	}
	return scalarInfo{}, fmt.Errorf("opencl: no C type for %q", name)
}

// realOf is the component type of a complex C type.
func realOf(reg string) string {
	if reg == "double2" {
		return "double"
	}
	return "float"
}
