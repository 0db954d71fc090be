package compiler_test

import (
	"strings"
	"testing"

	"tltune/compiler"
	"tltune/compiler/syntax"
	"tltune/internal/fuzzseed"
)

// FuzzCompile feeds arbitrary bytes through the whole compiler for every
// target profile, in whatever dialect they read as (tinytc's legacy and
// released ones too): a program the front end and the verifier accept
// must compile to OpenCL C and SPIR-V, or be refused with an error that
// names its problem; an internal compiler error (a panic in a pass or a
// back end, recovered) is a bug. Seeds: the verifier's valid programs,
// the execution tests' kernels and the legacy dialect's tests;
// testdata/fuzz/FuzzCompile holds what fuzzing found and is replayed by
// go test.
func FuzzCompile(f *testing.F) {
	fuzzseed.Add(f, "check/testdata/valid/*.tl", "testdata/exec/*.tl", "testdata/legacy/*.tl")
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, target := range []string{"generic", "intel", "nvidia", "emulated"} {
			res, err := compiler.Compile(src, compiler.Options{Target: target, Dialect: syntax.Auto})
			if err != nil {
				if strings.Contains(err.Error(), "internal compiler error") {
					t.Fatalf("%s: %v", target, err)
				}
				continue
			}
			if target == "nvidia" {
				continue // NVIDIA's OpenCL takes no SPIR-V
			}
			if _, err := res.SPIRV(); err != nil && strings.Contains(err.Error(), "internal") {
				t.Fatalf("%s SPIR-V: %v", target, err)
			}
		}
	})
}
