package syntax_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
)

func readFile(t *testing.T, name string, d syntax.Dialect) *ir.Program {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	prog, errs := syntax.Read(src, d)
	if len(errs) > 0 {
		t.Fatalf("%s:\n%v", name, errs)
	}
	return prog
}

// TestReleasedReadsAsCurrent: a program spelled in the released dialect
// reads into the same IR as its current spelling, and it verifies.
func TestReleasedReadsAsCurrent(t *testing.T) {
	released := readFile(t, "testdata/released/every.released.tl", syntax.Released)
	current := readFile(t, "testdata/released/every.current.tl", syntax.Current)
	if d := ir.Diff(current, released); d != "" {
		t.Errorf("the released spelling reads differently: %s", d)
	}
	if errs := check.Program(released, nil); len(errs) > 0 {
		t.Errorf("the released program does not verify:\n%v", errs)
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		src  string
		want syntax.Dialect
	}{
		{"func @k(%a: f32) {\n    %b = arith.add %a, %a : f32\n}", syntax.Current},
		{"func @k(%a: f32) {\n    %b = add %a, %a : f32\n}", syntax.Released},
		{"func @k(%a: f32) {\n    %b = less_than %a, %a : bool\n}", syntax.Released},
		{"$n = 4\nfunc @k() {\n}", syntax.Released},
		{"func @k(%a: memref<f32x4>) {\n    gemm %a, %a, %a, %a, %a\n}", syntax.Released},
		{"func @k(%a: memref<f32x4>) {\n    gemm.atomic.n.n %a, %a, %a, %a, %a\n}", syntax.Released},
		{"func @k(%a: memref<f32x4>) {\n    gemm.n.n %a, %a, %a, %a, %a\n}", syntax.Current},
		{"func @k() {\n    %0 = group_id\n}", syntax.Legacy},
		{"func @k() {\n    %t = alloca -> memref<f32x4>\n}", syntax.Legacy},
		{"func @k(%a: f32) {\n    %b = arith.add %a, 1.0 : f32\n}", syntax.Legacy},
		{"func @k(%a: memref<f32x4>) {\n    gemm.n.n 1.0, %a, %a, 0.0, %a : f32, memref<f32x4>\n}", syntax.Legacy},
		{"func @k() work_group_size(64, 1) {\n}", syntax.Legacy},
		{"func @k() {\n    foreach %i = 0, 8 {\n    }\n}", syntax.Legacy},
		{"func @k() attributes {work_group_size=[64, 1]} {\n}", syntax.Current},
	} {
		if got := syntax.Detect([]byte(c.src)); got != c.want {
			t.Errorf("Detect = %v, want %v:\n%s", got, c.want, c.src)
		}
	}
	for _, name := range globTL(t, "../check/testdata/valid/*.tl", "../testdata/exec/*.tl") {
		src, _ := os.ReadFile(name)
		if got := syntax.Detect(src); got != syntax.Current {
			t.Errorf("%s: detected as %v, want current", name, got)
		}
	}
}

func globTL(t *testing.T, patterns ...string) []string {
	t.Helper()
	var out []string
	for _, p := range patterns {
		names, err := filepath.Glob(p)
		if err != nil || len(names) == 0 {
			t.Fatalf("no files match %s", p)
		}
		out = append(out, names...)
	}
	return out
}

// TestReleasedErrors: errors in the released dialect are reported where
// the user wrote the offending text, also for compile-time variables.
func TestReleasedErrors(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{"func @k() {\n    %a = constant $n : i32\n}", "2:19: undefined compile-time variable $n"},
		{"$n = 4\n$n = 5\nfunc @k() {\n}", "2:1: compile-time variable $n is already defined"},
		{"$n = !calc(4 0 /)\nfunc @k() {\n}", "1:6: !calc: division by zero"},
		{"$n = !calc(4 +)\nfunc @k() {\n}", "1:6: !calc: \"+\" needs two operands"},
		{"func @k(%a: i32, %b: index) {\n    for %i = %a, %b {\n    }\n}", "2:18: %b has type index but %a has type i32"},
		{"func @k(%a: i32) {\n    %b = add %a, %c : i32\n}", "2:18: undefined value %c"},
		{"func @k(%i: index) {\n    for %j = %i, %i {\n        $m = 2\n    }\n    %b = constant $m : i32\n}", "5:19: undefined compile-time variable $m"},
		{"func @k(%a: f32) {\n    %b = frobnicate %a : f32\n}", "2:10: unknown instruction 'frobnicate'"},
	} {
		_, errs := syntax.Read([]byte(c.src), syntax.Released)
		if len(errs) == 0 || !strings.HasPrefix(errs[0].Pos.String()+": "+errs[0].Msg, c.want) {
			t.Errorf("got %v, want %q first:\n%s", errs, c.want, c.src)
		}
	}
	_, errs := syntax.Read([]byte("func @k(%a: f32) {\n    %b = add %a, %a : f32\n}"), syntax.Current)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "--dialect released") {
		t.Errorf("a released mnemonic read as current: %v, want a hint to --dialect released", errs)
	}
}

// TestLegacyErrors: errors in the legacy dialect point where the user
// wrote the offending text.
func TestLegacyErrors(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{"func @k(%a: f32) {\n  %b = arith.add %a, 1.0 : f64\n}", "2:18: %a has type f32, but the type annotation says f64"},
		{"func @k(%a: f32) {\n  %b = frob %a : f32\n}", "2:8: unknown instruction 'frob'"},
		{"func @k(%a: memref<f32x4>) {\n  %b = load %a[0] : memref<f32x8>\n}", "2:13: %a has type memref<f32x4>, but the type annotation says memref<f32x8>"},
		{"func @k() work_group_size(64) {\n}", "1:11: work_group_size takes two sizes"},
		{"func @k(%a: i32) {\n  %b = arith.add %a, 99999999999999999999 : i32\n}", "2:22: integer constant 99999999999999999999 out of range"},
		{"func @k(%a: memref<f32x4>) {\n  gemm.n.n 1.0, %a, %a, 0.0 : f32, memref<f32x4>\n}", "2:29: expected ',' between operands"},
	} {
		_, errs := syntax.Read([]byte(c.src), syntax.Legacy)
		if len(errs) == 0 || !strings.HasPrefix(errs[0].Pos.String()+": "+errs[0].Msg, c.want) {
			t.Errorf("got %v, want %q first:\n%s", errs, c.want, c.src)
		}
	}
}
