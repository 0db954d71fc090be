package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestForRunsEachOnce: every index runs exactly once, on one processor
// and on several, and n = 0 runs nothing.
func TestForRunsEachOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 3, 1000} {
			counts := make([]atomic.Int32, n)
			For(n, func(i int) { counts[i].Add(1) })
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d ran %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
