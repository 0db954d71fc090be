package ir

import (
	"slices"
	"testing"
)

// TestMisfits: every broken rule comes back, in the order of the rules,
// and a Dynamic size breaks none, since the verifier cannot know it.
func TestMisfits(t *testing.T) {
	for _, c := range []struct {
		op             Op
		transA, transB Transpose
		inputs         [][]int64
		out            []int64
		want           []string
	}{
		{OpGemm, NoTrans, NoTrans, [][]int64{{2, 3}, {3, 4}}, []int64{2, 4}, nil},
		{OpGemm, Trans, NoTrans, [][]int64{{2, 3}, {3, 4}}, []int64{5, 6}, []string{
			"columns(op(A)) (2) must equal rows(op(B)) (3)",
			"rows(C) (5) must equal rows(op(A)) (3)",
			"columns(C) (6) must equal columns(op(B)) (4)",
		}},
		{OpGemm, NoTrans, Trans, [][]int64{{Dynamic, 3}, {4, Dynamic}}, []int64{2, Dynamic}, nil},
		{OpSum, NoTrans, NoTrans, [][]int64{{7}}, []int64{}, nil},
		{OpAxpby, Trans, NoTrans, [][]int64{{2, 3}}, []int64{2, 3}, []string{"the shape of B [2 3] must equal the shape of op(A) [3 2]"}},
		{OpHadamardProduct, NoTrans, NoTrans, [][]int64{{4}, {4, 1}}, []int64{Dynamic}, []string{"the shape of b [4 1] must equal the shape of a [4]"}},
	} {
		var got []string
		for _, m := range Misfits(c.op, c.transA, c.transB, c.inputs, c.out) {
			got = append(got, m.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %v -> %v: got %q, want %q", c.op, c.inputs, c.out, got, c.want)
		}
	}
}
