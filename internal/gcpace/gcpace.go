// Package gcpace owns how tltune's processes pace Go's garbage collector.
//
// A tuning run compiles one kernel per evaluation, and a compile allocates
// about 80-260 KB that are garbage once its program is written, while the
// live heap stays a few megabytes: at Go's default pace (a collection
// each time the heap doubles) the collector ran every few compiles and
// took 30-40 % of a compile's time (BenchmarkCompileSpace under a CPU
// profile). Letting the heap grow to five times the live heap between
// collections spared most of that; with a live heap of a few megabytes it
// still collected every hundred compiles or so, and a compile that runs
// while the collector marks pays its write barriers (clearing a recycled
// table of pointers was a tenth of an OpenCL C compile then). So the heap
// may also grow to floor before a collection, as cmd/compile enlarges its
// starting heap for the same reason: a few tens of megabytes of garbage
// per process, for a collection every few hundred compiles.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	// percent is the collector's pace for tltune: the heap may grow by
	// this percentage of the live heap between collections (Go's default
	// is 100).
	percent = 400
	// floor is the heap size below which tltune's pace starts no
	// collection.
	floor = 64 << 20
	// minimumGoal is the runtime's smallest heap goal at Go's default
	// pace (GOGC=100), the goal before any collection has measured a live
	// heap; it scales with the pace.
	minimumGoal = 4 << 20
)

// Relax sets tltune's pace unless the user chose one with GOGC, and
// returns what restores the pace before it.
func Relax() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	p := &pacer{}
	p.adjust()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stopped = true
		debug.SetGCPercent(old)
	}
}

// pacer keeps the pace at paceFor the live heap, adjusted after every
// collection until it is stopped (under mu, so that an adjustment on the
// finalizer goroutine cannot follow the restore).
type pacer struct {
	mu      sync.Mutex
	stopped bool
}

// adjust sets the pace for the live heap the last collection left, and
// has the next collection call adjust again: a finalizer runs after the
// collection that finds its object unreachable, and the object made here
// is unreachable at once.
func (p *pacer) adjust() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	debug.SetGCPercent(paceFor(liveHeap()))
	runtime.SetFinalizer(new(sentinel), func(*sentinel) { p.adjust() })
}

// sentinel is the object whose finalizer marks a collection; it has a size
// because the runtime may give every zero-sized object one address.
type sentinel struct{ _ int64 }

// paceFor is the pace for a live heap of live bytes (0: none measured
// yet): percent, or more where percent would start a collection before
// the heap reaches floor. The runtime's goal is never below minimumGoal
// scaled by the pace, which is what sets it for a live heap smaller than
// minimumGoal.
func paceFor(live uint64) int {
	switch {
	case live < minimumGoal:
		return floor * 100 / minimumGoal
	case live+live*percent/100 >= floor:
		return percent
	}
	return int((floor - live) * 100 / live)
}

// liveHeap is the heap the last collection found live, in bytes (0 before
// the first).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
