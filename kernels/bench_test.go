package kernels

import "testing"

// The tuner generates inputs and a reference once per shape and checks
// every configuration's output against it; these are the host-side costs.
var benchSpec = Spec{Op: GEMMOp, M: 64, N: 64, K: 32, DType: F16, Acc: F32, Layout: Strided, Alpha: 1, Beta: 1}

const benchBatch = 256

func BenchmarkInputs(b *testing.B) {
	for b.Loop() {
		if _, err := benchSpec.inputs(1, benchBatch); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(benchSpec.bytes(benchBatch))
}

func BenchmarkReference(b *testing.B) {
	in, _ := benchSpec.inputs(1, benchBatch)
	for b.Loop() {
		if _, err := benchSpec.reference(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchSpec.flops(benchBatch))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkCheck(b *testing.B) {
	in, _ := benchSpec.inputs(1, benchBatch)
	x, _ := benchSpec.reference(in)
	out := simulate(benchSpec, in, 0)
	for b.Loop() {
		if v, err := x.Check(out); err != nil || !v.OK {
			b.Fatal(v, err)
		}
	}
}
