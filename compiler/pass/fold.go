package pass

import (
	"sync"

	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/numeric"
)

// foldConstants replaces integer arith and integer-to-integer casts whose
// operands are constants by a constant, in place. The lowering emits index
// arithmetic on tile sizes and static shapes; folding it keeps the emitted
// code small. Results wrap to the type's width as the language's integers
// do; division or remainder by zero is left for run time.
func foldConstants(f *ir.Func) error {
	// The folded constants' attributes come from chunks: a lowered GEMM
	// folds a dozen or two, each an allocation of its own before.
	var arena ir.Arena
	foldRegion(f.Body, &arena)
	return nil
}

// foldRegion folds the instructions of r and of its nested regions in
// program order, so that a fold sees its operands folded first. It loops
// itself rather than through Region.Walk, and tests the opcode before
// anything else: the pass visits every instruction of a lowered kernel
// and folds few of them.
func foldRegion(r *ir.Region, arena *ir.Arena) {
	for _, in := range r.Insts {
		for _, sub := range in.Regions {
			foldRegion(sub, arena) // an instruction with regions does not fold
		}
		if in.Op != ir.OpArith && in.Op != ir.OpCast {
			continue
		}
		if v, ok := foldInt(in); ok {
			arena.SetOp(in, ir.OpConstant)
			in.Operands = nil
			in.Const = ir.Constant{Kind: ir.ConstInt, Int: v}
			in.Arith = 0
		}
	}
}

func intConst(v *ir.Value) (int64, bool) {
	if v.Def == nil || v.Def.Op != ir.OpConstant || v.Def.Const.Kind != ir.ConstInt {
		return 0, false
	}
	return v.Def.Const.Int, true
}

// foldInt computes in's integer result if its operands are constants.
func foldInt(in *ir.Inst) (int64, bool) {
	if len(in.Results) != 1 || !in.Result().Type.IsInteger() {
		return 0, false
	}
	t := in.Result().Type
	switch in.Op {
	case ir.OpCast:
		x, ok := intConst(in.Operands[0])
		return numeric.Wrap(x, t.Bits()), ok && in.Operands[0].Type.IsInteger()
	case ir.OpArith:
	default:
		return 0, false
	}
	x, okx := intConst(in.Operands[0])
	y, oky := intConst(in.Operands[1])
	if !okx || !oky {
		return 0, false
	}
	if (in.Arith == ir.Div || in.Arith == ir.Rem) && y == -1 && x == -1<<63 {
		return 0, false // overflows: undefined in OpenCL C, so left to the device
	}
	r, err := interp.ArithInt(in.Arith, t, x, y)
	if err != nil {
		return 0, false // division by zero: not folded, the program keeps its fault
	}
	if r == ir.Dynamic { // not a representable constant of the language
		return 0, false
	}
	return r, true
}

// deadCode deletes instructions without effects whose results are unused.
// One backward sweep finds them all: every use of a value follows its
// definition in program order (nested regions included), so when the sweep
// reaches an instruction, each of its users has been kept or deleted, and
// deleting it releases its operands' uses before their definitions are
// reached.
func deadCode(f *ir.Func) error {
	// Use counts by value ID: every value f defines gets its own ID and
	// every operand is one of them (a ValueMap's checks and key stores
	// were half of the pass).
	table := useTables.Get().(*useCounts)
	defer useTables.Put(table)
	table.count(f)
	sweepDead(f.Body, *table)
	return nil
}

// useCounts counts the uses of each value of a function, by ID.
type useCounts []int32

// useTables recycles the use counts from compile to compile: the pass runs
// twice per compile, and a lowered GEMM has hundreds of values.
var useTables = sync.Pool{New: func() any { return new(useCounts) }}

// count numbers f's values as Func.Number does and counts their uses, in
// one sweep in program order: a use follows its value's definition, so
// the value has its ID by then. (Numbering first and counting in a walk
// after were two sweeps over every instruction, and the walk's call per
// instruction cost as much as the counting.)
func (u *useCounts) count(f *ir.Func) {
	uses := (*u)[:0]
	for _, p := range f.Params {
		uses = uses.define(p)
	}
	*u = uses.countRegion(f.Body)
	f.NumValues = len(*u)
}

// define gives v the next ID, with no uses yet.
func (uses useCounts) define(v *ir.Value) useCounts {
	v.ID = int32(len(uses))
	return append(uses, 0)
}

func (uses useCounts) countRegion(r *ir.Region) useCounts {
	for _, a := range r.Args {
		uses = uses.define(a)
	}
	for _, in := range r.Insts {
		for _, v := range in.Operands {
			uses[v.ID]++
		}
		for _, res := range in.Results {
			uses = uses.define(res)
		}
		for _, sub := range in.Regions {
			uses = uses.countRegion(sub)
		}
	}
	return uses
}

// sweepDead deletes r's dead instructions, last to first, the regions of
// an instruction before the instruction itself.
func sweepDead(r *ir.Region, uses useCounts) {
	dead := 0
	for i := len(r.Insts) - 1; i >= 0; i-- {
		in := r.Insts[i]
		for _, sub := range in.Regions {
			sweepDead(sub, uses)
		}
		if !pure(in) || !uses.none(in) {
			continue
		}
		for _, v := range in.Operands {
			uses[v.ID]--
		}
		r.Insts[i] = nil
		dead++
	}
	if dead > 0 {
		r.Insts = compact(r.Insts)
	}
}

// compact drops the nil entries of insts, in place and in order (as
// slices.DeleteFunc would, without its call per entry).
func compact(insts []*ir.Inst) []*ir.Inst {
	kept := insts[:0]
	for _, in := range insts {
		if in != nil {
			kept = append(kept, in)
		}
	}
	clear(insts[len(kept):]) // no stale pointers past the end
	return kept
}

// none reports whether in has results and none of them is used.
func (uses useCounts) none(in *ir.Inst) bool {
	for _, r := range in.Results {
		if uses[r.ID] > 0 {
			return false
		}
	}
	return len(in.Results) > 0
}

// pure reports whether in only computes its results.
func pure(in *ir.Inst) bool { return pureOps[in.Op] }

// pureOps tells the opcodes of pure instructions: a table lookup, where
// the switch over them was a tenth of the pass.
var pureOps = func() (t [256]bool) {
	for _, op := range []ir.Op{ir.OpConstant, ir.OpArith, ir.OpArithUnary, ir.OpCmp, ir.OpCast, ir.OpBuiltin,
		ir.OpSize, ir.OpSubview, ir.OpExpand, ir.OpFuse, ir.OpLoad, ir.OpVectorLoad, ir.OpMath,
		ir.OpCoopMatrixLoad, ir.OpCoopMatrixMulAdd, ir.OpCoopMatrixScale, ir.OpAlloca} {
		t[op] = true
	}
	return t
}()
