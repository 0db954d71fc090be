package opencl

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"
	"testing"

	"tltune/compiler/ir"
)

// eval evaluates a C index expression of the fragment layout for one lane
// and element (the expressions are also valid Go constant expressions with
// the same meaning: they are fully parenthesised where C and Go
// precedences differ).
func eval(t *testing.T, expr string, lane, i int) int {
	t.Helper()
	expr = strings.ReplaceAll(expr, "tl_lane", strconv.Itoa(lane))
	expr = strings.ReplaceAll(expr, "tl_i", strconv.Itoa(i))
	tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	v, _ := strconv.Atoi(tv.Value.ExactString())
	return v
}

// TestFragmentsFollowPTX checks the fragment layouts against the
// mma.m16n8k16 tables of the PTX ISA (groupID = lane/4, threadID_in_group
// = lane mod 4), written out independently here, and that every element of
// a block is held by exactly one lane.
func TestFragmentsFollowPTX(t *testing.T) {
	ptx := map[ir.MatrixUse]func(g, tid, i int) (row, col int){
		ir.MatrixA: func(g, tid, i int) (int, int) {
			row := g
			if i == 2 || i == 3 || i == 6 || i == 7 {
				row += 8
			}
			col := tid*2 + i%2
			if i >= 4 {
				col += 8
			}
			return row, col
		},
		ir.MatrixB: func(g, tid, i int) (int, int) {
			row := tid*2 + i%2
			if i >= 2 {
				row += 8
			}
			return row, g
		},
		ir.MatrixAcc: func(g, tid, i int) (int, int) {
			row := g
			if i >= 2 {
				row += 8
			}
			return row, tid*2 + i%2
		},
	}
	for use, want := range ptx {
		fr := ptxFragments[use]
		held := map[[2]int]int{}
		for lane := range 32 {
			for i := range fr.per {
				r, c := eval(t, fr.row, lane, i), eval(t, fr.col, lane, i)
				wr, wc := want(lane/4, lane%4, i)
				if r != wr || c != wc {
					t.Errorf("%s lane %d element %d: (%d, %d), PTX says (%d, %d)", use, lane, i, r, c, wr, wc)
				}
				held[[2]int{r, c}]++
			}
		}
		if len(held) != fr.br*fr.bc {
			t.Errorf("%s: lanes hold %d distinct elements of a %dx%d block", use, len(held), fr.br, fr.bc)
		}
	}
}

// TestFragmentsFollowDPAS checks the DPAS layouts against the description
// of cl_intel_subgroup_matrix_multiply_accumulate, written out
// independently: A rows are vector components and each lane contributes
// 32 bits (8 lanes: two K values) or 16 bits (16 lanes: one) per row; B
// and C columns are lanes, B packing K values in pairs.
func TestFragmentsFollowDPAS(t *testing.T) {
	for _, sgs := range []int{8, 16} {
		fr := dpasFragments(sgs)
		spec := map[ir.MatrixUse]func(lane, i int) (row, col int){
			ir.MatrixA: func(lane, i int) (int, int) {
				perRow := 16 / sgs // K values a lane holds per row
				return i / perRow, lane*perRow + i%perRow
			},
			ir.MatrixB:   func(lane, i int) (int, int) { return i, lane },
			ir.MatrixAcc: func(lane, i int) (int, int) { return i, lane },
		}
		for use, want := range spec {
			f := fr[use]
			held := map[[2]int]bool{}
			for lane := range sgs {
				for i := range f.per {
					r, c := eval(t, f.row, lane, i), eval(t, f.col, lane, i)
					if wr, wc := want(lane, i); r != wr || c != wc {
						t.Errorf("sg%d %s lane %d element %d: (%d, %d), want (%d, %d)", sgs, use, lane, i, r, c, wr, wc)
					}
					held[[2]int{r, c}] = true
				}
			}
			if len(held) != f.br*f.bc {
				t.Errorf("sg%d %s: lanes hold %d distinct elements of a %dx%d block", sgs, use, len(held), f.br, f.bc)
			}
		}
	}
}
