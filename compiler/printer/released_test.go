package printer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
	"tltune/internal/golden"
)

// TestReleasedRoundTrip writes every valid test program and differential
// kernel in the released dialect and reads it back: the same program
// (but for builtin.num_subgroups, which the released dialect writes as a
// product of its two modes), and writing it again gives the same text.
func TestReleasedRoundTrip(t *testing.T) {
	var names []string
	for _, pattern := range []string{"../check/testdata/valid/*.tl", "../testdata/exec/*.tl", "../syntax/testdata/released/*.current.tl"} {
		more, _ := filepath.Glob(pattern)
		names = append(names, more...)
	}
	if len(names) < 20 {
		t.Fatalf("found only %d programs", len(names))
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			p, errs := parseFile(t, name)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			text, err := printer.Released(p)
			if err != nil {
				if !strings.Contains(err.Error(), "tltune extension") {
					t.Fatal(err)
				}
				t.Skip(err)
			}
			q, errs := syntax.Read([]byte(text), syntax.Released)
			if len(errs) > 0 {
				t.Fatalf("the released text does not read back: %v\n%s", errs, text)
			}
			if d := ir.Diff(p, q); d != "" && !usesBuiltin(p, ir.NumSubgroups) {
				t.Errorf("read back differently: %s\n%s", d, text)
			}
			if again, _ := printer.Released(q); again != text {
				t.Errorf("writing again changes the text:\n%s\n---\n%s", text, again)
			}
		})
	}
}

func usesBuiltin(p *ir.Program, b ir.BuiltinKind) bool {
	for _, f := range p.Funcs {
		if f.UsesBuiltin(b) {
			return true
		}
	}
	return false
}

// TestReleasedGolden pins the released spelling of the program that
// spells every released instruction tltune has.
func TestReleasedGolden(t *testing.T) {
	src, err := os.ReadFile("../syntax/testdata/released/every.current.tl")
	if err != nil {
		t.Fatal(err)
	}
	p, errs := syntax.Parse(src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	text, err := printer.Released(p)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/released/every.golden", []byte(text))
}
