// Package spirv writes a SPIR-V module for a lowered tensor-language
// program: the path Intel GPUs (Level Zero, OpenCL with SPIR-V IL) take, and
// — through `llvm-spirv-15 -r` and cl_khr_spir — PoCL.
//
// It consumes the same lowered IR as compiler/emit/opencl (scalar and
// memref instructions, control flow, parallel regions, subgroup operations
// and cooperative matrices), with the same launch configuration and the same
// kernel ABI (docs/abi.md): Output.Kernels is what opencl.Emit returns for
// the program, so a host binds arguments the same way for both back ends.
//
// Entry point for the driver (`tltune compile --emit=spirv|spirv-asm`):
//
//	res, _ := compiler.Compile(src, opts)            // pipeline + OpenCL C
//	launch := map[*ir.Func]opencl.Launch{}
//	for i, f := range res.Lowered.Funcs {
//		launch[f] = res.Kernels[i].Launch
//	}
//	out, err := spirv.Emit(res.Lowered, res.Target, launch)
//	// out.Module: the binary; spirv.Disassemble(out.Module): the text.
//
// Emit refuses the nvidia and emulated targets (their shuffles are inline
// PTX and local memory). On an intel target whose device has DPAS (t.MMA),
// the mul_adds the OpenCL C writer gives to the engine call its built-ins
// here too, on the same fragment layout (dpas.go); other cooperative
// matrices are multiplied with FMAs and shuffles. EmitWith takes Options
// for devices with known gaps (NoBlockIO).
//
// The module is a Kernel-model module with Physical64 addressing and the
// OpenCL memory model; capabilities, extensions and the SPIR-V version are
// derived from what it uses (internal/spv). Per target:
//
//   - generic: SPIR-V 1.0, no subgroup operations (subgroup size 1), f16 in
//     memory only (vload_half/vstore_half, Float16Buffer) and computed in
//     f32, float atomics as compare-exchange loops on the bit pattern.
//     spirv-val environment opencl1.2 (Output.Env): PoCL 3.1 is OpenCL 1.2.
//   - intel: SubgroupSize execution mode (SubgroupDispatch, SPIR-V 1.1),
//     shuffles through SPV_INTEL_subgroups (8- and 16-bit values moved as
//     32-bit integers), block reads and writes of cooperative-matrix columns
//     with unit row stride and 32-bit elements, subgroup reductions and
//     scans as OpGroup* instructions (Groups), native f16 (Float16), float
//     atomic add as OpAtomicFAddEXT. spirv-val environment opencl2.2.
//
// Modules with 64-bit atomics or native f16 validate against the core rules
// of their SPIR-V version instead (Output.Env "spv1.x"): spirv-val's OpenCL
// profiles do not know the extensions that allow them.
//
// Work-item ids come from the LocalInvocationId and WorkgroupId built-ins;
// the subgroup id and lane are derived from the local id (x fastest), as
// the OpenCL C back end does, so both back ends agree on which lane holds
// what. Cooperative matrices are laid out as there too (lane l holds rows
// l, l+sgs, ..., or DPAS fragments) and held as one SSA value per element:
// their shapes are static, so every loop over elements is unrolled here.
package spirv

import (
	"fmt"
	"slices"
	"sync"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/spirv/internal/spv"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// Output is an emitted module.
type Output struct {
	Module  []byte          // the SPIR-V binary, little-endian
	Kernels []opencl.Kernel // one per function: name, ABI and launch, as opencl.Emit
	// Env is the spirv-val target environment the module is written for
	// ("opencl1.2" for generic, "opencl2.2" for intel).
	Env string
}

// Options adjust the module to a device's known limits.
type Options struct {
	// NoBlockIO avoids SPV_INTEL_subgroups block reads and writes on the
	// intel target, for implementations of cl_intel_subgroups without them
	// (PoCL 5's kernel library has no intel_sub_group_block_read/write).
	NoBlockIO bool
}

// Emit writes one SPIR-V module holding a kernel per function of prog.
// launch gives each function's launch configuration.
func Emit(prog *ir.Program, t *target.Target, launch map[*ir.Func]opencl.Launch) (*Output, error) {
	return EmitWith(prog, t, launch, Options{})
}

// EmitWith is Emit with options.
func EmitWith(prog *ir.Program, t *target.Target, launch map[*ir.Func]opencl.Launch, o Options) (*Output, error) {
	if !t.HasSPIRV() {
		return nil, fmt.Errorf("spirv: target %s has no SPIR-V path; use generic or intel", t.Name)
	}
	u := newUnit(t)
	defer u.release()
	u.opts = o
	out := &Output{Env: "opencl1.2"}
	if t.Shuffle == target.ShuffleIntel {
		out.Env = "opencl2.2"
	}
	for _, f := range prog.Funcs {
		l, ok := launch[f]
		if !ok {
			return nil, fmt.Errorf("spirv: no launch configuration for @%s", f.Name)
		}
		k, err := u.emitFunc(f, l)
		if err != nil {
			return nil, fmt.Errorf("@%s: %w", f.Name, err)
		}
		out.Kernels = append(out.Kernels, *k)
	}
	u.defineHelpers()
	out.Module = u.b.Bytes(spv.AddressingModelPhysical64, spv.MemoryModelOpenCL)
	if slices.ContainsFunc(u.b.Capabilities(), func(c spv.Capability) bool { return slices.Contains(unknownToProfiles, c) }) {
		out.Env = "spv" + spv.VersionString(u.b.Version())
	}
	return out, nil
}

// unknownToProfiles are capabilities that OpenCL devices offer through
// extensions (cl_khr_int64_base_atomics, cl_khr_fp16) but that spirv-val's
// OpenCL profiles reject outright (SPIRV-Tools 2023.1). Modules declaring
// them are validated against the core rules of their SPIR-V version.
var unknownToProfiles = []spv.Capability{spv.CapabilityInt64Atomics, spv.CapabilityFloat16}

// Disassemble prints a module as text, one instruction per line with the
// module's own ids (stable for golden files).
func Disassemble(module []byte) (string, error) { return spv.Disassemble(module) }

// unit is the state shared by the kernels of one module. Units are
// recycled (units), with their caches, tables and chunks.
type unit struct {
	b      *spv.Builder
	target *target.Target
	clStd  spv.ID                 // the OpenCL.std import
	inputs map[spv.BuiltIn]spv.ID // built-in Input variables
	opts   Options
	// roundHalfFn is the helper rounding f32 to half precision, allocated
	// when a kernel first needs it and defined after the kernels.
	roundHalfFn spv.ID
	ints        [5]spv.ID              // integer types by width/16 (8, 16, 32, 64 bits)
	floats      [3]spv.ID              // float types by width/32 (16, 32, 64 bits)
	regs        [ir.KindC64 + 1]spv.ID // register types by kind (reg)
	i64s        map[int64]spv.ID
	// smallI64, smallI32: the small constants, which element loops ask
	// for constantly, without a map.
	smallI64, smallI32 [256]spv.ID
	zeros              map[*ir.Type]spv.ID
	boolID             spv.ID
	dpasFns            [2][2]spv.ID // the imported DPAS built-ins, by bf16 and 16 lanes (dpasBuiltin)

	work fn // the kernel being written, recycled from kernel to kernel
}

// units keeps units between modules. A unit's value tables, caches and
// chunks, made afresh for every module, were nearly all the bytes the
// emitter allocated besides the module itself (24 of 73 KB for the
// generic GEMM kernel of the benchmarks), and the collector's assists are
// paid by the byte.
var units = sync.Pool{New: func() any {
	return &unit{inputs: map[spv.BuiltIn]spv.ID{}, i64s: map[int64]spv.ID{}, zeros: map[*ir.Type]spv.ID{}}
}}

func newUnit(t *target.Target) *unit {
	b := spv.NewBuilder(0x10000)
	b.Capability(spv.CapabilityAddresses)
	b.Capability(spv.CapabilityKernel)
	b.Capability(spv.CapabilityInt64) // size_t, ids and index arithmetic are 64-bit
	u := units.Get().(*unit)
	u.b, u.target, u.clStd = b, t, b.ImportExtInst("OpenCL.std")
	return u
}

// release hands u back for the next module, emptied; it must not be used
// after it. The module's Output holds nothing of a unit: Bytes copies the
// module out of the builder, and the kernels' names and arguments are made
// for the Output (signature).
func (u *unit) release() {
	u.b.Release()
	clear(u.inputs)
	clear(u.i64s)
	clear(u.zeros)
	u.work.clear()
	*u = unit{inputs: u.inputs, i64s: u.i64s, zeros: u.zeros, work: u.work}
	units.Put(u)
}

// builtinVector returns the Input variable of a built-in of type size_t3
// (ids and sizes), declaring it once.
func (u *unit) builtinVector(bi spv.BuiltIn) spv.ID {
	if v, ok := u.inputs[bi]; ok {
		return v
	}
	ptr := u.ptr(spv.StorageClassInput, u.vec(u.intT(64), 3))
	v := u.b.GlobalVariable(ptr, spv.StorageClassInput)
	u.b.Decorate(v, spv.DecorationBuiltIn, uint32(bi))
	u.b.Decorate(v, spv.DecorationConstant)
	u.inputs[bi] = v
	return v
}
