package interp

import (
	"testing"

	"tltune/compiler/ir"
)

// A 64x64x32 f32 GEMM per work-group, 8 groups: the collective path.
func BenchmarkGemmCollective(b *testing.B) {
	fn := parseFunc(b, `func @g(%A: memref<f32x64x32x?>, %B: memref<f32x32x64>, %C: memref<f32x64x64x?>) {
  %g = builtin.group_id : index
  %a = subview %A[0:64, 0:32, %g] : memref<f32x64x32>
  %c = subview %C[0:64, 0:64, %g] : memref<f32x64x64>
  %one = constant 1.0 : f32
  gemm.n.n %one, %a, %B, %one, %c
}`)
	args := []Arg{{Memref: NewMemref(ir.F32, 64, 32, 8)}, {Memref: NewMemref(ir.F32, 32, 64)}, {Memref: NewMemref(ir.F32, 64, 64, 8)}}
	b.ReportMetric(2*64*64*32*8, "flop/op")
	for b.Loop() {
		if err := Run(fn, args, Options{Groups: 8}); err != nil {
			b.Fatal(err)
		}
	}
}

// 128 work-items, each looping 32 times over a subgroup reduction: the
// scheduler's meeting points.
func BenchmarkSubgroupMeetings(b *testing.B) {
	fn := parseFunc(b, `func @s(%out: memref<f32x128>) attributes {subgroup_size=16, work_group_size=[64, 2]} {
  parallel {
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %sz = builtin.subgroup_size : i32
    %b = arith.mul %sg, %sz : i32
    %id32 = arith.add %b, %lane : i32
    %id = cast %id32 : index
    %x = cast %lane : f32
    %z = constant 0 : index
    %n = constant 32 : index
    %s = for %k = %z, %n init(%acc = %x) -> (f32) {
      %r = subgroup_add.reduce %acc : f32
      yield (%r)
    }
    store %s, %out[%id]
  }
}`)
	args := []Arg{{Memref: NewMemref(ir.F32, 128)}}
	for b.Loop() {
		if err := Run(fn, args, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
