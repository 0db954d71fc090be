package kernels

import (
	"bytes"
	"testing"
)

// TestInputsRepeat: a repeated batch holds the generated entries in turn,
// a partial last round included, the NaN output too.
func TestInputsRepeat(t *testing.T) {
	s := Spec{Op: GEMMOp, M: 3, N: 2, K: 5, DType: F16, Acc: F32, Alpha: 1}
	in, err := s.inputs(7, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := in.Repeat(8)
	if out.Batch != 8 || len(out.Args) != len(in.Args) {
		t.Fatalf("batch %d, %d arguments", out.Batch, len(out.Args))
	}
	for a, b := range out.Args {
		src := in.Args[a]
		size := len(src.Data) / src.Batch
		if b.Batch != 8 || len(b.Data) != 8*size {
			t.Fatalf("%s: batch %d, %d bytes", b.Name, b.Batch, len(b.Data))
		}
		for e := range 8 {
			got, want := b.Data[e*size:(e+1)*size], src.Data[e%3*size:(e%3+1)*size]
			if !bytes.Equal(got, want) {
				t.Errorf("%s entry %d is not entry %d", b.Name, e, e%3)
			}
		}
	}
}
