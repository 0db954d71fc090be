package interp

import (
	"math"
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// asyncKernel has two work-items copy halves of %A into local memory and
// each read the other's half; WAIT and SYNC stand for the wait and the
// barrier a correct pipeline needs between the copies and the reads.
const asyncKernel = `func @t(%A: memref<f32x8>, %O: memref<f32x8>) attributes {work_group_size=[2, 1], subgroup_size=1} {
  %l = alloca {alignment=16} : memref<f32x8, local>
  parallel {
    %sg = builtin.subgroup_id : i32
    %w = cast %sg : index
    %c4 = constant 4 : index
    %at = arith.mul %w, %c4 : index
    async_copy.4 %A[%at], %l[%at], %c4
    async_commit
    WAIT
    SYNC
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %o = arith.add %w, %c1 : index
    %other = arith.rem %o, %c2 : index
    %from = arith.mul %other, %c4 : index
    %x = load %l[%from] : f32
    store %x, %O[%at]
  }
}`

func runAsync(t *testing.T, wait, sync string) []float64 {
	t.Helper()
	src := strings.NewReplacer("WAIT", wait, "SYNC", sync).Replace(asyncKernel)
	a, out := iotaMemref(8), NewMemref(ir.F32, 8)
	if err := Run(parseFunc(t, src), []Arg{{Memref: a}, {Memref: out}}, Options{}); err != nil {
		t.Fatal(err)
	}
	return []float64{out.Buf.Float(0), out.Buf.Float(4)}
}

// TestAsyncCopyPipelineBreaches shows that the reference interpreter
// exposes a missing wait or barrier as NaN instead of hiding it behind a
// copy that happens to be complete.
func TestAsyncCopyPipelineBreaches(t *testing.T) {
	if got := runAsync(t, "async_wait.0", "barrier.local"); got[0] != 4 || got[1] != 0 {
		t.Errorf("with wait and barrier: got %v, want [4 0]", got)
	}
	for _, c := range []struct{ wait, sync string }{
		{"", "barrier.local"},             // no wait: the copies never completed
		{"async_wait.1", "barrier.local"}, // the wait leaves the only group in flight
		{"async_wait.0", ""},              // no barrier: work-item 0 reads before 1 waited
	} {
		got := runAsync(t, c.wait, c.sync)
		if !math.IsNaN(got[0]) {
			t.Errorf("wait %q, barrier %q: work-item 0 read %v, want NaN", c.wait, c.sync, got[0])
		}
	}
}
