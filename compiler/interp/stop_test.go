package interp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tltune/compiler/ir"
)

// TestContextStopsEndlessLoops: a loop that would run for centuries stops
// soon after the context's deadline, in the collective region and in every
// work-item of an SPMD region, with the context's error.
func TestContextStopsEndlessLoops(t *testing.T) {
	endless := `
    %z = constant 0 : i64
    %big = constant 4611686018427387904 : i64
    %s = for %k : i64 = %z, %big init(%a = %z) -> (i64) {
      %b = arith.add %a, %k : i64
      yield (%b)
    }`
	collective := parseFunc(t, `func @t(%out: memref<i32x8x?>, %in: memref<i32x8>) {`+endless+`
}`)
	spmd := parseFunc(t, strings.Replace(spmdKernel, "BODY", endless, 1))
	for name, fn := range map[string]*ir.Func{"collective": collective, "spmd": spmd} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		err := Run(fn, []Arg{{Memref: NewMemref(ir.I32, 8, 1)}, {Memref: NewMemref(ir.I32, 8)}}, Options{Context: ctx})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
			t.Errorf("%s: %v after %v; want the deadline's error soon after 50ms", name, err, time.Since(start))
		}
	}
}
