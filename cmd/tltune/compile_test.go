package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompileGolden(t *testing.T) {
	withInventory(t, fixedInventory())
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"compile-generic.stdout", []string{"compile", "testdata/compile/gemm.tl"}},
		{"compile-intel.stdout", []string{"compile", "--target", "intel", "testdata/compile/gemm.tl"}},
		{"compile-nvidia.stdout", []string{"compile", "testdata/compile/gemm.tl", "--device", "NVIDIA"}},
		{"compile-tuned.stdout", []string{"compile", "testdata/compile/gemm.tl", "--device", "0", "--tuning", "testdata/compile/tuning.json"}},
		{"compile-attrs.stdout", []string{"compile", "testdata/compile/attrs.tl"}},
		{"compile-intel.spvasm", []string{"compile", "--emit=spirv-asm", "--target", "intel", "testdata/compile/gemm.tl"}},
	} {
		status, stdout, stderr := tltune(tc.args...)
		if status != exitOK || stderr != "" {
			t.Fatalf("tltune %v: status %d, stderr %q", tc.args, status, stderr)
		}
		checkGolden(t, tc.golden, []byte(stdout))
	}
}

// TestCompileExplain checks that --explain names the source of the
// configuration: the tuning table for the tuned device, attributes, or the
// heuristic.
func TestCompileExplain(t *testing.T) {
	withInventory(t, fixedInventory())
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"compile-explain-tuned.stderr", []string{"compile", "--explain", "--device", "0", "--tuning", "testdata/compile/tuning.json", "testdata/compile/gemm.tl"}},
		{"compile-explain-heuristic.stderr", []string{"compile", "--explain", "--device", "pthread", "testdata/compile/gemm.tl"}},
		{"compile-explain-attrs.stderr", []string{"compile", "--explain", "testdata/compile/attrs.tl"}},
		// Cross-compiling: the table's one device, or the one named.
		{"compile-explain-cross.stderr", []string{"compile", "--explain", "--target", "nvidia", "--tuning", "testdata/compile/tuning.json", "testdata/compile/gemm.tl"}},
		{"compile-explain-cross-named.stderr", []string{"compile", "--explain", "--target", "nvidia", "--tuning-device", "h200", "testdata/compile/gemm.tl"}},
	} {
		status, _, stderr := tltune(tc.args...)
		if status != exitOK {
			t.Fatalf("tltune %v: status %d, stderr %q", tc.args, status, stderr)
		}
		checkGolden(t, tc.golden, []byte(stderr))
	}
}

func TestCompileDebugPasses(t *testing.T) {
	status, _, stderr := tltune("compile", "--debug-passes", "testdata/compile/gemm.tl")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	last := -1
	for _, pass := range []string{"fold-constants", "dce", "insert-barriers", "choose-config", "lower-collectives", "lower-foreach", "check-coopmatrix"} {
		i := strings.Index(stderr, "; ---- IR after "+pass+" ")
		if i < 0 {
			t.Fatalf("--debug-passes printed no IR after %s", pass)
		}
		if i < last {
			t.Errorf("pass %s printed out of pipeline order", pass)
		}
		last = i
	}
	if !strings.Contains(stderr, "cooperative_matrix_mul_add") || strings.Count(stderr, "gemm.n.n") != 4 {
		t.Errorf("the IR before lowering should hold gemm.n.n and the IR after it cooperative matrices:\n%s", stderr)
	}
}

func TestCompileOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "k.cl")
	status, stdout, stderr := tltune("compile", "testdata/compile/gemm.tl", "-o", out)
	if status != exitOK || stdout != "" || stderr != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(got), "kernel void gemm(") {
		t.Errorf("-o did not write the kernel: %v\n%s", err, got)
	}
}

// TestCompileOutputIsNotTheInput: -o naming the kernel being compiled (by
// another path too) or a results store is refused in one line, and the
// file keeps its contents.
func TestCompileOutputIsNotTheInput(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "gemm.tl")
	kernel := readFile(t, "testdata/compile/gemm.tl")
	if err := os.WriteFile(src, kernel, 0o644); err != nil {
		t.Fatal(err)
	}
	db := nightlyDB(t)
	store := readFile(t, db)
	for _, tc := range []struct {
		out, want string
		file      string
		content   []byte
	}{
		{src, "-o " + src + " is the input file, which the output would replace; name another file", src, kernel},
		{filepath.Join(dir, ".", "gemm.tl"), "is the input file", src, kernel},
		{db, db + " is an SQLite database (a results store?)", db, store},
	} {
		status, stdout, stderr := tltune("compile", src, "-o", tc.out)
		checkOneLine(t, status, exitUsage, stdout, stderr, tc.want)
		if !bytes.Equal(readFile(t, tc.file), tc.content) {
			t.Errorf("compile -o %s changed %s", tc.out, tc.file)
		}
	}
}

// TestCompileErrors: every bad input is one line (or the source
// diagnostics) and a non-zero exit.
func TestCompileErrors(t *testing.T) {
	withInventory(t, fixedInventory())
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"compile"}, exitUsage, "want exactly one input file, got 0"},
		{[]string{"compile", "a.tl", "b.tl"}, exitUsage, "want exactly one input file, got 2"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--emit=llvm"}, exitUsage, "--emit=llvm: use opencl, spirv, spirv-asm or ptx"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--emit=ptx"}, exitUsage, "target generic (PTX is for nvidia)"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--emit=spirv"}, exitUsage, "--emit=spirv writes a binary: give -o FILE"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--emit=spirv-asm", "--target", "nvidia"}, exitUsage, "target nvidia has no SPIR-V path"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--target", "amd"}, exitUsage, `unknown target "amd"`},
		{[]string{"compile", "testdata/compile/gemm.tl", "--target", "intel", "--device", "0"}, exitUsage, "give one"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--device", "9"}, exitUsage, "no device matches"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--tuning", "testdata/compile/missing.json"}, exitUsage, "--tuning"},
		{[]string{"compile", "testdata/compile/missing.tl"}, exitUsage, "no such file"},
		{[]string{"compile", "testdata/compile/bad.tl"}, exitUsage, "bad.tl:2:10: error: load from %A (order 1) needs 1 indices, found 0\n    %x = load %A[] : f32\n         ^\n"},
		{[]string{"compile", "testdata/compile/attrs.tl", "--target", "nvidia"}, exitUsage, "attrs.tl:3:17: error: subgroup_size 1 is not supported by the target"},
		{[]string{"compile", "testdata/compile/gemm.tl", "--precision", "half"}, exitUsage, `--precision: "half": want exact or tf32`},
		{[]string{"compile", "testdata/compile/gemm.tl", "--target", "intel", "--precision", "tf32"}, exitUsage, "precision tf32 needs the nvidia target"},
	} {
		status, _, stderr := tltune(tc.args...)
		if status != tc.status || !strings.Contains(stderr, tc.want) {
			t.Errorf("tltune %v: status %d, stderr %q; want status %d and %q", tc.args, status, stderr, tc.status, tc.want)
		}
		if tc.status == exitUsage && strings.Count(stderr, "\n") != 1 && !strings.Contains(stderr, ": error: ") { // diagnostics show the line
			t.Errorf("tltune %v: usage error is not one line: %q", tc.args, stderr)
		}
	}
}

// TestCompileSPIRV writes the binary for each target that has a SPIR-V path
// and checks that spirv-val accepts it in the module's environment.
func TestCompileSPIRV(t *testing.T) {
	val, err := exec.LookPath("spirv-val")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("spirv-val missing, and CI=true: run `make setup` (spirv-tools)")
		}
		t.Skip("spirv-val missing (install spirv-tools)")
	}
	for tgt, env := range map[string]string{"generic": "opencl1.2", "intel": "opencl2.2"} {
		out := filepath.Join(t.TempDir(), tgt+".spv")
		status, _, stderr := tltune("compile", "--emit=spirv", "--target", tgt, "-o", out, "testdata/compile/gemm.tl")
		if status != exitOK {
			t.Fatalf("%s: status %d: %s", tgt, status, stderr)
		}
		if msg, err := exec.Command(val, "--target-env", env, out).CombinedOutput(); err != nil {
			t.Errorf("%s: spirv-val --target-env %s: %v\n%s", tgt, env, err, msg)
		}
	}
}

// TestCompilePrecision: --precision tf32 compiles the f32 gemm with tf32
// mma.sync and keys its tuning-table lookup as the tf32 problem; exact
// (the default) does neither.
func TestCompilePrecision(t *testing.T) {
	for precision, want := range map[string]bool{"exact": false, "tf32": true} {
		args := []string{"compile", "testdata/compile/gemm.tl", "--target", "nvidia", "--precision", precision}
		status, out, stderr := tltune(args...)
		if status != exitOK {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		if got := strings.Contains(out, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"); got != want {
			t.Errorf("%s: tf32 mma.sync used = %v", precision, got)
		}
		status, out, stderr = tltune(append(args, "--json")...)
		if status != exitOK {
			t.Fatalf("%v --json: status %d: %s", args, status, stderr)
		}
		if got := strings.Contains(out, `"problem": "gemm.nn f32 20x5x56 alpha=1.5 beta=0.5 tf32"`); got != want {
			t.Errorf("%s: the tuning key is the tf32 problem = %v:\n%s", precision, got, out)
		}
	}
}

// TestCompileAheadOfTimeDPAS: compiling with --target for a tuned Intel GPU
// whose shipped profile has DPAS (the table's device) writes the DPAS
// calls the tuning run built, in SPIR-V and in OpenCL C; the bare intel
// target, with no device to describe, has no matrix engine.
func TestCompileAheadOfTimeDPAS(t *testing.T) {
	const kernel, table = "testdata/compile/gemm_f16.tl", "testdata/compile/tuning_max.json"
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--emit=spirv-asm", "--target", "intel", "--tuning", table}, true},
		{[]string{"--target", "intel", "--tuning", table}, true},
		{[]string{"--emit=spirv-asm", "--target", "intel"}, false},
	} {
		status, stdout, stderr := tltune(append(append([]string{"compile"}, tc.args...), kernel)...)
		if status != exitOK || stderr != "" {
			t.Fatalf("tltune compile %v: status %d, stderr %q", tc.args, status, stderr)
		}
		if got := strings.Contains(stdout, "intel_sub_group_f16_f16_matrix_mad_k16"); got != tc.want {
			t.Errorf("tltune compile %v: calls the DPAS built-in: %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestCompilePTX: --emit=ptx writes an entry for a GER kernel and an f32
// GEMM, and a kernel the writer cannot handle (an f64 GEMM's matrices in
// rows over lanes) fails with one line and exit status 2.
func TestCompilePTX(t *testing.T) {
	dir := t.TempDir()
	ger := filepath.Join(dir, "ger.tl")
	src := `func @ger(%a: memref<f32x64>, %b: memref<f32x64>, %C: memref<f32x64x64>) {
  %alpha = constant 1.0 : f32
  %beta = constant 0.0 : f32
  ger %alpha, %a, %b, %beta, %C
}
`
	f64 := filepath.Join(dir, "gemm_f64.tl")
	f64src := `func @gemm(%A: memref<f64x16x16>, %B: memref<f64x16x16>, %C: memref<f64x16x16>) {
  %alpha = constant 1.0 : f64
  %beta = constant 0.0 : f64
  gemm.n.n %alpha, %A, %B, %beta, %C
}
`
	if err := os.WriteFile(ger, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f64, []byte(f64src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ file, entry string }{{ger, "ger"}, {"testdata/compile/gemm.tl", "gemm"}} {
		status, stdout, stderr := tltune("compile", "--emit=ptx", "--target", "nvidia", k.file)
		if status != exitOK || stderr != "" || !strings.Contains(stdout, ".entry "+k.entry+"(") {
			t.Errorf("%s: status %d, stderr %q, stdout\n%s", k.file, status, stderr, stdout)
		}
	}
	status, stdout, stderr := tltune("compile", "--emit=ptx", "--target", "nvidia", f64)
	if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "ptx: unsupported") {
		t.Errorf("gemm: status %d, stdout %q, stderr %q; want status %d and one line saying what is unsupported",
			status, stdout, stderr, exitUsage)
	}
}
