package interp

import (
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// Two subgroups each multiply a 4x3 block of A by Bᵀ (B loaded transposed),
// add a block of C loaded with bounds checks at the matrix edge, scale by
// alpha and store (checked) to Out and atomically added to Acc.
func TestCooperativeMatrix(t *testing.T) {
	fn := parseFunc(t, `func @t(%alpha: f32, %A: memref<f32x8x3>, %B: memref<f32x2x3>, %C: memref<f32x5x3>,
                %Out: memref<f32x5x3>, %Acc: memref<f32x5x3>) attributes {subgroup_size=4, work_group_size=[8, 1]} {
  parallel {
    %sg = builtin.subgroup_id : i32
    %s = cast %sg : index
    %four = constant 4 : index
    %c0 = constant 0 : index
    %row = arith.mul %s, %four : index
    %a = cooperative_matrix_load.n %A[%row, %c0] : coopmatrix<f32x4x3, matrix_a>
    %b = cooperative_matrix_load.t %B[%c0, %c0] : coopmatrix<f32x3x2, matrix_b>
    %c = cooperative_matrix_load.n.both_checked %C[%row, %s] : coopmatrix<f32x4x2, matrix_acc>
    %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32x4x2, matrix_acc>
    %e = cooperative_matrix_scale %alpha, %d : coopmatrix<f32x4x2, matrix_acc>
    cooperative_matrix_store.both_checked %e, %Out[%row, %s]
    cooperative_matrix_store.both_checked.atomic_add %e, %Acc[%row, %s]
  }
}`)
	fill := func(m *Memref, f func(i, j int64) float64) *Memref {
		for i := range m.Shape[0] {
			for j := range m.Shape[1] {
				m.set(floatVal(f(i, j)), i, j)
			}
		}
		return m
	}
	A := fill(NewMemref(ir.F32, 8, 3), func(i, j int64) float64 { return float64(i - 2*j) })
	B := fill(NewMemref(ir.F32, 2, 3), func(i, j int64) float64 { return float64(1 + i + j*j) })
	C := fill(NewMemref(ir.F32, 5, 3), func(i, j int64) float64 { return float64(10 * (i + j)) })
	Out := fill(NewMemref(ir.F32, 5, 3), func(i, j int64) float64 { return -100 })
	Acc := fill(NewMemref(ir.F32, 5, 3), func(i, j int64) float64 { return 1 })
	args := []Arg{{Float: 2}, {Memref: A}, {Memref: B}, {Memref: C}, {Memref: Out}, {Memref: Acc}}
	if err := Run(fn, args, Options{}); err != nil {
		t.Fatal(err)
	}
	wantOut := fill(NewMemref(ir.F32, 5, 3), func(i, j int64) float64 { return -100 })
	wantAcc := fill(NewMemref(ir.F32, 5, 3), func(i, j int64) float64 { return 1 })
	get := func(m *Memref, i, j int64) float64 { v, _ := m.get(i, j); return v.f }
	for s := range int64(2) {
		for i := range int64(4) {
			for j := range int64(2) {
				r, c := 4*s+i, s+j
				if r >= 5 || c >= 3 {
					continue
				}
				v := get(C, r, c)
				for k := range int64(3) {
					v += get(A, 4*s+i, k) * get(B, j, k)
				}
				wantOut.set(floatVal(2*v), r, c)
				wantAcc.set(floatVal(1+2*v), r, c)
			}
		}
	}
	for i := range Out.Buf.Len() {
		if Out.Buf.Float(i) != wantOut.Buf.Float(i) || Acc.Buf.Float(i) != wantAcc.Buf.Float(i) {
			t.Errorf("element %d: Out %g Acc %g, want %g %g", i, Out.Buf.Float(i), Acc.Buf.Float(i), wantOut.Buf.Float(i), wantAcc.Buf.Float(i))
		}
	}
}

// A transposed checked load tests the memref index actually read: rows of
// the loaded matrix run along the memref's columns.
func TestCooperativeMatrixTransposedCheck(t *testing.T) {
	const src = `func @t(%M: memref<f32x3x2>, %Out: memref<f32x2x4>) attributes {subgroup_size=1, work_group_size=[1, 1]} {
  parallel {
    %c0 = constant 0 : index
    %a = cooperative_matrix_load.t.CHECK %M[%c0, %c0] : coopmatrix<f32x2x4, matrix_acc>
    cooperative_matrix_store %a, %Out[%c0, %c0]
  }
}`
	M := iotaMemref(3, 2) // M[i,j] = i + 3j
	Out := NewMemref(ir.F32, 2, 4)
	run := func(check string) error {
		fn := parseFunc(t, strings.Replace(src, "CHECK", check, 1))
		return Run(fn, []Arg{{Memref: M}, {Memref: Out}}, Options{})
	}
	// a_ij = M[j, i]: column j = 3 of the matrix lies beyond M's rows, which
	// .t.rows_checked does not guard (it guards M's columns); .t.cols_checked does.
	if err := run("rows_checked"); err == nil {
		t.Fatal("reading M[3, i] without a check on M's rows must fail")
	}
	if err := run("cols_checked"); err != nil {
		t.Fatal(err)
	}
	// Out (column-major 2x4): a_ij = M[j, i] = j + 3i, zero for j = 3.
	checkBuffer(t, "Out", Out.Buf, 0.0, 3.0, 1.0, 4.0, 2.0, 5.0, 0.0, 0.0)
}

func TestCoopmatrixArithmetic(t *testing.T) {
	fn := parseFunc(t, `func @t(%Out: memref<i32x2x2>) attributes {subgroup_size=2, work_group_size=[2, 1]} {
  parallel {
    %c0 = constant 0 : index
    %x = constant 3 : coopmatrix<i32x2x2, matrix_acc>
    %y = constant 5 : coopmatrix<i32x2x2, matrix_acc>
    %p = arith.mul %x, %y : coopmatrix<i32x2x2, matrix_acc>
    %n = arith.neg %p : coopmatrix<i32x2x2, matrix_acc>
    %s = arith.sub %n, %x : coopmatrix<i32x2x2, matrix_acc>
    cooperative_matrix_store %s, %Out[%c0, %c0]
  }
}`)
	Out := NewMemref(ir.I32, 2, 2)
	if err := Run(fn, []Arg{{Memref: Out}}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkBuffer(t, "Out", Out.Buf, -18, -18, -18, -18)
}
