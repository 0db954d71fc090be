package opencl

import (
	"sync"

	"tltune/compiler/internal/slab"
	"tltune/compiler/ir"
)

// workspace is what writing a program needs only while it is written: the
// tables of a kernel's values, sized by the function, and the chunks its
// C expressions are joined in. Made afresh for every compile they were a
// fifth of the bytes a GEMM compile allocates (the tables a few dozen
// bytes per value, for a thousand values), and allocation costs the
// collector's assists by the byte; a workspace is recycled instead.
type workspace struct {
	names  ir.ValueMap[string]   // scalar and coopmatrix values
	mems   ir.ValueMap[*memref]  // memref values
	ranges ir.ValueMap[ir.Range] // integer values' known ranges (narrow.go)
	aligns []aligned             // memref values' alignment (fn.alignment)
	coops  coopValues
	text   text  // the chunks expressions are joined in
	unit   unit  // the program's state
	slab   slabs // its memref views and expression slices
	// The tables of a kernel's groups, the variables its regions' yields
	// store to, and slotRow's expressions by rows per lane.
	groups   map[*ir.Value]*group
	yields   map[*ir.Region][]string
	slotRows map[int]string
	// preamble is the program's text before its kernels.
	preamble code
}

var workspaces = sync.Pool{New: func() any { return &workspace{} }}

// getWorkspace returns a workspace for a program; putWorkspace returns it once
// the program is written, when nothing refers to the strings of its text.
func getWorkspace() *workspace { return workspaces.Get().(*workspace) }

func putWorkspace(s *workspace) {
	// Emptied here, so that the pool keeps no program alive.
	s.names.Reset(0)
	s.mems.Reset(0)
	clear(s.groups)
	clear(s.yields)
	clear(s.slotRows)
	s.ranges.Reset(0)
	clear(s.aligns)
	s.aligns = s.aligns[:0]
	s.coops.num.Reset(0)
	clear(s.coops.insts[:cap(s.coops.insts)])
	clear(s.coops.vals[:cap(s.coops.vals)])
	s.text.recycle()
	s.slab.recycle()
	s.unit.reset(nil)
	workspaces.Put(s)
}

// reset readies the value tables for the values of f.
func (s *workspace) reset(f *ir.Func) {
	s.names.Reset(f.NumValues)
	s.mems.Reset(f.NumValues)
	clear(s.aligns)
	s.aligns = s.aligns[:0]
	if s.groups == nil {
		s.groups, s.yields, s.slotRows = map[*ir.Value]*group{}, map[*ir.Region][]string{}, map[int]string{}
	}
	clear(s.groups)
	clear(s.yields)
	clear(s.slotRows)
}

// slabs hand out the memref views of a program and the slices of C
// expressions its kernels keep (shapes and strides, loop-carried
// variables), from arrays recycled with the workspace: a view per
// subview and expansion, they were most of the objects writing a GEMM
// kernel allocated.
type slabs struct {
	mems slab.Of[memref]
	strs slab.Of[string]
}

// recycle empties s; nothing it handed out may be used after.
func (s *slabs) recycle() {
	s.mems.Recycle()
	s.strs.Recycle()
}
