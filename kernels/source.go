package kernels

import (
	"fmt"
	"slices"
	"strings"

	"tltune/compiler/ir"
	"tltune/compiler/tuning"
)

// ParamsAttr is the name of the function attribute that carries the tuning
// parameters which have no attribute of their own in the language (see the
// package documentation).
const ParamsAttr = "tltune.params"

// operand is one kernel argument: a batch of matrices or vectors.
type operand struct {
	name  string // identifier without "%"
	shape []int  // one batch entry, column-major
	dtype DType
}

// operands returns the kernel's arguments in order; the output is last.
func (s Spec) operands() []operand {
	switch s.Op {
	case GEMVOp:
		return []operand{
			{"A", storedShape(s.M, s.N, s.TransA), s.DType},
			{"b", []int{s.N}, s.DType},
			{"c", []int{s.M}, s.Acc},
		}
	case GEROp:
		return []operand{
			{"a", []int{s.M}, s.DType},
			{"b", []int{s.N}, s.DType},
			{"C", []int{s.M, s.N}, s.Acc},
		}
	}
	return []operand{
		{"A", storedShape(s.M, s.K, s.TransA), s.DType},
		{"B", storedShape(s.K, s.N, s.TransB), s.DType},
		{"C", []int{s.M, s.N}, s.Acc},
	}
}

// storedShape is the shape in memory of a matrix whose op() is rows×cols.
func storedShape(rows, cols int, trans bool) []int {
	if trans {
		return []int{cols, rows}
	}
	return []int{rows, cols}
}

func (o operand) elements() int {
	n := 1
	for _, d := range o.shape {
		n *= d
	}
	return n
}

// vectorAlignment is the alignment the recipes promise for a batch entry's
// first element when it allows: the 16 bytes of a 128-bit vector access.
const vectorAlignment = 16

// alignment is the byte alignment the kernel may assume for every batch
// entry of o: the buffer itself is a device allocation (aligned to at
// least 128 bytes), entries lie whole entries apart in both layouts
// (tuner/bench.InputParams), so entry e starts e·(entry bytes) in; the
// alignment is the largest power of two dividing that, up to 16 bytes.
func (o operand) alignment() int {
	bytes := o.elements() * o.dtype.Size()
	a := vectorAlignment
	for bytes%a != 0 {
		a /= 2
	}
	return a
}

// entryType is the memref type of one batch entry.
func (o operand) entryType() *ir.Type {
	shape := make([]int64, len(o.shape))
	for i, d := range o.shape {
		shape[i] = int64(d)
	}
	return ir.Memref(ir.BasicByName(o.dtype.String()), shape, nil, ir.Global)
}

// argType is the type of the kernel argument holding the whole batch.
func (o operand) argType(l Layout) *ir.Type {
	entry := o.entryType()
	if l == Group {
		return ir.Group(entry, ir.Dynamic, 0)
	}
	shape := append(slices.Clone(entry.Shape()), ir.Dynamic) // Shape is shared: copy
	return ir.Memref(entry.Elem(), shape, nil, ir.Global)
}

// selectEntry is the instruction that yields operand o's batch entry idx.
func (o operand) selectEntry(l Layout, idx string) string {
	view := "%" + o.name + "_entry"
	if l == Group {
		return fmt.Sprintf("%s = load %%%s[%s] : %v", view, o.name, idx, o.entryType())
	}
	slices := make([]string, 0, len(o.shape)+1)
	for _, d := range o.shape {
		slices = append(slices, fmt.Sprintf("0:%d", d))
	}
	slices = append(slices, idx)
	return fmt.Sprintf("%s = subview %%%s[%s] : %v", view, o.name, strings.Join(slices, ", "), o.entryType())
}

// source returns the tensor-language kernel of s configured by p.
func (s Spec) source(p tuning.Params) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	attrs, err := functionAttrs(p)
	if err != nil {
		return "", err
	}
	ops := s.operands()
	var b strings.Builder
	fmt.Fprintf(&b, "; %s\n", s.Name())
	fmt.Fprintf(&b, "; group_id selects the batch entry; tuning: %s\n", describeParams(p))
	fmt.Fprintf(&b, "func @%v(", s.Op)
	for i, o := range ops {
		if i > 0 {
			b.WriteString(",\n" + strings.Repeat(" ", len(s.Op.String())+7))
		}
		fmt.Fprintf(&b, "%%%s: %v {alignment=%d}", o.name, o.argType(s.Layout), o.alignment())
	}
	b.WriteString(")")
	if len(attrs) > 0 {
		fmt.Fprintf(&b, "\n    attributes %v", attrs)
	}
	b.WriteString(" {\n")
	lines := []string{
		"%gid = builtin.group_id : index",
		fmt.Sprintf("%%alpha = constant %v : %v", scalarConstant(s.DType.Round(s.Alpha), s.DType), s.DType),
		fmt.Sprintf("%%beta = constant %v : %v", scalarConstant(s.Acc.Round(s.Beta), s.Acc), s.Acc),
	}
	args := []string{"%alpha"}
	for _, o := range ops {
		lines = append(lines, o.selectEntry(s.Layout, "%gid"))
		args = append(args, "%"+o.name+"_entry")
	}
	args = append(args[:len(args)-1], "%beta", args[len(args)-1])
	lines = append(lines, s.instruction()+" "+strings.Join(args, ", "))
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("}\n")
	return b.String(), nil
}

func describeParams(p tuning.Params) string {
	if p == (tuning.Params{}) {
		return "left to the compiler"
	}
	return p.String()
}

// instruction is the collective instruction with its modifiers, e.g.
// "gemm.n.t.atomic".
func (s Spec) instruction() string {
	name := s.Op.String()
	for _, t := range []bool{s.TransA, s.TransB}[:s.Op.transposes()] {
		name += "." + transLetter(t)
	}
	if s.Atomic {
		name += ".atomic"
	}
	return name
}

// scalarConstant spells z as a constant of type t.
func scalarConstant(z complex128, t DType) ir.Constant {
	if t.IsComplex() {
		return ir.Constant{Kind: ir.ConstComplex, Float: real(z), Imag: imag(z)}
	}
	return ir.Constant{Kind: ir.ConstFloat, Float: real(z)}
}

// functionAttrs turns p into the function's attribute dictionary: the
// language's own subgroup_size and work_group_size, and every other chosen
// parameter inside the ParamsAttr dictionary. Zero (unchosen) parameters are
// left out, so the compiler falls back to its table or heuristic for them.
func functionAttrs(p tuning.Params) (ir.Attrs, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var attrs, rest ir.Attrs
	if p.SubgroupSize != 0 {
		attrs.Set(ir.AttrSubgroupSize, ir.IntAttr(int64(p.SubgroupSize)))
	}
	if p.WorkGroupSize != [2]int{} {
		attrs.Set(ir.AttrWorkGroupSize, intArray(p.WorkGroupSize[:]))
	}
	if p.Tile != [2]int{} {
		rest.Set("tile", intArray(p.Tile[:]))
	}
	if p.Coopmatrix != [3]int{} {
		rest.Set("coopmatrix", intArray(p.Coopmatrix[:]))
	}
	if p.Unroll != 0 {
		rest.Set("unroll", ir.IntAttr(int64(p.Unroll)))
	}
	if p.BatchPerGroup != 0 {
		rest.Set("batch_per_group", ir.IntAttr(int64(p.BatchPerGroup)))
	}
	if p.StageLocal {
		rest.Set("stage_local", ir.BoolAttr(true))
	}
	if p.VectorWidth != 0 {
		rest.Set("vector_width", ir.IntAttr(int64(p.VectorWidth)))
	}
	if p.Stages != 0 {
		rest.Set("stages", ir.IntAttr(int64(p.Stages)))
	}
	if p.LocalPad != 0 {
		rest.Set("local_pad", ir.IntAttr(int64(p.LocalPad)))
	}
	if p.LocalSwizzle {
		rest.Set("local_swizzle", ir.BoolAttr(true))
	}
	if p.LocalEpilogue {
		rest.Set("local_epilogue", ir.BoolAttr(true))
	}
	if p.Split != 0 {
		rest.Set("split", ir.IntAttr(int64(p.Split)))
	}
	if len(rest) > 0 {
		attrs.Set(ParamsAttr, ir.Attr{Kind: ir.AttrDict, Dict: rest})
	}
	return attrs, nil
}

func intArray(vs []int) ir.Attr {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(v)
	}
	return ir.IntArrayAttr(out...)
}
