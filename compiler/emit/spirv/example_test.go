package spirv_test

import (
	"fmt"
	"strings"

	"tltune/compiler"
	"tltune/compiler/emit/spirv"
)

// The driver's path to a SPIR-V binary and its text: compile, then emit
// from the lowered program with the launch the pipeline chose.
func ExampleEmit() {
	src := `func @scale(%x: memref<f32x64x?>) {
    %g = builtin.group_id : index
    %v = subview %x[0:64, %g] : memref<f32x64>
    %two = constant 2.0 : f32
    %zero = constant 0.0 : f32
    axpby.n %two, %v, %zero, %v
}`
	res, err := compiler.Compile([]byte(src), compiler.Options{Target: "generic"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := spirv.Emit(res.Lowered, res.Target, launches(res))
	if err != nil {
		fmt.Println(err)
		return
	}
	text, _ := spirv.Disassemble(out.Module)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "OpCapability") || strings.HasPrefix(line, "OpMemoryModel") {
			fmt.Println(line)
		}
	}
	k := out.Kernels[0]
	fmt.Println(k.Name, len(k.Args), "arguments, validates as", out.Env)
	// Output:
	// OpCapability Addresses
	// OpCapability Kernel
	// OpCapability Int64
	// OpMemoryModel Physical64 OpenCL
	// scale 2 arguments, validates as opencl1.2
}
