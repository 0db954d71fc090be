package ir_test

import (
	"math"
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/syntax"
)

// TestIndexRangesOfSizes: a size is its static extent, or anything from 0
// when dynamic, of a memref's mode and of a group alike (a group's one
// mode is its count of memrefs, which its type has no shape for).
func TestIndexRangesOfSizes(t *testing.T) {
	prog, errs := syntax.Parse([]byte(`func @k(%A: memref<f32x8x?>, %G: group<memref<f32x8>x4>, %H: group<memref<f32x8>x?>) {
    %a0 = size %A[0] : index
    %a1 = size %A[1] : index
    %g = size %G[0] : index
    %h = size %H[0] : index
}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := prog.Funcs[0]
	f.Number()
	var known ir.ValueMap[ir.Range]
	ir.IndexRanges(&known, f, func(ir.BuiltinKind) (ir.Range, bool) { return ir.Range{}, false })
	want := []ir.Range{{8, 8}, {0, math.MaxInt64}, {4, 4}, {0, math.MaxInt64}}
	for i, in := range f.Body.Insts {
		if got, _ := known.Get(in.Result()); got != want[i] {
			t.Errorf("%s: range %v, want %v", in.Result().Name, got, want[i])
		}
	}
}
