// Package compiler is the driver of the tensor-language compiler: it parses
// a source file, verifies it, runs the pass pipeline of compiler/pass for a
// target (compiler/target) with configurations from attributes, a tuning
// table (compiler/tuning) or a heuristic, and emits OpenCL C
// (compiler/emit/opencl) together with each kernel's argument ABI
// (docs/abi.md) and launch configuration.
//
//	res, err := compiler.Compile(src, compiler.Options{Target: "generic"})
//	// res.OpenCL is the program, res.Kernels[i].Args its arguments,
//	// res.Kernels[i].GlobalSize(batch) and LocalSize() its launch.
package compiler

import (
	"fmt"
	"io"
	"strings"

	"tltune/compiler/check"
	"tltune/compiler/diag"
	"tltune/compiler/emit/opencl"
	"tltune/compiler/emit/ptx"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/ir"
	"tltune/compiler/lower"
	"tltune/compiler/pass"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
)

// Kernel describes one compiled kernel: name, argument ABI and launch
// configuration.
type Kernel = opencl.Kernel

// Arg is one OpenCL kernel argument of a Kernel.
type Arg = opencl.Arg

// Options select the target and the sources of configurations.
type Options struct {
	// Target forces a profile by name ("generic", "intel", "nvidia"). When
	// empty, the profile is chosen from Device, or generic without one.
	Target string
	// Device describes the device the kernels are for, when known.
	Device *target.Device
	// Table is the tuning table; nil uses the defaults embedded from
	// configs/tuning.
	Table *tuning.Table
	// TuningDevice names the device whose table entries to use when
	// Device is nil (cross-compiling with Target); Device's name wins.
	TuningDevice string
	// DebugPasses, when not nil, receives the IR after every pass; it
	// implies CheckPasses.
	DebugPasses io.Writer
	// CheckPasses verifies the IR after every pass of the pipeline, so that
	// a pass that breaks the IR's invariants is named (check mode). By
	// default the IR is verified twice: the source, and the result of the
	// pipeline before it is emitted. The compiler's tests run in check mode.
	CheckPasses bool
	// Dialect is the source's dialect (syntax.Auto detects it); the zero
	// value is the current one.
	Dialect syntax.Dialect
	// Precision relaxes f32 products: "tf32" lets f32 GEMMs use the matrix
	// engine's tf32 inputs (nvidia: mma.sync m16n8k8, inputs rounded to
	// 10-bit mantissas, f32 accumulation); "" (the default) keeps full f32.
	// Never implied: the caller asks for it.
	Precision string
	// SPIRVOnly writes the program as a SPIR-V module instead of OpenCL
	// C, for a device that builds SPIR-V (hostcall/devcall's PathSPIRV):
	// Result.OpenCL stays empty, Result.Kernels are the module's kernels
	// (as Result.SPIRV's) and Result.SPIRV returns the module written.
	// Writing OpenCL C that nothing builds was a sixth of source → SPIR-V.
	// The nvidia target has no SPIR-V form.
	SPIRVOnly bool
	// PTX writes the program as PTX (compiler/emit/ptx) for the nvidia
	// target, which NVIDIA's OpenCL builds without NVVM (hostcall/devcall's
	// PathPTX): Result.PTX, and no OpenCL C; or, where the PTX writer
	// does not cover the program, Result.PTXErr saying why and the OpenCL
	// C in Result.OpenCL as without PTX.
	PTX bool
}

// pipeline is the pass table, made once: its passes keep no state, and
// building the table with its closures was a hundredth of a compile.
var pipeline = pass.Pipeline()

// checkPasses turns check mode (Options.CheckPasses) on for every compile:
// the compiler's own tests set it, as cmd/compile's tests run ssa/check.
var checkPasses = false

// Result is a compiled program.
type Result struct {
	Target  *target.Target
	OpenCL  string   // the OpenCL C program ("" with Options.SPIRVOnly, or Options.PTX and PTX written)
	Kernels []Kernel // one per function, in source order
	// Choices is the configuration chosen for each function, in source
	// order, and where it came from (see Explain).
	Choices []FuncChoice
	Lowered *ir.Program // the program after the pipeline
	// PTX is the program as PTX when Options.PTX asked for it and every
	// function could be written; PTXErr says why it is empty then
	// (ptx.ErrUnsupported: the OpenCL C is the program to build).
	PTX    string
	PTXErr error

	spirv   *spirv.Output // the module, when Options.SPIRVOnly wrote it
	options Options       // as given, for Explain
}

// Explain says how the target was chosen and, per function, where each
// configuration parameter came from (attributes, tuning table,
// heuristic). It is written when asked: the tuner compiles thousands of
// configurations and reads none of it.
func (r *Result) Explain() string { return explain(r.Target, r.options, r.Choices) }

// Error is a compile failure with positioned diagnostics when the source
// is at fault.
type Error struct {
	Diags diag.List // parse or verification errors (positions in the source)
	Err   error     // any other failure
}

func (e *Error) Error() string {
	if len(e.Diags) > 0 {
		return e.Diags.Error()
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Compile compiles src to OpenCL C. It is safe for concurrent use (the
// tuner compiles configurations in parallel), and an internal fault of any
// phase is returned as an error, never a panic.
func Compile(src []byte, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &Error{Err: fmt.Errorf("internal compiler error: %v (please report it with the source)", r)}
		}
	}()
	prog, errs := syntax.Read(src, o.Dialect)
	if len(errs) > 0 {
		return nil, &Error{Diags: errs}
	}
	t, terr := chooseTarget(o)
	if terr != nil {
		return nil, &Error{Err: terr}
	}
	lim := limits(t)
	if errs := check.Program(prog, lim); len(errs) > 0 {
		return nil, &Error{Diags: errs}
	}
	return compileProgram(prog, o, t, lim)
}

// CompileMany compiles several sources into one program: the functions of
// srcs[i] are renamed names[i] (each source holds one function), so that
// kernels of the same name become one program with distinct kernels, whose
// shared helpers the back end writes once. The tuner builds many
// configurations of a kernel this way with one driver build. An error
// says which source, by its new name.
func CompileMany(srcs [][]byte, names []string, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &Error{Err: fmt.Errorf("internal compiler error: %v (please report it with the source)", r)}
		}
	}()
	t, err := chooseTarget(o)
	if err != nil {
		return nil, &Error{Err: err}
	}
	lim := limits(t)
	all := &ir.Program{}
	for i, src := range srcs {
		prog, errs := syntax.Read(src, o.Dialect)
		if len(errs) == 0 {
			errs = check.Program(prog, lim)
		}
		if len(errs) > 0 {
			return nil, &Error{Err: fmt.Errorf("@%s: %v", names[i], errs.Err())}
		}
		if len(prog.Funcs) != 1 {
			return nil, &Error{Err: fmt.Errorf("@%s: the source has %d functions, not one", names[i], len(prog.Funcs))}
		}
		prog.Funcs[0].Name = names[i]
		all.Funcs = append(all.Funcs, prog.Funcs[0])
	}
	return compileProgram(all, o, t, lim)
}

// limits are the target's limits in the verifier's terms.
func limits(t *target.Target) *check.Target {
	sizes := make([]int64, len(t.SubgroupSizes))
	for i, s := range t.SubgroupSizes {
		sizes[i] = int64(s)
	}
	return &check.Target{SubgroupSizes: sizes, MaxWorkGroupSize: int64(t.MaxWorkGroupSize), LocalMemory: int64(t.LocalMemBytes)}
}

// CompileProgram runs the pipeline on a parsed and verified program (which
// it rewrites) and emits OpenCL C.
func CompileProgram(prog *ir.Program, o Options) (*Result, error) {
	t, err := chooseTarget(o)
	if err != nil {
		return nil, &Error{Err: err}
	}
	return compileProgram(prog, o, t, limits(t))
}

// compileProgram is CompileProgram for target t (chooseTarget's for o) and
// its limits lim, which Compile has made for the verifier of the source
// (made again, the nvidia profile was 0.7 % of the bytes a GEMM compile
// allocates).
func compileProgram(prog *ir.Program, o Options, t *target.Target, lim *check.Target) (*Result, error) {
	var err error
	table := o.Table
	if table == nil {
		if table, err = tuning.SharedDefaults(); err != nil {
			return nil, &Error{Err: fmt.Errorf("embedded tuning tables: %w", err)}
		}
	}
	st := &pass.State{Prog: prog, Target: t, Table: table, Device: o.TuningDevice}
	if o.Device != nil {
		st.Device = o.Device.Name
	}
	popts := pass.Options{
		Verify:     func(p *ir.Program) error { return check.Program(p, lim).Err() },
		VerifyEach: o.CheckPasses || o.DebugPasses != nil || checkPasses,
		Debug:      o.DebugPasses,
		Print:      printer.String,
	}
	if err := pass.Run(st, pipeline, popts); err != nil {
		return nil, &Error{Err: err}
	}
	launch := map[*ir.Func]opencl.Launch{}
	for f, ch := range st.Choices {
		p := ch.Params
		launch[f] = opencl.Launch{SubgroupSize: p.SubgroupSize, WorkGroupSize: p.WorkGroupSize, BatchPerGroup: p.BatchPerGroup, Split: p.Split, Batch: ch.Batch}
	}
	res := &Result{Target: t, Lowered: prog}
	if o.SPIRVOnly {
		if res.spirv, err = spirv.Emit(prog, t, launch); err != nil {
			return nil, &Error{Err: err}
		}
		res.Kernels = res.spirv.Kernels
	} else if err := emitText(res, o.PTX, launch); err != nil {
		return nil, &Error{Err: err}
	}
	res.Choices = make([]FuncChoice, len(prog.Funcs))
	for i, f := range prog.Funcs {
		res.Choices[i] = FuncChoice{Name: f.Name, Choice: st.Choices[f]}
	}
	res.options = o
	return res, nil
}

// emitText writes res.Lowered as OpenCL C or, with withPTX, as PTX where the
// PTX writer covers it and as OpenCL C where not (res.PTXErr says why).
// Writing C that nothing builds was a seventh of a compile with PTX.
func emitText(res *Result, withPTX bool, launch map[*ir.Func]opencl.Launch) error {
	prog, t := res.Lowered, res.Target
	if withPTX {
		kernels, err := opencl.Kernels(prog, t, launch)
		if err != nil {
			return err
		}
		if res.PTX, res.PTXErr = ptx.Emit(prog, t, kernels); res.PTXErr == nil {
			res.Kernels = kernels
			return nil
		}
	}
	out, err := opencl.Emit(prog, t, launch)
	if err != nil {
		return err
	}
	res.OpenCL, res.Kernels = out.Source, out.Kernels
	return nil
}

// A FuncChoice is the configuration chosen for one function and why.
type FuncChoice struct {
	Name string // without "@"
	*lower.Choice
}

func chooseTarget(o Options) (*target.Target, error) {
	t, err := profileFor(o)
	if err != nil || o.Precision == "" {
		return t, err
	}
	if o.Precision != "tf32" {
		return nil, fmt.Errorf("precision %q: only tf32 relaxes f32 (or leave it empty for full f32)", o.Precision)
	}
	return t, t.EnableTF32()
}

func profileFor(o Options) (*target.Target, error) {
	switch {
	case o.Target != "":
		return target.ByName(o.Target)
	case o.Device != nil:
		return target.ForDevice(*o.Device), nil
	}
	return target.Generic(), nil
}

func explain(t *target.Target, o Options, choices []FuncChoice) string {
	var b strings.Builder
	switch {
	case o.Target != "":
		fmt.Fprintf(&b, "target %s (forced by --target)\n", t.Name)
	case o.Device != nil:
		fmt.Fprintf(&b, "target %s (from the properties of device %q)\n", t.Name, o.Device.Name)
	default:
		fmt.Fprintf(&b, "target %s (no device given)\n", t.Name)
	}
	fmt.Fprintf(&b, "  subgroup sizes %v, f16 %s, coopmatrix: %s\n", t.SubgroupSizes, f16Mode(t), t.Coopmatrix)
	for _, s := range t.MMA {
		how := ""
		if s.Emulated {
			how = " (layout only; products through local memory)"
		}
		fmt.Fprintf(&b, "  matrix engine: %s %dx%dx%d %s->%s at subgroup size %d%s\n", s.Engine, s.M, s.N, s.K, s.In, s.Acc, s.SubgroupSize, how)
	}
	for _, fc := range choices {
		fmt.Fprintf(&b, "@%s:\n", fc.Name)
		for _, line := range fc.Explain() {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	return b.String()
}

func f16Mode(t *target.Target) string {
	if t.NativeF16 {
		return "native"
	}
	return "in memory only (vload_half/vstore_half, computed in f32)"
}
