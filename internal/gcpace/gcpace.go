// Package gcpace owns how tltune's processes pace Go's garbage collector.
//
// A tuning run compiles one kernel per evaluation, and a compile allocates
// about 80-130 KB that are garbage once its program is written, while the
// live heap stays a few megabytes: at Go's default pace (a collection
// each time the heap doubles) the collector ran every few compiles and
// took 30-40 % of a compile's time (BenchmarkCompileSpace under a CPU
// profile). Letting the heap grow to five times the live heap between
// collections costs a few tens of megabytes and spares most of that, as
// cmd/compile enlarges its starting heap for the same reason.
package gcpace

import (
	"os"
	"runtime/debug"
)

// percent is the collector's pace for tltune: the heap may grow by this
// percentage of the live heap between collections (Go's default is 100).
const percent = 400

// Relax sets tltune's pace unless the user chose one with GOGC, and
// returns what restores the pace before it.
func Relax() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
