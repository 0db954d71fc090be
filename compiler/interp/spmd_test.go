package interp

import (
	"math"
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// spmdKernel runs body in a parallel region of a work-group of 8 work-items
// in subgroups of 4; body sees %id (the work-item's linear id, index) and
// %x = id%4 + 1 (i32), and stores into %out (memref<i32x8x?>).
const spmdKernel = `func @t(%out: memref<i32x8x?>, %in: memref<i32x8>) attributes {subgroup_size=4, work_group_size=[8, 1]} {
  parallel {
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %four = constant 4 : i32
    %one = constant 1 : i32
    %base = arith.mul %sg, %four : i32
    %id32 = arith.add %base, %lane : i32
    %id = cast %id32 : index
    %x = arith.add %lane, %one : i32
BODY
  }
}`

func TestSubgroupOperations(t *testing.T) {
	fn := parseFunc(t, strings.Replace(spmdKernel, "BODY", `
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    %c4 = constant 4 : index
    %c5 = constant 5 : index
    %c6 = constant 6 : index
    %two = constant 2 : i32
    %r0 = subgroup_add.inclusive_scan %x : i32
    %r1 = subgroup_add.exclusive_scan %x : i32
    %r2 = subgroup_add.reduce %x : i32
    %r3 = subgroup_max.reduce %x : i32
    %r4 = subgroup_min.exclusive_scan %x : i32
    %r5 = subgroup_broadcast %x, %two : i32
    %y = load %in[%id] : i32
    %r6 = subgroup_max.inclusive_scan %y : i32
    store %r0, %out[%id, %c0]
    store %r1, %out[%id, %c1]
    store %r2, %out[%id, %c2]
    store %r3, %out[%id, %c3]
    store %r4, %out[%id, %c4]
    store %r5, %out[%id, %c5]
    store %r6, %out[%id, %c6]`, 1))
	out := NewMemref(ir.I32, 8, 7)
	in := vec(ir.I32, 3, -1, 7, 2, -5, -9, -2, -7)
	if err := Run(fn, []Arg{{Memref: out}, {Memref: in}}, Options{}); err != nil {
		t.Fatal(err)
	}
	inclusive := []int{1, 3, 6, 10}
	exclusive := []int{0, 1, 3, 6}
	minExcl := []int{math.MaxInt32, 1, 1, 1}
	maxIn := []int{3, 3, 7, 7, -5, -5, -2, -2}
	var want []any
	for col := range 7 {
		for id := range 8 {
			lane := id % 4
			want = append(want, []int{inclusive[lane], exclusive[lane], 10, 4, minExcl[lane], 3, maxIn[id]}[col])
		}
	}
	checkBuffer(t, "out", out.Buf, want...)
}

// subgroup_shuffle_xor swaps values between partner lanes: mask 1 swaps
// neighbours, mask 2 pairs lanes two apart; two steps add up a subgroup.
func TestShuffleXor(t *testing.T) {
	fn := parseFunc(t, strings.Replace(spmdKernel, "BODY", `
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %two = constant 2 : i32
    %y = load %in[%id] : i32
    %r0 = subgroup_shuffle_xor %y, %one : i32
    %r1 = subgroup_shuffle_xor %y, %two : i32
    %s1 = arith.add %y, %r0 : i32
    %s2 = subgroup_shuffle_xor %s1, %two : i32
    %r2 = arith.add %s1, %s2 : i32
    store %r0, %out[%id, %c0]
    store %r1, %out[%id, %c1]
    store %r2, %out[%id, %c2]`, 1))
	out := NewMemref(ir.I32, 8, 3)
	in := vec(ir.I32, 3, -1, 7, 2, -5, -9, -2, -7)
	if err := Run(fn, []Arg{{Memref: out}, {Memref: in}}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf,
		-1, 3, 2, 7, -9, -5, -7, -2,
		7, 2, 3, -1, -2, -7, -5, -9,
		11, 11, 11, 11, -23, -23, -23, -23)
}

// Each work-item writes its input to local memory, then reads its right
// neighbour's. Without the barrier the neighbour has not written yet (work-
// items run one after another until they must meet), so the result differs.
func TestBarrierIsNeeded(t *testing.T) {
	src := strings.Replace(spmdKernel, "BODY", `
    %tmp = alloca : memref<i32x8, local>
    %v = load %in[%id] : i32
    store %v, %tmp[%id]
    barrier.local
    %c1 = constant 1 : index
    %c8 = constant 8 : index
    %n0 = arith.add %id, %c1 : index
    %n = arith.rem %n0, %c8 : index
    %w = load %tmp[%n] : i32
    %c0 = constant 0 : index
    store %w, %out[%id, %c0]`, 1)
	// alloca is collective: hoist it out of the parallel region.
	src = strings.Replace(src, "  parallel {", "  %tmp = alloca : memref<i32x8, local>\n  parallel {", 1)
	src = strings.Replace(src, "    %tmp = alloca : memref<i32x8, local>\n", "", 1)
	in := vec(ir.I32, 10, 11, 12, 13, 14, 15, 16, 17)
	run := func(src string) *Buffer {
		out := NewMemref(ir.I32, 8, 1)
		if err := Run(parseFunc(t, src), []Arg{{Memref: out}, {Memref: in}}, Options{}); err != nil {
			t.Fatal(err)
		}
		return out.Buf
	}
	checkBuffer(t, "with barrier", run(src), 11, 12, 13, 14, 15, 16, 17, 10)
	without := strings.Replace(src, "    barrier.local\n", "", 1)
	if without == src {
		t.Fatal("no barrier removed")
	}
	// Work-item k < 7 reads slot k+1 before work-item k+1 wrote it: the
	// poison of fresh local memory (-1); the last one reads slot 0, written.
	checkBuffer(t, "without barrier", run(without), -1, -1, -1, -1, -1, -1, -1, 10)
}

func TestForeach(t *testing.T) {
	fn := parseFunc(t, `func @t(%A: memref<i32x5x3>) attributes {subgroup_size=2, work_group_size=[4, 1]} {
  %lo0 = constant 1 : index
  %hi0 = constant 5 : index
  %lo1 = constant 0 : index
  %hi1 = constant 3 : index
  foreach (%i, %j) = (%lo0, %lo1), (%hi0, %hi1) {
    %ten = constant 10 : index
    %t = arith.mul %j, %ten : index
    %v = arith.add %t, %i : index
    %v32 = cast %v : i32
    store %v32, %A[%i, %j]
  }
}`)
	A := NewMemref(ir.I32, 5, 3)
	if err := Run(fn, []Arg{{Memref: A}}, Options{}); err != nil {
		t.Fatal(err)
	}
	// Row 0 is outside the range and keeps its zeros.
	checkBuffer(t, "A", A.Buf, 0, 1, 2, 3, 4, 0, 11, 12, 13, 14, 0, 21, 22, 23, 24)
}

// Loops in SPMD regions may run a different number of times per work-item.
func TestDivergentLoops(t *testing.T) {
	fn := parseFunc(t, strings.Replace(spmdKernel, "BODY", `
    %z = constant 0 : i32
    %s = for %k : i32 = %z, %x init(%a = %z) -> (i32) {
      %b = arith.add %a, %k : i32
      yield (%b)
    }
    %c0 = constant 0 : index
    store %s, %out[%id, %c0]`, 1))
	out := NewMemref(ir.I32, 8, 1)
	if err := Run(fn, []Arg{{Memref: out}, {Memref: NewMemref(ir.I32, 8)}}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "out", out.Buf, 0, 1, 3, 6, 0, 1, 3, 6)
}
