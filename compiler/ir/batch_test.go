package ir_test

import (
	"testing"

	"tltune/compiler/ir"
	"tltune/compiler/syntax"
)

func TestBatchExtent(t *testing.T) {
	for _, c := range []struct {
		src  string
		want ir.BatchExtent
		ok   bool
	}{
		{`func @k(%A: memref<f32x8x?>) {
    %g = builtin.group_id : index
    %a = subview %A[0:8, %g] : memref<f32x8>
}`, ir.BatchExtent{Param: 0, Mode: 1}, true},
		{`func @k(%s: f32, %G: group<memref<f32x8>x?>) {
    %g = builtin.group_id : index
    %a = load %G[%g] : memref<f32x8>
}`, ir.BatchExtent{Param: 1, Mode: ir.GroupSizeMode}, true},
		{`func @k(%A: memref<i32x?x5>) {
    %g = builtin.group_id : index
    %g32 = cast %g : i32
    %gi = cast %g32 : index
    %c0 = constant 0 : index
    parallel {
        %x = load %A[%gi, %c0] : i32
    }
}`, ir.BatchExtent{Param: 0, Mode: 0}, true},
		{`func @k(%A: memref<f32x8x?>) {
    %c0 = constant 0 : index
    %a = subview %A[0:8, %c0] : memref<f32x8>
}`, ir.BatchExtent{}, false},
		{`func @k(%A: memref<f32x8x?>) {
    %g = builtin.group_id : index
    %v = subview %A[0:8, 0:2] : memref<f32x8x2>
    %a = subview %v[0:8, %g] : memref<f32x8>
}`, ir.BatchExtent{}, false},
	} {
		prog, errs := syntax.Parse([]byte(c.src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		got, ok := prog.Funcs[0].BatchExtent()
		if got != c.want || ok != c.ok {
			t.Errorf("BatchExtent = %v, %v; want %v, %v\n%s", got, ok, c.want, c.ok, c.src)
		}
	}
}
