package gcpace

import (
	"runtime/debug"
	"testing"
)

// pace is the collector's current percentage (SetGCPercent returns the
// one it replaces).
func pace() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestRelax(t *testing.T) {
	before := pace()
	restore := Relax()
	if got := pace(); got != percent {
		t.Errorf("after Relax the pace is %d, want %d", got, percent)
	}
	restore()
	if got := pace(); got != before {
		t.Errorf("after restore the pace is %d, want %d", got, before)
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
