package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/internal/npy"
)

// runTool runs the command line in process and returns stdout, stderr and
// the exit status.
func runTool(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	status := run(args, &out, &errb)
	return out.String(), errb.String(), status
}

func TestRunFibonacci(t *testing.T) {
	dir := t.TempDir()
	out, errs, status := runTool("run", "testdata/run/fib.ir", "--arg", "F=zeros", "--shape", "F=32x3", "--save", dir)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	checkGolden(t, "run-fib.stdout", []byte(out))
	a, err := npy.ReadFile(filepath.Join(dir, "F.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != npy.Int64 || len(a.Shape) != 2 || a.Shape[0] != 32 || a.Shape[1] != 3 {
		t.Fatalf("saved %s %v", a.DType, a.Shape)
	}
	fib := []int64{0, 1}
	for len(fib) < 40 {
		fib = append(fib, fib[len(fib)-1]+fib[len(fib)-2])
	}
	for g := range 3 {
		for i := range 32 {
			off := a.Offset([]int{i, g}) * 8
			got := int64(0)
			for b := 7; b >= 0; b-- {
				got = got<<8 | int64(a.Data[off+b])
			}
			if got != fib[i+g] {
				t.Errorf("F[%d,%d] = %d, want fib(%d) = %d", i, g, got, i+g, fib[i+g])
			}
		}
	}
}

// writeF64 writes a float64 array in the given order.
func writeF64(t *testing.T, path string, shape []int, fortran bool, xs ...float64) {
	t.Helper()
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = appendF64(b, x)
	}
	if err := npy.WriteFile(path, &npy.Array{DType: npy.Float64, Shape: shape, Fortran: fortran, Data: b}); err != nil {
		t.Fatal(err)
	}
}

// A .npy argument in either order: element (i, j) of the array is element
// (i, j) of the memref, and --save writes the result back.
func TestRunNpyArguments(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "x_c.npy")
	f := filepath.Join(dir, "x_f.npy")
	writeF64(t, c, []int{3}, false, 1, 2, 3)
	writeF64(t, f, []int{3}, true, 1, 2, 3)
	for _, in := range []string{c, f} {
		out, errs, status := runTool("run", "--func", "scale", "testdata/run/fused.ir", "--arg", "a=2", "--arg", "x="+in, "--groups", "1", "--save", dir)
		if status != 0 {
			t.Fatalf("status %d: %s", status, errs)
		}
		if want := "%x memref<f64x?> [3]: sum 12, max |x| 6\n"; out != want {
			t.Errorf("stdout %q, want %q", out, want)
		}
		got, err := os.ReadFile(filepath.Join(dir, "x.npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(got, appendF64(appendF64(appendF64(nil, 2), 4), 6)) {
			t.Errorf("saved x.npy does not hold 2 4 6")
		}
	}
	// A matrix in C order: element (i, j) at i·cols + j.
	writeF64(t, c, []int{2, 3}, false, 1, 2, 3, 4, 5, 6)
	src := filepath.Join(dir, "m.ir")
	os.WriteFile(src, []byte(`func @row(%A: memref<f64x2x3>, %r: memref<f64x3>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  %c1 = constant 1 : index
  %a = subview %A[%c1, 0:3] : memref<f64x3,strided<2>>
  axpby.n %one, %a, %zero, %r
}
`), 0o644)
	if _, errs, status := runTool("run", src, "--arg", "A="+c, "--arg", "r=zeros", "--save", dir); status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	a, err := npy.ReadFile(filepath.Join(dir, "r.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if want := appendF64(appendF64(appendF64(nil, 4), 5), 6); !bytes.Equal(a.Data, want) {
		t.Errorf("row 1 of the C-order matrix: got bytes %v", a.Data)
	}
}

func TestRunFusedGroups(t *testing.T) {
	dir := t.TempDir()
	out, errs, status := runTool("run", "testdata/run/fused.ir", "--func", "@fused", "--arg", "alpha=0.5",
		"--arg", "X=rand", "--arg", "W=rand", "--arg", "V=rand:9", "--arg", "Y=1.0", "--shape", "X=8x4x5", "--save", dir)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	checkGolden(t, "run-fused.stdout", []byte(out))
	for name, shape := range map[string][]int{"X": {8, 4, 5}, "Y": {8, 8, 5}, "W": {4, 6}} {
		a, err := npy.ReadFile(filepath.Join(dir, name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if a.DType != npy.Float32 || !a.Fortran || len(a.Shape) != len(shape) || a.Shape[len(shape)-1] != shape[len(shape)-1] {
			t.Errorf("%s.npy: %s %v fortran=%v, want <f4 %v", name, a.DType, a.Shape, a.Fortran, shape)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ir")
	os.WriteFile(bad, []byte("func @k(%a: f32) {\n  %x = arith.add %a, %b : f32\n}\n"), 0o644)
	wrong := filepath.Join(dir, "wrong.npy")
	writeF64(t, wrong, []int{2}, false, 1, 2)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"run", "testdata/run/fused.ir", "--arg", "a=1"}, 2, "several functions (@fused, @scale); choose one with --func"},
		{[]string{"run", "testdata/run/fused.ir", "--func", "scale", "--arg", "a=1"}, 2, "no --arg for %x"},
		{[]string{"run", "testdata/run/fused.ir", "--func", "scale", "--arg", "a=1", "--arg", "x=zeros"}, 2,
			"%x has type memref<f64x?> with a dynamic size; give --shape x=N or a .npy file"},
		{[]string{"run", "testdata/run/fused.ir", "--func", "scale", "--arg", "a=one", "--arg", "x=zeros", "--shape", "x=4"}, 2,
			"--arg a=one: want a f64 literal"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=" + wrong}, 2, "want a <i8 array, got <f8"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=zeros", "--shape", "F=31x2"}, 2, "gives shape 31x2, want 32xN"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "G=zeros"}, 2, "@fib has no parameter %G"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=" + filepath.Join(dir, "none.npy")}, 2, "no such file"},
		{[]string{"run", bad, "--arg", "a=1"}, 2, "bad.ir:2:22: error:"},
		{[]string{"run"}, 2, "missing FILE"},
		// Found by TestCLIRandomArguments: these allocated until the host
		// ran out of memory.
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=zeros", "--groups", "99999999999"}, 2,
			"%F of shape 32x99999999999 takes more than the"},
		{[]string{"run", "testdata/run/groups.ir", "--arg", "A=rand", "--arg", "x=rand", "--arg", "y=rand",
			"--shape", "A=9x6x99999999999", "--shape", "x=6x4", "--shape", "y=9x4"}, 2, "%A of shape 9x6x99999999999 takes more than the"},
		{[]string{"run", "testdata/run/fib.ir", "--arg", "F=zeros", "--groups", "9223372036854775807"}, 2, "takes more than the"},
	} {
		_, errs, status := runTool(c.args...)
		if status != c.status || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 2 {
			t.Errorf("%v: status %d, stderr %q; want status %d and %q", c.args[1:], status, errs, c.status, c.want)
		}
	}
}

func appendF64(b []byte, x float64) []byte {
	u := math.Float64bits(x)
	for i := range 8 {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}
