package syntax_test

import (
	"strings"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/ir"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
	"tltune/internal/fuzzseed"
)

// FuzzParse feeds arbitrary bytes to the front end. Nothing may panic; a
// program that parses must print to text that parses back to an equal
// program, and printing must be idempotent. The verifier runs on whatever
// was parsed, errors or not, with a target, so its guards are fuzzed too.
// The seed corpus is the verifier's test suite; testdata/fuzz/FuzzParse
// holds the inputs fuzzing found interesting and is replayed by go test.
func FuzzParse(f *testing.F) {
	fuzzseed.Add(f, "../check/testdata/*/*.tl")
	target := &check.Target{SubgroupSizes: []int64{16, 32}, MaxWorkGroupSize: 1024, LocalMemory: 1 << 16}
	f.Fuzz(func(t *testing.T, src []byte) {
		prog, errs := syntax.Parse(src)
		check.Program(prog, target)
		if len(errs) > 0 {
			return
		}
		text := printer.String(prog)
		again, errs := syntax.Parse([]byte(text))
		if len(errs) > 0 {
			t.Fatalf("printed program does not parse: %v\n%s", errs, text)
		}
		if d := ir.Diff(prog, again); d != "" {
			t.Fatalf("parse(print(p)) != p: %s\n%s", d, text)
		}
		if printer.String(again) != text {
			t.Fatalf("printing is not idempotent:\n%s", text)
		}
	})
}

// FuzzReadReleased feeds arbitrary bytes to the released dialect's reader
// and to detection: nothing may panic; a program that reads must print in
// the current dialect to text that parses back to it, and in the released
// dialect to text that reads back to it (unless it uses what the released
// dialect spells differently or not at all). Seeds: the released test
// programs and the verifier's valid programs; testdata/fuzz/FuzzReadReleased
// holds what fuzzing found and is replayed by go test.
func FuzzReadReleased(f *testing.F) {
	fuzzseed.Add(f, "testdata/released/*.tl", "../check/testdata/valid/*.tl")
	f.Fuzz(func(t *testing.T, src []byte) {
		syntax.Detect(src)
		prog, errs := syntax.Read(src, syntax.Released)
		check.Program(prog, nil)
		if len(errs) > 0 {
			return
		}
		text := printer.String(prog)
		again, errs := syntax.Parse([]byte(text))
		if len(errs) > 0 {
			t.Fatalf("printed program does not parse: %v\n%s", errs, text)
		}
		if d := ir.Diff(prog, again); d != "" {
			t.Fatalf("parse(print(read(src))) != read(src): %s\n%s", d, text)
		}
		released, err := printer.Released(prog)
		if err != nil {
			return // a tltune extension
		}
		back, errs := syntax.Read([]byte(released), syntax.Released)
		if len(errs) > 0 {
			t.Fatalf("the released text does not read back: %v\n%s", errs, released)
		}
		if d := ir.Diff(prog, back); d != "" && !strings.Contains(released, "num_subgroups.x") {
			t.Fatalf("read(released(p)) != p: %s\n%s", d, released)
		}
	})
}

// FuzzReadLegacy feeds arbitrary bytes to the legacy dialect's reader:
// nothing may panic, and a program that reads must print (its upgrade) to
// text that parses back to it. Seeds: the legacy test programs;
// testdata/fuzz/FuzzReadLegacy holds what fuzzing found.
func FuzzReadLegacy(f *testing.F) {
	fuzzseed.Add(f, "../testdata/legacy/*.tl")
	f.Fuzz(func(t *testing.T, src []byte) {
		prog, errs := syntax.Read(src, syntax.Legacy)
		check.Program(prog, nil)
		if len(errs) > 0 {
			return
		}
		text := printer.String(prog)
		again, errs := syntax.Parse([]byte(text))
		if len(errs) > 0 {
			t.Fatalf("the upgrade does not parse: %v\n%s", errs, text)
		}
		if d := ir.Diff(prog, again); d != "" {
			t.Fatalf("parse(upgrade(src)) != read(src): %s\n%s", d, text)
		}
	})
}
