package main

// The device half of 'tltune run': compile the file for the device's
// target, run the kernel there through the ABI binder (compiler/hostcall)
// and compare every memref and group argument afterwards with the reference
// interpreter run on the same inputs.

import (
	stdctx "context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"slices"
	"strconv"
	"strings"
	"time"

	"tltune/compiler"
	"tltune/compiler/hostcall"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/target"
	"tltune/device"
	"tltune/internal/speak"
	"tltune/tuner"
	"tltune/tuner/worker"
)

// afterDeviceRun sees the device's results before they are compared; tests
// perturb them to check that a mismatch is caught and reported.
var afterDeviceRun = func(*boundArgs) {}

// runCompiled runs fn compiled on the device f.device names and compares
// with the interpreter, which runs on oracle (fresh arguments from b).
func runCompiled(c *context, f *runFlags, src []byte, fn *ir.Func, b *argBinder, oracle *boundArgs) int {
	info, err := device.Select(enumerateDevices(), f.device)
	switch {
	case errors.Is(err, device.ErrRuntimeMissing):
		return c.fail(err) // the message names the package to install
	case err != nil:
		return c.usageError("--device %s: %v", f.device, err)
	}
	copts, err := f.compileOptions(info)
	if err != nil {
		return c.usageError("%v", err)
	}
	res, err := compiler.Compile(src, copts)
	if err != nil {
		return c.fail(compileFailure(f.file, err))
	}
	k, err := kernelOf(res, fn.Name)
	if err != nil {
		return c.fail(err)
	}
	got, err := b.bind()
	if err != nil {
		return c.fail(err)
	}
	if err := runOn(info, res, k, got, b.groups, f.timeout); err != nil {
		if errors.Is(err, errDeviceTimeout) {
			return c.fail(fmt.Errorf("%s: @%s did not finish on %s within --timeout %v; the process running it was killed", f.file, fn.Name, info.Name, f.timeout))
		}
		return c.fail(fmt.Errorf("%s on %s: %w", f.file, info.Name, err))
	}
	afterDeviceRun(got)
	// The interpreter takes the compiled launch, so that SPMD code sees
	// the same subgroup and work-group sizes; collectives accumulate in
	// float64, the most exact reference.
	opts := interp.Options{Groups: b.groups, SubgroupSize: k.SubgroupSize, WorkGroupSize: k.WorkGroupSize, Accumulate64: true}
	if err := f.interpret(fn, oracle, opts); err != nil {
		return c.fail(err)
	}
	var bound *tf32Bound
	if f.precision == speak.TF32 {
		if bound, err = f.newTF32Bound(fn, b, opts); err != nil {
			return c.fail(err)
		}
	}
	if status := b.report(c, f, got); status != exitOK {
		return status
	}
	diffs := compareRun(fn, oracle, got, bound)
	var bad []string
	if f.asJSON {
		agrees := true
		compared := make([]argCompared, len(diffs))
		for i, d := range diffs {
			compared[i] = d.json()
			agrees = agrees && d.ok()
			if !d.ok() {
				bad = append(bad, "%"+d.param.Name)
			}
		}
		if status := c.writeJSON(runJSON{File: f.file, Function: "@" + fn.Name, Device: info.Name, Target: res.Target.Name,
			Precision: f.precision, Arguments: b.summaries(got), Comparison: compared, Agrees: &agrees}); status != exitOK {
			return status
		}
	} else {
		bad = printDiffs(c.stdout, diffs, info.Name, res.Target.Name, f.precision)
	}
	if len(bad) > 0 {
		return c.fail(fmt.Errorf("%s on %s differs from the interpreter in %s", f.file, info.Name, strings.Join(bad, ", ")))
	}
	return exitOK
}

// compileOptions are the compiler's options for the device: its target,
// the file's dialect and --precision. tf32 on a target without a tf32
// engine is an error, which the command reports as bad input.
func (f *runFlags) compileOptions(info *device.Info) (compiler.Options, error) {
	o := compiler.Options{Device: targetDevice(info), Dialect: *f.dialect, Precision: f.precision}
	if f.precision == speak.TF32 {
		if err := target.ForDevice(*o.Device).EnableTF32(); err != nil {
			return o, fmt.Errorf("--precision %s: %v; run it with --precision %s", speak.TF32, err, speak.ExactPrecision)
		}
	}
	return o, nil
}

// kernelOf is the compiled kernel of function name (kernels keep their
// function's name, docs/abi.md).
func kernelOf(res *compiler.Result, name string) (*compiler.Kernel, error) {
	for i := range res.Kernels {
		if res.Kernels[i].Name == name {
			return &res.Kernels[i], nil
		}
	}
	return nil, fmt.Errorf("the compiled program has no kernel @%s", name)
}

// errDeviceTimeout is a build or launch that did not finish in time.
var errDeviceTimeout = errors.New("timed out")

// runOn runs kernel k of the compiled program res (SPIR-V or OpenCL C, as
// the device takes it) on the device with the arguments a, and leaves the
// device's results in a's buffers. A worker process does the device's
// work, so that a kernel that never ends, or a driver that crashes, is
// stopped (errDeviceTimeout after timeout) without taking tltune along.
func runOn(info *device.Info, res *compiler.Result, k *compiler.Kernel, a *boundArgs, groups int, timeout time.Duration) error {
	x, err := hostcall.FromInterp(a.args)
	if err != nil {
		return err
	}
	call, err := hostcall.Bind(k, x.Params, int64(groups))
	if err != nil {
		return err
	}
	form, err := devcall.FormOf(*info, res)
	if err != nil {
		return err
	}
	w := worker.NewClient(workerLauncher)
	w.Timeout = timeout
	defer w.Close()
	ctx := stdctx.Background()
	if _, err := w.Open(ctx, info.ID, ""); err != nil {
		return err
	}
	i := slices.IndexFunc(res.Kernels, func(x compiler.Kernel) bool { return x.Name == k.Name })
	// Keys "": a worker that dies is an error, not a reason to try again.
	err = w.Program(form, make([]string, len(form.Kernels)), nil).Kernel(i).Run(ctx, call)
	var failed *tuner.Error
	switch {
	case errors.As(err, &failed) && failed.Kind == tuner.Timeout:
		return errDeviceTimeout
	case errors.As(err, &failed):
		return failed.Err // the device's error, without the tuner's outcome kind
	case err != nil:
		return err
	}
	x.CopyBack()
	return nil
}

// argDiff is how far one argument's device result lies from the
// interpreter's: at its worst element, the one whose error is largest
// against its tolerance (with one tolerance for all, the largest error).
type argDiff struct {
	param *ir.Value
	err   float64 // the worst element's error
	tol   float64 // its tolerance
	at    []int64 // its index (a group's member last)
	tf32  bool    // each element has its own tolerance, the tf32 bound
}

func (d argDiff) ok() bool { return d.err <= d.tol }

// argCompared is one argument's comparison in run --json.
type argCompared struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	MaxError  *float64 `json:"max_error"` // null when not finite (a NaN in the result)
	At        []int64  `json:"at"`        // the worst element's index
	Tolerance float64  `json:"tolerance"` // the worst element's (tf32: each f32 element has its own); 0: exact
	OK        bool     `json:"ok"`
}

func (d argDiff) json() argCompared {
	at := d.at
	if at == nil {
		at = []int64{}
	}
	return argCompared{Name: d.param.Name, Type: d.param.Type.String(), MaxError: speak.Finite(d.err), At: at, Tolerance: d.tol, OK: d.ok()}
}

// compareRun compares every memref and group argument of got with want;
// bound, when not nil, gives f32 arguments the tf32 tolerances.
func compareRun(fn *ir.Func, want, got *boundArgs, bound *tf32Bound) []argDiff {
	var diffs []argDiff
	for i, p := range fn.Params {
		if !want.isAggregate(i) {
			continue
		}
		d := compareViews(want.views[i], got.views[i], want.args[i].Group != nil, tolerancesOf(p, i, bound))
		d.param = p
		diffs = append(diffs, d)
	}
	return diffs
}

// compareViews finds the element of got worst against its tolerance in
// tol, view by view (both sets come from one binder, so their views have
// the same layout); member says the views are a group's members, whose
// index is the last of the worst element's.
func compareViews(want, got []*interp.Memref, member bool, tol tolerances) argDiff {
	d := argDiff{tf32: tol.magnitude != nil}
	worst := 0.0 // the worst element's error over its tolerance
	for v := range want {
		w, g := want[v], got[v]
		w.Each(func(idx []int64, pos int) {
			e, t := elementError(w.Buf, g.Buf, pos), tol.at(v, pos, w.Buf.Complex(pos))
			score := e
			if t > 0 {
				score = e / t
			}
			if score > worst || math.IsNaN(e) || d.at == nil {
				worst, d.err, d.tol, d.at = score, e, t, append([]int64(nil), idx...)
				if member {
					d.at = append(d.at, int64(v))
				}
			}
		})
	}
	if d.at == nil { // no element: nothing to be off
		d.tol = tol.base
	}
	return d
}

// elementError is the error of element i of got against that of want:
// |got − want| / max(1, |want|) for floating and complex types (relative
// above 1, absolute below, so that values near zero do not demand
// impossible relative accuracy), |got − want| for integers. NaN matches NaN
// and an infinity the same infinity; any other disagreement about them is
// +Inf.
func elementError(want, got *interp.Buffer, i int) float64 {
	if want.Elem.IsInteger() || want.Elem.Kind() == ir.KindBool {
		return math.Abs(float64(got.Int(i) - want.Int(i)))
	}
	w, g := want.Complex(i), got.Complex(i)
	switch {
	case cmplx.IsNaN(w) || cmplx.IsNaN(g):
		if cmplx.IsNaN(w) && cmplx.IsNaN(g) {
			return 0
		}
		return math.Inf(1)
	case cmplx.IsInf(w) || cmplx.IsInf(g):
		if w == g {
			return 0
		}
		return math.Inf(1)
	}
	return cmplx.Abs(g-w) / math.Max(1, cmplx.Abs(w))
}

// tolerance is the largest element error accepted for elements of type t.
// Integers are exact: both sides wrap around alike. Floating types allow
// rounding differences from another summation order and from the device
// accumulating in the type's own precision while the interpreter
// accumulates in float64 and rounds once: about √K units of roundoff for a
// reduction of K terms, so these bounds (≈ 340 u for f32, ≈ 9000 u for
// f64, ≈ 20 u for f16 and 13 u for bf16, whose few bits leave less room)
// admit reductions of thousands of terms and still reject any element a
// wrong kernel computes.
func tolerance(t *ir.Type) float64 {
	switch t.Kind() {
	case ir.KindF16:
		return 1e-2
	case ir.KindBF16:
		return 5e-2
	case ir.KindF32, ir.KindC32:
		return 2e-5
	case ir.KindF64, ir.KindC64:
		return 1e-12
	}
	return 0
}

// printDiffs prints one line per argument and the verdict, and returns the
// arguments that differ.
func printDiffs(w io.Writer, diffs []argDiff, dev, target, precision string) (bad []string) {
	fmt.Fprintf(w, "compared with the interpreter (float64 accumulation), target %s:\n", target)
	if note := speak.PrecisionNote(precision); note != "" {
		fmt.Fprintln(w, note)
	}
	for _, d := range diffs {
		verdict := "ok"
		if !d.ok() {
			verdict = "MISMATCH"
			bad = append(bad, "%"+d.param.Name)
		}
		worst, tol := "max error", "exact"
		if d.tol > 0 {
			tol = "tolerance " + strconv.FormatFloat(d.tol, 'g', 3, 64)
		}
		switch {
		case d.tf32 && d.err == 0:
			worst, tol = "worst error", "tf32 tolerances"
		case d.tf32:
			worst, tol = "worst error", "tf32 "+tol+" there"
		}
		at := ""
		if d.err != 0 {
			at = " at " + formatIndex(d.at)
		}
		fmt.Fprintf(w, "  %%%s %s: %s %s%s (%s) %s\n", d.param.Name, d.param.Type, worst,
			strconv.FormatFloat(d.err, 'g', 3, 64), at, tol, verdict)
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "verdict: MISMATCH on %s in %s\n", dev, strings.Join(bad, ", "))
	} else {
		fmt.Fprintf(w, "verdict: ok, %d arguments agree with the interpreter on %s\n", len(diffs), dev)
	}
	return bad
}

func formatIndex(idx []int64) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
