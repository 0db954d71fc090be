package kernels

import (
	"bytes"
	"runtime"
	"slices"
	"testing"
)

// TestInputsAndReferenceIndependentOfCores: the inputs and the reference
// of a batch come out the same on one core and on several (each random
// chunk has its own stream, each entry its own scratch), and another seed
// gives other inputs.
func TestInputsAndReferenceIndependentOfCores(t *testing.T) {
	r, err := GEMM(Spec{M: 300, N: 7, K: 250, DType: F16, Acc: F32, Alpha: 1.5, Beta: 0.5, Layout: Strided})
	if err != nil {
		t.Fatal(err)
	}
	run := func(procs int, seed uint64) (*Inputs, *Expected) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		in, err := r.Inputs(seed, 9)
		if err != nil {
			t.Fatal(err)
		}
		x, err := r.Reference(in)
		if err != nil {
			t.Fatal(err)
		}
		return in, x
	}
	in1, x1 := run(1, 7)
	in4, x4 := run(4, 7)
	for i := range in1.Args {
		if !bytes.Equal(in1.Args[i].Data, in4.Args[i].Data) {
			t.Errorf("%s differs between 1 and 4 cores", in1.Args[i].Name)
		}
	}
	if !slices.Equal(x1.Values, x4.Values) {
		t.Error("the reference differs between 1 and 4 cores")
	}
	if other, _ := run(4, 8); bytes.Equal(other.Args[0].Data, in1.Args[0].Data) {
		t.Error("seeds 7 and 8 give the same A")
	}
	// A spans ten random chunks: no two of them repeat a stream.
	a := in1.Args[0].Data
	chunk := randomChunk * F16.Size()
	if bytes.Equal(a[:64], a[chunk:chunk+64]) || bytes.Equal(a[:64], a[2*chunk:2*chunk+64]) {
		t.Error("two random chunks start with the same values")
	}
}
