package pass

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// TestRunVerifiesAfterEveryPass: in check mode a pass that breaks the IR
// is named in the error, and the passes after it do not run.
func TestRunVerifiesAfterEveryPass(t *testing.T) {
	var ran []string
	mk := func(name string) Pass {
		return Pass{Name: name, Doc: name, Run: func(*State) error { ran = append(ran, name); return nil }}
	}
	broken := errors.New("value used before its definition")
	verified := 0
	opts := Options{VerifyEach: true, Verify: func(*ir.Program) error {
		verified++
		if verified == 2 {
			return broken
		}
		return nil
	}}
	err := Run(&State{Prog: &ir.Program{}}, []Pass{mk("a"), mk("b"), mk("c")}, opts)
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "after pass b") {
		t.Errorf("error %v does not name pass b", err)
	}
	if strings.Join(ran, ",") != "a,b" {
		t.Errorf("passes run: %v, want a,b", ran)
	}
}

// TestRunVerifiesAfterThePipeline: without check mode the IR is verified
// once, after the last pass, and a failure is still an error.
func TestRunVerifiesAfterThePipeline(t *testing.T) {
	noop := func(*State) error { return nil }
	broken := errors.New("value used before its definition")
	var ran []string
	verified := 0
	opts := Options{Verify: func(*ir.Program) error { verified++; return broken }}
	passes := []Pass{{"a", "a", func(*State) error { ran = append(ran, "a"); return nil }}, {"b", "b", noop}}
	err := Run(&State{Prog: &ir.Program{}}, passes, opts)
	if !errors.Is(err, broken) || verified != 1 || len(ran) != 1 {
		t.Errorf("error %v after %d verifications (passes run: %v), want the broken IR reported after one", err, verified, ran)
	}
}

func TestRunDebugPrintsAfterEachPass(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Debug: &out, Print: func(*ir.Program) string { return "IR" }}
	noop := func(*State) error { return nil }
	if err := Run(&State{Prog: &ir.Program{}}, []Pass{{"x", "does x", noop}, {"y", "does y", noop}}, opts); err != nil {
		t.Fatal(err)
	}
	want := "; ---- IR after x (does x)\nIR\n; ---- IR after y (does y)\nIR\n"
	if out.String() != want {
		t.Errorf("debug output %q, want %q", out.String(), want)
	}
}

// TestFoldAndDeadCode folds index arithmetic on constants and removes what
// becomes unused, but keeps stores and division by zero.
func TestFoldAndDeadCode(t *testing.T) {
	m := ir.Memref(ir.Index, []int64{4}, nil, ir.Global)
	f := ir.NewFunc("k", []string{"out"}, []*ir.Type{m})
	b := ir.NewBuilder(f.Body)
	two, three := b.IntConst(2, ir.Index), b.IntConst(3, ir.Index)
	sum := b.Arith(ir.Add, two, three)
	prod := b.Arith(ir.Mul, sum, sum)
	b.Arith(ir.Sub, prod, two) // unused
	zero := b.IntConst(0, ir.Index)
	div := b.Arith(ir.Div, two, zero)
	small := b.Arith(ir.Mul, b.IntConst(100, ir.I8), b.IntConst(3, ir.I8))
	shifted := b.Arith(ir.Shl, b.IntConst(1, ir.I32), b.IntConst(33, ir.I32))
	b.Store(ir.NotAtomic, b.Cast(shifted, ir.Index), f.Params[0], two)
	b.Store(ir.NotAtomic, prod, f.Params[0], two)
	b.Store(ir.NotAtomic, div, f.Params[0], zero)
	b.Store(ir.NotAtomic, b.Cast(small, ir.Index), f.Params[0], three)
	if err := foldConstants(f); err != nil {
		t.Fatal(err)
	}
	if err := deadCode(f); err != nil {
		t.Fatal(err)
	}
	if c, ok := intConst(prod); !ok || c != 25 {
		t.Errorf("(2+3)*(2+3) folded to %v, %v", c, ok)
	}
	if c, ok := intConst(small); !ok || c != 44 {
		t.Errorf("100*3 in i8 folded to %v, %v; want 44 (wrapped)", c, ok)
	}
	if c, ok := intConst(shifted); !ok || c != 2 {
		t.Errorf("1 << 33 in i32 folded to %v, %v; want 2 (the count modulo the width, as the interpreter and OpenCL C take it)", c, ok)
	}
	if div.Def.Op != ir.OpArith {
		t.Error("division by zero was folded")
	}
	for _, in := range f.Body.Insts {
		if in.Op == ir.OpArith && in.Arith == ir.Sub {
			t.Error("unused subtraction survived dead-code elimination")
		}
	}
	if n := len(f.Body.Uses(f.Params[0])); n != 4 {
		t.Errorf("%d stores left, want 4", n)
	}
}

func TestPipelineOrder(t *testing.T) {
	var names []string
	for _, p := range Pipeline() {
		names = append(names, p.Name)
	}
	got := strings.Join(names, " ")
	want := "fold-constants dce insert-barriers choose-config lower-collectives lower-foreach check-coopmatrix fold-constants dce"
	if got != want {
		t.Errorf("pipeline %q, want %q", got, want)
	}
}
