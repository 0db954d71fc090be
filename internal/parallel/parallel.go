// Package parallel runs independent pieces of host work on every
// processor: the inputs and references of large batches, the GP's
// predictions over thousands of candidates.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines,
// each taking the next i, and returns when all are done. fn must be safe
// to call concurrently for distinct i.
func For(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
