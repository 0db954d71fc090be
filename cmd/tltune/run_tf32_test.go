package main

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"tltune/compiler"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/device"
	"tltune/internal/devtest"
)

// tf32Gemm runs @gemm of testdata/run/blas.ir (f32, C := 1.5·A·Bᵀ + 0.5·C,
// K = 7, 3 batch entries).
var tf32Gemm = []string{"run", "testdata/run/blas.ir", "--func", "gemm", "--arg", "alpha=1.5", "--arg", "beta=0.5",
	"--arg", "A=rand", "--arg", "B=rand", "--arg", "C=rand", "--groups", "3"}

// TestRunPrecisionUsage: --precision is exact or tf32, tf32 needs a device
// and a target with a tf32 engine; each mistake is one usage line.
func TestRunPrecisionUsage(t *testing.T) {
	dev := devtest.PoCL(t).ID
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "fp8", "--device", dev}, `--precision: "fp8": want exact or tf32`},
		{[]string{"--precision", "tf32"}, "--precision tf32 compiles for a device, and the interpreter (--device ref) computes exactly"},
		{[]string{"--precision", "tf32", "--device", dev}, "--precision tf32: precision tf32 needs the nvidia target (mma.sync m16n8k8); target generic has no tf32 matrix engine; run it with --precision exact"},
	} {
		out, errs, status := runTool(append(tf32Gemm[:len(tf32Gemm):len(tf32Gemm)], tc.args...)...)
		if status != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want one usage line with %q", tc.args, status, out, errs, tc.want)
		}
	}
}

// TestRunCompilesTF32: on an NVIDIA device, --precision tf32 compiles the
// f32 gemm with tf32 mma.sync; exact does not.
func TestRunCompilesTF32(t *testing.T) {
	src, err := readSource("testdata/compile/gemm.tl")
	if err != nil {
		t.Fatal(err)
	}
	h200 := &device.Info{Name: "NVIDIA H200", Vendor: "NVIDIA Corporation", Type: "gpu", MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10}
	for precision, want := range map[string]bool{"": false, "tf32": true} {
		f := runFlags{precision: precision, dialect: new(syntax.Dialect)}
		o, err := f.compileOptions(h200)
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile(src, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(res.OpenCL, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"); got != want || res.Target.Name != "nvidia" {
			t.Errorf("precision %q: target %s, tf32 mma.sync used = %v", precision, res.Target.Name, got)
		}
	}
}

// TestTF32Comparison checks run's tf32 tolerances on a device result
// emulated in the interpreter: A and B rounded to tf32 (cvt.rna), f32
// accumulation. It agrees with the interpreter within the tf32 bound and
// not within the f32 tolerance, and an element off by 0.05 (a wrong kernel
// is off by about the result) fails the bound.
func TestTF32Comparison(t *testing.T) {
	f, fn, b := bindRun(t, tf32Gemm[1:])
	opts := interp.Options{Groups: b.groups, Accumulate64: true}
	oracle := newBound(t, b)
	if err := f.interpret(fn, oracle, opts); err != nil {
		t.Fatal(err)
	}
	got := emulateTF32(t, f, fn, b)
	bound, err := f.newTF32Bound(fn, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	const c = 4 // %C
	check := func(name string, bound *tf32Bound, ok bool) string {
		t.Helper()
		diffs := compareRun(fn, oracle, got, bound)
		var out bytes.Buffer
		bad := printDiffs(&out, diffs, "GPU", "nvidia", map[bool]string{true: "tf32"}[bound != nil])
		if d := diffs[len(diffs)-1]; d.param.Name != "C" || d.ok() != ok || (len(bad) == 0) != ok {
			t.Errorf("%s: %%C error %g, tolerance %g, ok %v; want ok %v\n%s", name, d.err, d.tol, d.ok(), ok, out.String())
		}
		return out.String()
	}
	text := check("tf32 bound", bound, true)
	for _, want := range []string{"\nprecision tf32: f32 inputs rounded to tf32", "%A memref<f32x20x7x?>: worst error 0 (tf32 tolerances) ok\n",
		"%C memref<f32x20x5x?>: worst error ", " there) ok\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	check("f32 tolerance", nil, false)
	got.views[c][0].Buf.SetFloat(7, got.views[c][0].Buf.Float(7)+0.05)
	check("tf32 bound, an element off", bound, false)
}

// TestTF32Products: the bound's K is the longest static K of the f32
// gemms, and each f32 product counts (a chain compounds their errors); a
// function with cooperative_matrix_mul_add of its own takes the longest
// mode of its f32 arguments; f16 products do not count.
func TestTF32Products(t *testing.T) {
	const coop = `func @coop(%A: memref<f32x16x8>, %B: memref<f32x8x24>, %C: memref<f32x16x24>, %D: memref<f16x16x99>) {
  parallel {
    %c0 = constant 0 : index
    %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x16x8, matrix_a>
    %b = cooperative_matrix_load.n %B[%c0, %c0] : coopmatrix<f32x8x8, matrix_b>
    %c = cooperative_matrix_load.n %C[%c0, %c0] : coopmatrix<f32x16x8, matrix_acc>
    %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32x16x8, matrix_acc>
    cooperative_matrix_store %d, %C[%c0, %c0]
  }
}
`
	dir := t.TempDir()
	coopFile := writeSuite(t, dir, "coop.tl", coop)
	for _, tc := range []struct {
		args []string
		k, n int
	}{
		{tf32Gemm[1:], 7, 1},
		{[]string{"testdata/run/fused.ir", "--func", "fused", "--arg", "alpha=1", "--arg", "X=rand", "--arg", "W=rand", "--arg", "V=rand", "--arg", "Y=rand", "--groups", "2"}, 6, 2},
		{[]string{"testdata/run/blas.ir", "--func", "gemv", "--arg", "alpha=1", "--arg", "beta=1", "--arg", "A=rand", "--arg", "x=rand", "--arg", "y=rand", "--groups", "2"}, 1, 0},
		{[]string{coopFile, "--arg", "A=rand", "--arg", "B=rand", "--arg", "C=rand", "--arg", "D=zeros"}, 24, 1},
	} {
		_, fn, b := bindRun(t, tc.args)
		if k, n := tf32Products(fn, newBound(t, b)); k != tc.k || n != tc.n {
			t.Errorf("%s @%s: K %d, %d f32 products; want %d and %d", tc.args[0], fn.Name, k, n, tc.k, tc.n)
		}
	}
}

// bindRun reads the run command line args (FILE and flags) as runKernel
// does, up to the binder.
func bindRun(t *testing.T, args []string) (*runFlags, *ir.Func, *argBinder) {
	t.Helper()
	f := &runFlags{file: args[0], timeout: time.Minute, dialect: new(syntax.Dialect)}
	for i := 1; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--func":
			f.fn = args[i+1]
		case "--arg":
			f.args = append(f.args, args[i+1])
		case "--groups":
			f.groups, _ = strconv.Atoi(args[i+1])
		}
	}
	src, err := readSource(f.file)
	if err != nil {
		t.Fatal(err)
	}
	prog, errs := frontEnd(f.file, src, *f.dialect)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fn, err := pickFunc(prog, f.fn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newArgBinder(fn, f)
	if err != nil {
		t.Fatal(err)
	}
	return f, fn, b
}

func newBound(t *testing.T, b *argBinder) *boundArgs {
	t.Helper()
	a, err := b.bind()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// emulateTF32 is what a tf32 device computes from b's arguments: the
// outputs of fn run in f32 on inputs rounded to tf32, put in a fresh set
// of arguments (whose inputs stay as given).
func emulateTF32(t *testing.T, f *runFlags, fn *ir.Func, b *argBinder) *boundArgs {
	t.Helper()
	rounded, got := newBound(t, b), newBound(t, b)
	for _, i := range []int{1, 2} { // %A, %B
		m := rounded.views[i][0]
		m.Each(func(_ []int64, pos int) { m.Buf.SetFloat(pos, roundTF32(m.Buf.Float(pos))) })
	}
	if err := f.interpret(fn, rounded, interp.Options{Groups: b.groups}); err != nil {
		t.Fatal(err)
	}
	copy(got.views[4][0].Buf.Data, rounded.views[4][0].Buf.Data)
	return got
}

// roundTF32 rounds an f32 value to tf32 as cvt.rna does: to 10 mantissa
// bits, to nearest, ties away from zero.
func roundTF32(x float64) float64 {
	bits := math.Float32bits(float32(x))
	return float64(math.Float32frombits((bits + 1<<12) &^ (1<<13 - 1)))
}
