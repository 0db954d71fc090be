package kernels

import (
	"runtime"
	"sync"
)

// inParallel runs fn(i) for every i in [0, n) on up to GOMAXPROCS
// goroutines, each taking the next i, and returns when all are done.
// Generating a large batch's inputs and computing its reference took
// seconds on one core of a machine with sixteen.
func inParallel(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next sync.Mutex
	i := 0
	take := func() (int, bool) {
		next.Lock()
		defer next.Unlock()
		if i == n {
			return 0, false
		}
		i++
		return i - 1, true
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j, ok := take(); ok; j, ok = take() {
				fn(j)
			}
		})
	}
	wg.Wait()
}
