package interp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tltune/compiler/check"
	"tltune/compiler/internal/exectest"
	"tltune/compiler/interp"
	"tltune/compiler/syntax"
	"tltune/internal/fuzzseed"
)

// FuzzInterpret runs every function of each program the front end and
// the verifier accept on the reference interpreter, with seeded arguments
// and a time limit: the program's own faults (an access out of bounds, a
// division by zero) are errors with a position; an internal error (a
// panic the interpreter recovered) is a bug. Seeds: the verifier's valid
// programs and the execution tests' kernels; testdata/fuzz/FuzzInterpret
// holds what fuzzing found and is replayed by go test.
func FuzzInterpret(f *testing.F) {
	fuzzseed.Add(f, "../check/testdata/valid/*.tl", "../testdata/exec/*.tl")
	f.Fuzz(func(t *testing.T, src []byte) {
		prog, errs := syntax.Parse(src)
		if len(errs) > 0 || len(check.Program(prog, nil)) > 0 {
			return
		}
		for _, fn := range prog.Funcs {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err := interp.Run(fn, exectest.Args(fn, 1), interp.Options{Groups: exectest.Groups, Context: ctx})
			cancel()
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("@%s: %v", fn.Name, err)
			}
		}
	})
}
