package kernels

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

func parseFlags(t *testing.T, op Op, args string) (Spec, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Register(fs, op)
	if err := fs.Parse(strings.Fields(args)); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f.Spec(op)
}

func TestFlagsSpec(t *testing.T) {
	for _, c := range []struct {
		op   Op
		args string
		want Spec
	}{
		{GEMMOp, "--m 64 --n 64 --k 32 --dtype f16",
			Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Layout: Strided, Alpha: 1}},
		{GEMMOp, "--m 2 --n 3 --k 4 --dtype c32 --acc c64 --trans tn --layout group --alpha 1+2i --beta atomic",
			Spec{Op: GEMMOp, M: 2, N: 3, K: 4, DType: C32, Acc: C64, TransA: true, Layout: Group, Alpha: 1 + 2i, Beta: 1, Atomic: true}},
		{GEMVOp, "--m 8 --n 4 --dtype f64 --trans t --beta -0.5",
			Spec{Op: GEMVOp, M: 8, N: 4, DType: F64, Acc: F64, TransA: true, Layout: Strided, Alpha: 1, Beta: -0.5}},
		{GEROp, "--m 8 --n 4 --dtype bf16 --acc bf16 --alpha 0 --beta atomic:0",
			Spec{Op: GEROp, M: 8, N: 4, DType: BF16, Acc: BF16, Layout: Strided, Atomic: true}},
		{GEMMOp, "--m 64 --n 64 --k 64 --precision tf32",
			Spec{Op: GEMMOp, M: 64, N: 64, K: 64, DType: F32, Acc: F32, Layout: Strided, Alpha: 1, Precision: speak.TF32}},
		{GEMMOp, "--m 64 --n 64 --k 64 --dtype f16 --precision exact",
			Spec{Op: GEMMOp, M: 64, N: 64, K: 64, DType: F16, Acc: F32, Layout: Strided, Alpha: 1}},
	} {
		got, err := parseFlags(t, c.op, c.args)
		if err != nil || got != c.want {
			t.Errorf("%v %s:\n got %+v, %v\nwant %+v", c.op, c.args, got, err, c.want)
		}
	}
}

// Every impossible request gets one line naming the flag and the fix.
func TestFlagsErrors(t *testing.T) {
	for _, c := range []struct {
		op   Op
		args string
		want string
	}{
		{GEMMOp, "--n 4 --k 4", "--m must be between 1 and 65536, got 0"},
		{GEMMOp, "--m 4 --n -3 --k 4", "--n must be between 1 and 65536, got -3"},
		{GEMMOp, "--m 4 --n 4 --k 70000", "--k must be between 1 and 65536, got 70000"},
		{GEMMOp, "--m 4 --n 4 --k 4 --dtype f8", `--dtype: unknown type "f8" (want one of f16, bf16, f32, f64, c32, c64)`},
		{GEMMOp, "--m 4 --n 4 --k 4 --dtype f32 --acc f16", "--acc f16 is narrower than --dtype f32; use one of f32, f64, c32, c64"},
		{GEMMOp, "--m 4 --n 4 --k 4 --dtype c32 --acc f64", "--acc f64 is narrower than --dtype c32; use one of c32, c64"},
		{GEMMOp, "--m 4 --n 4 --k 4 --trans t", `--trans "t": gemm takes nn, nt, tn or tt`},
		{GEMVOp, "--m 4 --n 4 --trans nx", `--trans "nx": gemv takes n or t`},
		{GEMMOp, "--m 4 --n 4 --k 4 --layout pointers", `--layout: unknown layout "pointers" (want strided or group)`},
		{GEMMOp, "--m 4 --n 4 --k 4 --alpha two", `--alpha: "two" is not a number (write 0.5, -2 or 1+2i)`},
		{GEMMOp, "--m 4 --n 4 --k 4 --alpha 1+1i", "--alpha (1+1i) is complex but has the real type f32"},
		{GEMMOp, "--m 4 --n 4 --k 4 --alpha inf", "--alpha must be finite, got +Inf"},
		{GEMMOp, "--m 4 --n 4 --k 4 --dtype f16 --alpha 1e6", "--alpha 1e+06 overflows its type f16"},
		{GEMMOp, "--m 4 --n 4 --k 4 --beta atomic:2", `--beta: "atomic:2": an atomic update of C is atomic (or atomic:1, β = 1) or atomic:0 (an atomic store)`},
		{GEMMOp, "--m 4 --n 4 --k 4 --beta one", `--beta: "one" is not a number (write 0.5, -2 or 1+2i)`},
		{GEMMOp, "--m 4 --n 4 --k 4 --precision bf16", `--precision: "bf16": want exact or tf32`},
		{GEMMOp, "--m 4 --n 4 --k 4 --dtype f16 --precision tf32",
			"--precision tf32 applies to f32 gemm only (--dtype f32 --acc f32), not gemm f16/f32; leave it exact"},
		{GEMMOp, "--m 4 --n 4 --k 4 --acc f64 --precision tf32",
			"--precision tf32 applies to f32 gemm only (--dtype f32 --acc f32), not gemm f32/f64; leave it exact"},
	} {
		_, err := parseFlags(t, c.op, c.args)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %s: error %v, want %q", c.op, c.args, err, c.want)
		}
	}
}

// TestFlagsCheckSet: the flags a query leaves empty stay open; those it
// sets get Spec's errors.
func TestFlagsCheckSet(t *testing.T) {
	for _, c := range []struct {
		op   Op
		f    Flags
		want string // "" for no error
	}{
		{GEMMOp, Flags{}, ""},
		{GEMMOp, Flags{DType: "f16", Acc: "f32", Trans: "tn", Layout: "group", Precision: "exact"}, ""},
		{GEMVOp, Flags{Acc: "c64", Trans: "t"}, ""},
		{GEMMOp, Flags{DType: "f128"}, `--dtype: unknown type "f128" (want one of f16, bf16, f32, f64, c32, c64)`},
		{GEMMOp, Flags{Acc: "f8"}, `--acc: unknown type "f8"`},
		{GEMMOp, Flags{DType: "f32", Acc: "f16"}, "--acc f16 is narrower than --dtype f32; use one of f32, f64, c32, c64"},
		{GEMMOp, Flags{Trans: "xx"}, `--trans "xx": gemm takes nn, nt, tn or tt`},
		{GEMVOp, Flags{Trans: "nn"}, `--trans "nn": gemv takes n or t`},
		{GEROp, Flags{Trans: "n"}, `--trans "n": ger takes nothing`},
		{GEMMOp, Flags{Layout: "foo"}, `--layout: unknown layout "foo" (want strided or group)`},
		{GEMMOp, Flags{Precision: "fp8"}, `--precision: "fp8": want exact or tf32`},
	} {
		err := c.f.CheckSet(c.op)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("%v %+v: error %v, want %q", c.op, c.f, err, c.want)
		}
	}
}

// TestFlagsPerOp: each op defines only its own flags: no --k for gemv and
// ger, no --trans for ger, --precision for gemm only.
func TestFlagsPerOp(t *testing.T) {
	for op, missing := range map[Op][]string{GEMVOp: {"k", "precision"}, GEROp: {"k", "trans", "precision"}, GEMMOp: nil} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		var f Flags
		f.Register(fs, op)
		for _, name := range []string{"m", "n", "k", "trans", "dtype", "acc", "layout", "alpha", "beta", "precision"} {
			if defined := fs.Lookup(name) != nil; defined == slices.Contains(missing, name) {
				t.Errorf("%v: --%s defined %v", op, name, defined)
			}
		}
	}
}

func TestAtomicNeedsBetaZeroOrOne(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 1, N: 1, K: 1, DType: F32, Acc: F32, Layout: Strided, Beta: 2, Atomic: true}
	if err := s.Validate(); err == nil || err.Error() != "beta must be 0 or 1 for an atomic update, got 2" {
		t.Errorf("atomic with beta 2: %v", err)
	}
}

func TestConstructorsCheckOp(t *testing.T) {
	s := Spec{M: 4, N: 4, DType: F32, Acc: F32, Layout: Strided, Alpha: 1}
	if r, err := GEMV(s); err != nil || r.Spec().Op != GEMVOp {
		t.Errorf("GEMV: %v, %v", r, err)
	}
	s.Op = GEROp
	if _, err := GEMV(s); err == nil || err.Error() != "spec is for ger, not gemv" {
		t.Errorf("GEMV of a ger spec: %v", err)
	}
	if _, err := GEMM(Spec{M: 4, N: 4, DType: F32, Acc: F32, Layout: Strided}); err == nil {
		t.Error("GEMM without k is accepted")
	}
}

func TestTableKey(t *testing.T) {
	s, err := parseFlags(t, GEMVOp, "--m 64 --n 32 --dtype f16 --trans t")
	if err != nil {
		t.Fatal(err)
	}
	want := tuning.Key{Device: "PoCL", Problem: speak.Problem{Op: "gemv", Trans: "t", Dtype: "f16", Acc: "f32", M: 64, N: 32,
		Alpha: "1", Beta: "0", Layout: "strided"}}
	if got := s.TableKey("PoCL"); got != want {
		t.Errorf("key %+v, want %+v", got, want)
	}
}

// A tf32 gemm is its own problem: the key says so, and a spec built
// without the flags is checked the same way.
func TestPrecisionKey(t *testing.T) {
	s, err := parseFlags(t, GEMMOp, "--m 32 --n 32 --k 8 --precision tf32")
	if err != nil {
		t.Fatal(err)
	}
	exact := s
	exact.Precision = ""
	if p := s.Problem(); p.Precision != speak.TF32 || p == exact.Problem() || s.Name() != "gemm.nn f32 32x32x8 tf32" {
		t.Errorf("tf32 problem %+v (%s), exact %+v", p, s.Name(), exact.Problem())
	}
	gemv := Spec{Op: GEMVOp, M: 4, N: 4, DType: F32, Acc: F32, Layout: Strided, Alpha: 1, Precision: speak.TF32}
	if err := gemv.Validate(); err == nil || !strings.Contains(err.Error(), "f32 gemm only") {
		t.Errorf("tf32 gemv: %v", err)
	}
}
