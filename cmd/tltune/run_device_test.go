package main

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/device"
	"tltune/internal/devtest"
	"tltune/internal/npy"
)

// deviceRuns are kernels of every kind with arguments: BLAS collectives with
// scalar arguments, groups with dynamic member shapes and offset, local
// memory, and SPMD code.
var deviceRuns = []struct {
	name     string
	args     []string
	compared int
}{
	{"gemm", []string{"testdata/run/blas.ir", "--func", "gemm", "--arg", "alpha=1.5", "--arg", "beta=0.5",
		"--arg", "A=rand", "--arg", "B=rand", "--arg", "C=rand", "--groups", "3"}, 3},
	{"gemv", []string{"testdata/run/blas.ir", "--func", "gemv", "--arg", "alpha=-2", "--arg", "beta=1",
		"--arg", "A=rand", "--arg", "x=rand", "--arg", "y=rand", "--groups", "4"}, 3},
	{"ger", []string{"testdata/run/blas.ir", "--func", "ger", "--arg", "alpha=[1.5,-1]",
		"--arg", "x=rand", "--arg", "y=rand", "--arg", "A=rand", "--groups", "2"}, 3},
	{"groups", []string{"testdata/run/groups.ir", "--arg", "A=rand", "--arg", "x=rand", "--arg", "y=rand",
		"--shape", "A=9x6x4", "--shape", "x=6x4", "--shape", "y=9x4"}, 3},
	{"fused", []string{"testdata/run/fused.ir", "--func", "@fused", "--arg", "alpha=0.5", "--arg", "X=rand",
		"--arg", "W=rand", "--arg", "V=rand:9", "--arg", "Y=1.0", "--shape", "X=8x4x5"}, 4},
	{"spmd", []string{"testdata/run/spmd.ir", "--arg", "A=rand", "--arg", "s=zeros", "--shape", "A=64x10x3"}, 2},
}

func TestRunOnDeviceAgrees(t *testing.T) {
	dev := devtest.PoCL(t).ID
	for _, r := range deviceRuns {
		out, errs, status := runTool(append(append([]string{"run"}, r.args...), "--device", dev)...)
		want := "verdict: ok, " + strconv.Itoa(r.compared) + " arguments agree with the interpreter on "
		if status != exitOK || !strings.Contains(out, want) || strings.Count(out, ") ok\n") != r.compared {
			t.Errorf("%s: status %d, stderr %q, stdout:\n%s", r.name, status, errs, out)
		}
	}
}

// A device result off by more than the tolerance fails the run with one
// line, and --save writes the device's result, not the interpreter's.
func TestRunOnDeviceMismatch(t *testing.T) {
	dev := devtest.PoCL(t).ID
	var perturbed float64
	old := afterDeviceRun
	afterDeviceRun = func(a *boundArgs) {
		c := a.args[len(a.args)-1].Memref.Buf // %C of @gemm
		perturbed = c.Float(0) + 1e-3
		c.SetFloat(0, perturbed)
	}
	t.Cleanup(func() { afterDeviceRun = old })
	dir := t.TempDir()
	out, errs, status := runTool(append(append([]string{"run"}, deviceRuns[0].args...), "--device", dev, "--save", dir)...)
	if status != exitRuntime || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "differs from the interpreter in %C") {
		t.Errorf("status %d, stderr %q; want 1 and one line naming %%C", status, errs)
	}
	mismatch := regexp.MustCompile(`\n  %C memref<f32x20x5x\?>: max error [0-9.e-]+ at \(0, 0, 0\) \(tolerance 2e-05\) MISMATCH\n`)
	if !mismatch.MatchString(out) ||
		!strings.Contains(out, "verdict: MISMATCH on ") {
		t.Errorf("stdout does not report the mismatch of %%C:\n%s", out)
	}
	a, err := npy.ReadFile(filepath.Join(dir, "C.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(a.Data)); float64(got) != float64(float32(perturbed)) {
		t.Errorf("saved C[0,0,0] = %v, want the device's %v", got, perturbed)
	}
}

// TestRunTimeout: a kernel that never ends stops at --timeout with one
// line saying so, in the interpreter and on a device (whose worker process
// is killed).
func TestRunTimeout(t *testing.T) {
	args := []string{"run", "testdata/run/endless.ir", "--arg", "out=zeros", "--timeout", "2s", "--device"}
	for _, c := range []struct {
		device, want string
		status       int
	}{
		{device.Reference, "@endless did not finish within --timeout 2s in the interpreter", exitUsage}, // the kernel's doing
		{devtest.PoCL(t).ID, "; the process running it was killed", exitRuntime},                        // the device's, or the kernel's
	} {
		start := time.Now()
		out, errs, status := runTool(append(args, c.device)...)
		if status != c.status || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("--device %s: status %d, stdout %q, stderr %q; want one line containing %q and status %d", c.device, status, out, errs, c.want, c.status)
		}
		if took := time.Since(start); took > time.Minute {
			t.Errorf("--device %s: stopped after %v", c.device, took)
		}
	}
}

func TestRunDeviceSelection(t *testing.T) {
	args := []string{"run", "testdata/run/blas.ir", "--func", "gemm", "--arg", "alpha=1", "--arg", "beta=0",
		"--arg", "A=rand", "--arg", "B=rand", "--arg", "C=zeros", "--groups", "2", "--device"}
	withInventory(t, fixedInventory())
	_, errs, status := runTool(append(args, "no-such-device")...)
	if status != exitUsage || !strings.Contains(errs, `--device no-such-device: no device matches "no-such-device"`) {
		t.Errorf("unknown device: status %d, stderr %q", status, errs)
	}
	withInventory(t, device.Inventory{Runtimes: []device.Status{{Runtime: device.OpenCL, Library: "libOpenCL.so.1",
		Err: &device.MissingError{Runtime: "OpenCL", Library: "libOpenCL.so.1", Package: "ocl-icd-libopencl1"}}}})
	_, errs, status = runTool(append(args, "0")...)
	if status != exitRuntime || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "install the Debian package ocl-icd-libopencl1") {
		t.Errorf("missing runtime: status %d, stderr %q", status, errs)
	}
}

// TestRunUnsupportedConfig: a kernel whose subgroup_size the device's
// target lacks is bad input for run as for compile, exit 2, and run says
// so in one line before touching the device.
func TestRunUnsupportedConfig(t *testing.T) {
	withInventory(t, fixedInventory()) // device 0, an H200: its target has no subgroup of 8
	const want = "subgroup_size 8 is not supported by the target"
	_, errs, status := runTool("run", "testdata/run/fib.ir", "--arg", "F=zeros", "--groups", "2", "--device", "0")
	if status != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "fib.ir: 3:45: "+want) {
		t.Errorf("run: status %d, stderr %q; want 2 and one line with %q", status, errs, want)
	}
	if status, _, errs := tltune("compile", "testdata/run/fib.ir", "--device", "0"); status != exitUsage || !strings.Contains(errs, want) {
		t.Errorf("compile: status %d, stderr %q; want 2 and %q", status, errs, want)
	}
}

// views makes one f32 (or other) view per list of values, packed.
func views(elem *ir.Type, vals ...[]complex128) []*interp.Memref {
	var ms []*interp.Memref
	for _, v := range vals {
		m := interp.NewMemref(elem, int64(len(v)))
		for i, z := range v {
			switch {
			case elem.IsComplex():
				m.Buf.SetComplex(i, z)
			case elem.IsFloat():
				m.Buf.SetFloat(i, real(z))
			default:
				m.Buf.SetInt(i, int64(real(z)))
			}
		}
		ms = append(ms, m)
	}
	return ms
}

func TestCompareViews(t *testing.T) {
	nan := complex(math.NaN(), 0)
	inf := complex(math.Inf(1), 0)
	for _, c := range []struct {
		name      string
		elem      *ir.Type
		want, got [][]complex128
		member    bool
		ok        bool
		at        string
	}{
		{"f32 within rounding", ir.F32, [][]complex128{{1, 100}}, [][]complex128{{1, 100.0001}}, false, true, "(1)"},
		{"f32 small values are absolute", ir.F32, [][]complex128{{1e-9}}, [][]complex128{{1e-6}}, false, true, "(0)"},
		{"f32 off", ir.F32, [][]complex128{{1, 2}}, [][]complex128{{1, 2.001}}, false, false, "(1)"},
		{"f64 off in the last member", ir.F64, [][]complex128{{1}, {2}}, [][]complex128{{1}, {2 + 1e-9}}, true, false, "(0, 1)"},
		{"c32 imaginary part", ir.C32, [][]complex128{{1i}}, [][]complex128{{1.01i}}, false, false, "(0)"},
		{"NaN matches NaN", ir.F32, [][]complex128{{nan, inf}}, [][]complex128{{nan, inf}}, false, true, ""},
		{"NaN where a number is due", ir.F32, [][]complex128{{1, 2}}, [][]complex128{{1, nan}}, false, false, "(1)"},
		{"integers are exact", ir.I32, [][]complex128{{7, 8}}, [][]complex128{{7, 9}}, false, false, "(1)"},
		{"f16", ir.F16, [][]complex128{{1000}}, [][]complex128{{1001}}, false, true, "(0)"},
	} {
		d := compareViews(views(c.elem, c.want...), views(c.elem, c.got...), c.member, tolerances{base: tolerance(c.elem)})
		if d.ok() != c.ok || (d.err != 0 && formatIndex(d.at) != c.at) {
			t.Errorf("%s: error %g at %s (tolerance %g), ok %v; want ok %v at %s", c.name, d.err, formatIndex(d.at), d.tol, d.ok(), c.ok, c.at)
		}
	}
}
