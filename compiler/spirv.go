package compiler

import (
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/ir"
)

// SPIRV emits the compiled program as a SPIR-V module: the same lowered
// program, launch configuration and kernel ABI as the OpenCL C in r. It is
// the path of devices that take SPIR-V (Level Zero, OpenCL devices listing a
// SPIR-V IL); the nvidia target has no SPIR-V form (its subgroup operations
// are inline PTX). With Options.SPIRVOnly it is the module Compile wrote.
func (r *Result) SPIRV() (*spirv.Output, error) {
	if r.spirv != nil {
		return r.spirv, nil
	}
	launch := make(map[*ir.Func]opencl.Launch, len(r.Kernels))
	for i, f := range r.Lowered.Funcs {
		launch[f] = r.Kernels[i].Launch
	}
	return spirv.Emit(r.Lowered, r.Target, launch)
}
