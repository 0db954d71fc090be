package printer_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/diag"
	"tltune/compiler/ir"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
	"tltune/internal/golden"
)

// roundTrip prints p, parses the text and reports any difference.
func roundTrip(t *testing.T, p *ir.Program) string {
	t.Helper()
	text := printer.String(p)
	q, errs := syntax.Parse([]byte(text))
	if len(errs) > 0 {
		t.Fatalf("printed program does not parse: %v\n%s", errs, text)
	}
	if d := ir.Diff(p, q); d != "" {
		t.Fatalf("parse(print(p)) != p: %s\n%s", d, text)
	}
	if again := printer.String(q); again != text {
		t.Fatalf("printing is not idempotent:\n%s\nvs\n%s", text, again)
	}
	return text
}

func parseFile(t *testing.T, name string) (*ir.Program, diag.List) {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return syntax.Parse(src)
}

// TestRoundTripProperty checks parse(print(p)) == p on random programs.
func TestRoundTripProperty(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := 0; seed < n; seed++ {
		g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 42))}
		roundTrip(t, g.program())
	}
}

// TestRoundTripTestFiles checks the property on every program of the
// verifier's test suite that parses, valid or not.
func TestRoundTripTestFiles(t *testing.T) {
	names, _ := filepath.Glob("../check/testdata/*/*.tl")
	if len(names) < 100 {
		t.Fatalf("found only %d test files", len(names))
	}
	parsed := 0
	for _, name := range names {
		p, errs := parseFile(t, name)
		if len(errs) > 0 {
			continue
		}
		parsed++
		t.Run(filepath.Base(name), func(t *testing.T) { roundTrip(t, p) })
	}
	if parsed < 100 {
		t.Errorf("only %d test files parse", parsed)
	}
}

// TestGolden pins the canonical form of the valid test programs.
func TestGolden(t *testing.T) {
	names, _ := filepath.Glob("../check/testdata/valid/*.tl")
	for _, name := range names {
		p, errs := parseFile(t, name)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		got := printer.String(p)
		golden.Check(t, filepath.Join("testdata", strings.TrimSuffix(filepath.Base(name), ".tl")+".golden"), []byte(got))
	}
}

// TestUnnamedValuesGetFreshNumbers prints IR built by a pass, whose values
// have no names, next to source names that look like numbers.
func TestUnnamedValuesGetFreshNumbers(t *testing.T) {
	f := ir.NewFunc("k", []string{"0"}, []*ir.Type{ir.F32})
	b := ir.NewBuilder(f.Body)
	x := b.Arith(ir.Add, f.Params[0], f.Params[0])
	y := b.Arith(ir.Mul, x, x)
	lo, hi := b.IntConst(0, ir.Index), b.IntConst(4, ir.Index)
	loop := b.For(lo, hi, nil)
	ir.NewBuilder(loop.Body()).Barrier(ir.FenceLocal)
	unused := b.If(b.Cmp(ir.Lt, y, x), ir.F32)
	then, els := ir.NewBuilder(unused.Regions[0]), ir.NewBuilder(unused.Regions[1])
	then.Yield(x)
	els.Yield(y)
	text := printer.String(&ir.Program{Funcs: []*ir.Func{f}})
	want := `func @k(%0: f32) {
    %1 = arith.add %0, %0 : f32
    %2 = arith.mul %1, %1 : f32
    %3 = constant 0 : index
    %4 = constant 4 : index
    for %5 = %3, %4 {
        barrier.local
    }
    %6 = cmp.lt %2, %1 : bool
    if %6 -> (f32) {
        yield (%1)
    } else {
        yield (%2)
    }
}
`
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	if _, errs := syntax.Parse([]byte(text)); len(errs) > 0 {
		t.Error(errs)
	}
}
