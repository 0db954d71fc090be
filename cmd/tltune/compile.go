package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"tltune/compiler"
	"tltune/compiler/diag"
	"tltune/compiler/emit/spirv"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/target"
	"tltune/compiler/tuning"
	"tltune/device"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/tuner/profile"
)

func init() {
	register(&command{
		name:    "compile",
		summary: "compile a tensor-language file to OpenCL C, SPIR-V or PTX for a target",
		usage:   "FILE [--emit=opencl|spirv|spirv-asm|ptx] [-o FILE] [--target generic|intel|nvidia | --device D] [--precision exact|tf32] [--tuning FILE] [--tuning-device D] [--explain] [--json] [--debug-passes] [--dialect D]",
		run:     compileCmd,
	})
}

type compileFlags struct {
	emit, out, target, device, tuning string
	tuningDevice, precision           string
	asJSON                            bool
	explain, debugPasses              bool
}

func compileCmd(c *context, args []string) int {
	var f compileFlags
	fs := c.flags()
	fs.StringVar(&f.emit, "emit", "opencl", "what to write: opencl (OpenCL C), spirv (a SPIR-V binary), spirv-asm (its disassembly) or ptx (PTX for NVIDIA's OpenCL, nvidia target: GEMV, GER, f16/bf16 GEMMs on mma.sync and f32 GEMMs; a kernel it cannot write is an error, exit status 2)")
	fs.StringVar(&f.out, "o", "", "write the output to this file instead of standard output")
	fs.StringVar(&f.target, "target", "", "force a target profile: generic, intel, nvidia, emulated or emulated-interleaved (subgroups through local memory, with nvidia's or intel's rows over lanes, for testing on PoCL); default: from --device, else generic")
	fs.StringVar(&f.device, "device", "", "choose the target from this device's properties: "+deviceUsage)
	fs.StringVar(&f.precision, "precision", speak.ExactPrecision, "exact, or tf32: f32 gemm inputs rounded to tf32 on the matrix engine (nvidia only), looked up as tf32 problems in the tuning table")
	fs.StringVar(&f.tuning, "tuning", "", "tuning table (JSON) consulted before the embedded defaults")
	fs.StringVar(&f.tuningDevice, "tuning-device", "", "with --target: use the table entries of this device (a name or part of one; default: the device of --tuning's entries when they name one), and where a shipped profile matches it, its matrix engines (an Intel GPU's DPAS)")
	fs.BoolVar(&f.explain, "explain", false, "print to standard error where each configuration parameter came from")
	fs.BoolVar(&f.asJSON, "json", false, "print the explanation as JSON on stdout (docs/json.md); the code is then written only with -o")
	fs.BoolVar(&f.debugPasses, "debug-passes", false, "print the IR after every pass to standard error")
	dialect := dialectFlag(fs, "dialect")
	files, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return status
	}
	switch {
	case len(files) != 1:
		return c.usageError("want exactly one input file, got %d", len(files))
	case emitters[f.emit] == nil:
		return c.usageError("--emit=%s: use opencl, spirv, spirv-asm or ptx", f.emit)
	case f.emit == "spirv" && f.out == "":
		return c.usageError("--emit=spirv writes a binary: give -o FILE")
	case f.target != "" && f.device != "":
		return c.usageError("--target and --device both choose the target; give one")
	case f.tuningDevice != "" && f.device != "":
		return c.usageError("--tuning-device is for --target; with --device the table entries of that device are used")
	}
	opts, err := f.options(c)
	if err != nil {
		return c.usageError("%v", err)
	}
	opts.PTX = f.emit == "ptx"
	file := files[0]
	if sameFile(file, f.out) {
		return c.usageError("-o %s is the input file, which the output would replace; name another file", f.out)
	}
	src, err := readSource(file)
	if err != nil {
		return c.fail(err)
	}
	opts.Dialect = *dialect
	res, err := compiler.Compile(src, opts)
	var cerr *compiler.Error
	if errors.As(err, &cerr) && len(cerr.Diags) > 0 {
		if err := diag.Print(c.stderr, file, src, cerr.Diags); err != nil {
			return c.fail(err)
		}
		return exitUsage
	}
	if err != nil {
		return c.fail(compileFailure(file, err))
	}
	if f.explain && !f.asJSON {
		fmt.Fprint(c.stderr, res.Explain())
	}
	out, err := emitters[f.emit](res)
	if err != nil {
		return c.fail(compileFailure(file, err))
	}
	switch {
	case f.out != "":
		err = writeOutput(nil, f.out, func(w io.Writer) error {
			_, err := w.Write(out)
			return err
		})
	case !f.asJSON:
		_, err = c.stdout.Write(out)
	}
	if err == nil && f.asJSON {
		err = speak.WriteJSON(c.stdout, explainJSONOf(file, res))
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// compileFailure is the error of a kernel in file that the compiler
// refused for a target: a configuration the target cannot run (a subgroup
// size it lacks, too large a work-group) is the input's fault, exitUsage,
// for compile and for run alike; nothing reached a device yet.
func compileFailure(file string, err error) error {
	return inputError{fmt.Errorf("%s: %w", file, err)}
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// emitters turn a compiled program into what --emit names.
var emitters = map[string]func(*compiler.Result) ([]byte, error){
	"opencl": func(r *compiler.Result) ([]byte, error) { return []byte(r.OpenCL), nil },
	"spirv": func(r *compiler.Result) ([]byte, error) {
		out, err := r.SPIRV()
		if err != nil {
			return nil, err
		}
		return out.Module, nil
	},
	// ptx: what the writer lacks (ptx.ErrUnsupported) fails the command
	// with one line; the OpenCL C of the same program is --emit=opencl.
	"ptx": func(r *compiler.Result) ([]byte, error) { return []byte(r.PTX), r.PTXErr },
	"spirv-asm": func(r *compiler.Result) ([]byte, error) {
		out, err := r.SPIRV()
		if err != nil {
			return nil, err
		}
		text, err := spirv.Disassemble(out.Module)
		return []byte(text), err
	},
}

// options turns the flags into compiler options.
func (f *compileFlags) options(c *context) (compiler.Options, error) {
	var o compiler.Options
	var err error
	if o.Precision, err = kernels.ParsePrecision(f.precision); err != nil {
		return o, fmt.Errorf("--precision: %v", err)
	}
	if f.target != "" {
		if _, err := target.ByName(f.target); err != nil {
			return o, err
		}
		o.Target = f.target
	}
	if f.device != "" {
		info, err := device.Select(enumerateDevices(), f.device)
		if err != nil {
			return o, err
		}
		o.Device = targetDevice(info)
	}
	paths := []string{}
	if f.tuning != "" {
		paths = append(paths, f.tuning)
	}
	table, err := tuning.Load(paths...)
	if err != nil {
		return o, fmt.Errorf("--tuning: %w", err)
	}
	o.Table = table
	if o.Device == nil {
		if o.TuningDevice, err = f.tableDevice(table); err != nil {
			return o, err
		}
		if o.Device, err = tunedDevice(o.Target, o.TuningDevice); err != nil {
			return o, err
		}
		if o.Device != nil {
			o.Target = "" // the description chooses the same target, with its engines
		}
	}
	if f.debugPasses {
		o.DebugPasses = c.stderr
	}
	return o, nil
}

// explainJSON is the output of compile --json: the target and, per
// function, the tuning-table key, the table's answer, the configuration
// chosen, and the explanation's lines.
type explainJSON struct {
	File      string        `json:"file"`
	Target    string        `json:"target"`
	Functions []funcExplain `json:"functions"`
}

type funcExplain struct {
	Function string        `json:"function"`
	Key      *tableKeyJSON `json:"tuning_key"`   // null: no gemm, gemv or ger to key by
	Lookup   *lookupJSON   `json:"tuning_table"` // null: no table consulted
	Chosen   tuning.Params `json:"chosen"`
	Explain  []string      `json:"explain"`
}

type tableKeyJSON struct {
	Device string `json:"device"`
	speak.NamedProblem
}

type lookupJSON struct {
	How      string        `json:"how"`              // "exact", "nearest" or "no match"
	Entry    *tuning.Entry `json:"entry"`            // null with no match
	Origin   string        `json:"origin,omitempty"` // the file of the entry
	Distance float64       `json:"distance"`         // log2 distance of a nearest match
}

func explainJSONOf(file string, res *compiler.Result) explainJSON {
	out := explainJSON{File: file, Target: res.Target.Name, Functions: []funcExplain{}}
	for _, fc := range res.Choices {
		fe := funcExplain{Function: "@" + fc.Name, Chosen: fc.Params, Explain: fc.Explain()}
		if k := fc.Key; k != nil {
			fe.Key = &tableKeyJSON{Device: k.Device, NamedProblem: speak.Named(k.Problem)}
		}
		if m := fc.Match; m != nil {
			fe.Lookup = &lookupJSON{How: m.How.String(), Distance: m.Distance}
			if m.How != tuning.NoMatch {
				e := m.Entry
				fe.Lookup.Entry, fe.Lookup.Origin = &e, e.Origin
			}
		}
		out.Functions = append(out.Functions, fe)
	}
	return out
}

// tableDevice is the device whose entries a compilation without a device
// (--target) looks up: the one --tuning-device names, else the only device
// of the --tuning file, else none (--explain then says no entry matched).
func (f *compileFlags) tableDevice(table *tuning.Table) (string, error) {
	names := table.Devices()
	if f.tuningDevice == "" {
		if f.tuning == "" {
			return "", nil
		}
		own, err := tuning.ReadFile(f.tuning)
		if err != nil {
			return "", fmt.Errorf("--tuning: %w", err)
		}
		if mine := own.Devices(); len(mine) == 1 {
			return mine[0], nil
		}
		return "", nil
	}
	var found []string
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), strings.ToLower(f.tuningDevice)) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("--tuning-device %q matches %d of the table's devices (%s); name one", f.tuningDevice, len(found), strings.Join(names, ", "))
	}
	return found[0], nil
}

// tunedDevice describes the device whose table entries a compilation for
// target targetName (--target) uses, from the shipped profile that matches
// its name and has that target; nil without one. A kernel tuned on an
// Intel GPU with DPAS is compiled ahead of time with DPAS, as the tuning
// run built it, which the bare intel target (no matrix engine) would not.
func tunedDevice(targetName, name string) (*target.Device, error) {
	if targetName == "" || name == "" {
		return nil, nil
	}
	profiles, err := profile.Shipped()
	if err != nil {
		return nil, err
	}
	p, ok := profiles.Lookup(name)
	if !ok || string(p.Target) != targetName {
		return nil, nil
	}
	return p.TargetDevice(name), nil
}

// targetDevice is what the compiler needs to know of a device.
func targetDevice(info *device.Info) *target.Device { return devcall.TargetDevice(*info) }

// parseInterleaved parses flags given before or after the positional
// arguments (`tltune compile FILE --explain` and `tltune compile --explain
// FILE` mean the same) and returns the positional arguments.
func parseInterleaved(c *context, fs *flag.FlagSet, args []string) (pos []string, status int, ok bool) {
	for {
		if status, ok := c.parse(fs, args); !ok {
			return nil, status, false
		}
		if fs.NArg() == 0 {
			return pos, exitOK, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
