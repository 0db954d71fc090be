package compiler_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/check"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
	"tltune/internal/golden"
)

// legacyPrograms are the legacy test programs (testdata/legacy): the
// legacy reference's sample and programs that use every instruction of its
// grammar.
func legacyPrograms(t *testing.T) []string {
	t.Helper()
	names, _ := filepath.Glob("testdata/legacy/*.tl")
	var out []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".current.tl") {
			out = append(out, n)
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d legacy test programs", len(out))
	}
	return out
}

// TestLegacyUpgrade reads each legacy program and upgrades it (what
// `tltune fmt --from legacy` prints, pinned by golden files); the upgrade
// reads back as the same program, and the original and the upgraded
// program compute the same on the interpreter from the same arguments.
// The sample's upgrade also computes what a hand-written current version
// of it computes.
func TestLegacyUpgrade(t *testing.T) {
	for _, name := range legacyPrograms(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if d := syntax.Detect(src); d != syntax.Legacy {
				t.Errorf("detected as %v", d)
			}
			original, errs := syntax.Read(src, syntax.Legacy)
			if len(errs) == 0 {
				errs = check.Program(original, nil)
			}
			if len(errs) > 0 {
				t.Fatalf("the legacy program does not read or verify:\n%v", errs)
			}
			text := printer.String(original)
			golden.Check(t, strings.TrimSuffix(name, ".tl")+".upgraded", []byte(text))
			upgraded := exectest.Parse(t, []byte(text))
			if d := ir.Diff(original, upgraded); d != "" {
				t.Errorf("the upgrade reads back differently: %s", d)
			}
			oracles := []*ir.Program{upgraded}
			if hand, err := os.ReadFile(strings.TrimSuffix(name, ".tl") + ".current.tl"); err == nil {
				oracles = append(oracles, exectest.Parse(t, hand))
			}
			for fi, f := range original.Funcs {
				want := interpretLegacy(t, f)
				for _, o := range oracles {
					exectest.Compare(t, "upgraded", o.Funcs[fi], want, interpretLegacy(t, o.Funcs[fi]))
				}
			}
		})
	}
}

// interpretLegacy runs f on the differential tests' arguments (seed 1)
// and returns them afterwards.
func interpretLegacy(t *testing.T, f *ir.Func) []interp.Arg {
	t.Helper()
	args := exectest.Args(f, 1)
	if err := interp.Run(f, args, interp.Options{Groups: exectest.Groups, SubgroupSize: 1}); err != nil {
		t.Fatalf("@%s: %v", f.Name, err)
	}
	return args
}

// TestLegacyOnDevice compiles the upgraded legacy programs and compares
// them on the device with the interpreter.
func TestLegacyOnDevice(t *testing.T) {
	d := openDevice(t)
	for _, name := range legacyPrograms(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			prog, errs := syntax.Read(src, syntax.Legacy)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			diffKernel(t, d, []byte(printer.String(prog)), testOptions(d))
		})
	}
	if _, err := compiler.Compile([]byte("func @k() {\n  %0 = group_id\n}\n"), compiler.Options{Target: "generic", Dialect: syntax.Auto}); err != nil {
		t.Errorf("a legacy program does not compile through the detected dialect: %v", err)
	}
}
