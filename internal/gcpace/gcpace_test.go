package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// pace is the collector's current percentage (SetGCPercent returns the
// one it replaces).
func pace() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// heapGoal is the runtime's current heap goal in bytes.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestRelax: after Relax, and after each collection, the heap goal is at
// least floor for a small live heap; restore gives back the pace before
// it and stops adjusting.
func TestRelax(t *testing.T) {
	before := pace()
	restore := Relax()
	for i := range 3 {
		runtime.GC()
		// The finalizer that adjusts the pace runs after the collection,
		// on the runtime's finalizer goroutine.
		deadline := time.Now().Add(5 * time.Second)
		for heapGoal() < floor && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		if got := heapGoal(); got < floor {
			t.Errorf("collection %d: the heap goal is %d bytes (pace %d), want at least %d", i, got, pace(), floor)
		}
	}
	restore()
	if got := pace(); got != before {
		t.Errorf("after restore the pace is %d, want %d", got, before)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := pace(); got != before {
		t.Errorf("after restore and a collection the pace is %d, want %d", got, before)
	}
}

// TestPaceFor: the pace gives floor for small live heaps and percent for
// large ones.
func TestPaceFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 1600},
		{minimumGoal - 1, 1600},
		{8 << 20, 700},
		{floor / 5, 400},
		{1 << 30, 400},
	} {
		if got := paceFor(c.live); got != c.want {
			t.Errorf("paceFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestRelaxKeepsGOGC(t *testing.T) {
	t.Setenv("GOGC", "50")
	before := pace()
	defer Relax()()
	if got := pace(); got != before {
		t.Errorf("with GOGC set Relax changed the pace from %d to %d", before, got)
	}
}
