package worker

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"tltune/kernels"
	"tltune/tuner"
)

// FaultEnv names the environment variable that injects faults into the
// worker, for tests: a comma-separated list of KIND@N, N the evaluation
// number (1-based, in proposal order) at whose verification launch the
// fault strikes:
//
//	abort   the worker aborts, as a driver's failed assertion does (abort(3))
//	segv    the worker writes through a null pointer in C code
//	hang    the worker never answers, as a kernel that never ends
//	wrong   the kernel's output comes back corrupted
//	lost    the worker reports that the device was lost
//
// A configuration retried after a crash keeps its evaluation number, so an
// abort or segv strikes again and the configuration is recorded as a crash.
const FaultEnv = "TLTUNE_FAULT"

// Fault is one kind of injected fault.
type Fault string

// The faults TLTUNE_FAULT can inject.
const (
	FaultAbort Fault = "abort"
	FaultSegv  Fault = "segv"
	FaultHang  Fault = "hang"
	FaultWrong Fault = "wrong"
	FaultLost  Fault = "lost"
)

var faultKinds = []Fault{FaultAbort, FaultSegv, FaultHang, FaultWrong, FaultLost}

// Faults maps evaluation numbers to the fault injected there.
type Faults map[int]Fault

// ParseFaults reads a TLTUNE_FAULT value, e.g. "abort@3,hang@5".
func ParseFaults(spec string) (Faults, error) {
	fs := Faults{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		kind, at, ok := strings.Cut(item, "@")
		n, err := strconv.Atoi(at)
		if !ok || err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not KIND@N with N ≥ 1", FaultEnv, item)
		}
		if !slices.Contains(faultKinds, Fault(kind)) {
			return nil, fmt.Errorf("%s: unknown fault %q; use %s", FaultEnv, kind, faultList())
		}
		fs[n] = Fault(kind)
	}
	return fs, nil
}

func faultList() string {
	names := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// strike injects the fault of evaluation seq, if any, into a verification
// launch whose output is out. It returns the error to report instead of the
// output (a lost device); the crashing faults do not return.
func (fs Faults) strike(seq int, out *kernels.Buffer) error {
	f, ok := fs[seq]
	if !ok {
		return nil
	}
	// Said first, as a driver says what went wrong before it aborts.
	fmt.Fprintf(os.Stderr, "tltune worker: injected fault %s at evaluation %d\n", f, seq)
	switch f {
	case FaultAbort:
		abortProcess()
	case FaultSegv:
		nullWrite()
	case FaultHang:
		for {
			time.Sleep(time.Hour)
		}
	case FaultWrong:
		// Values of the right type and shape, and wrong: as a kernel that
		// indexes badly.
		for i := range out.Len() {
			out.Set(i, complex(float64(i%5)-math.Pi, 0))
		}
	case FaultLost:
		return tuner.Fail(tuner.DeviceLost, fmt.Errorf("device lost (injected at evaluation %d)", seq))
	}
	return nil
}
