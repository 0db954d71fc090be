package ir

import "strconv"

// Pos is a source position: 1-based line and column (in bytes). The zero
// Pos means "no position" (instructions built by passes).
type Pos struct {
	Line, Col int32
}

// IsValid reports whether p is a real source position.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	return strconv.Itoa(int(p.Line)) + ":" + strconv.Itoa(int(p.Col))
}

// Value is an SSA value: a function parameter, a region argument (loop
// variable, loop-carried value) or an instruction result. Values are
// compared by pointer identity.
type Value struct {
	Name string // source name without "%" ("x", "0"); "" if none (the printer invents one)
	Type *Type
	Pos  Pos // where the value is defined

	// Exactly one of Def and Region is set, except for function parameters
	// where both are nil.
	Def    *Inst   // the instruction whose result this is
	Region *Region // the region whose argument this is
	Index  int32   // position in Def.Results, Region.Args or Func.Params

	// ID numbers the value within its function (Func.Number), so that
	// ValueMaps index slices by it. A value built after its function was
	// numbered keeps a stale ID, which costs a ValueMap speed only.
	// (Index and ID are 32 bits: a value is part of nearly every
	// instruction a lowering builds, and 56 bytes instead of 64 make an
	// index addition with its result 224 bytes instead of 240.)
	ID int32
}

// RegionKind says which instructions a region admits (the region class of
// the reference).
type RegionKind uint8

// Region kinds.
const (
	// RegionCollective is a function body.
	RegionCollective RegionKind = iota
	// RegionSPMD is the body of foreach and parallel.
	RegionSPMD
	// RegionInherit is the body of for and if (a "mixed region"): it has the
	// kind of the region that contains the instruction.
	RegionInherit
)

// Region is an ordered list of instructions with optional arguments. Values
// defined in a region are visible in it (after their definition) and in
// regions nested in it, never outside.
type Region struct {
	Kind   RegionKind
	Args   []*Value // for: loop variable then loop-carried values; foreach: loop variables
	Insts  []*Inst
	Parent *Inst // the instruction owning the region; nil for a function body

	EndComments []string // comment lines before the closing '}'
}

// Inst is an instruction. Operands, results and regions are generic; the
// remaining fields are the attributes of particular opcodes and are zero
// elsewhere (see the package documentation for which opcode uses which).
type Inst struct {
	Operands []*Value
	Results  []*Value
	Regions  []*Region
	Parent   *Region // the region containing the instruction
	Pos      Pos     // position of the instruction's first token (the first result name if any)

	Op Op

	// Attributes. (The byte-sized ones together, after Pos: an
	// instruction is allocated for every operation a lowering writes, and
	// padding made it a size class larger.)
	TransA, TransB Transpose       // gemm (A, B); gemv, axpby, sum, cooperative_matrix_load (A)
	Atomic         AtomicMode      // BLAS instructions (Atomic); store, cooperative_matrix_store
	Checked        Checked         // cooperative_matrix_load / _store
	Fence          Fence           // barrier
	Arith          ArithOp         // OpArith
	Unary          UnaryOp         // OpArithUnary
	Cmp            CmpOp           // OpCmp
	Math           MathOp          // OpMath
	Builtin        BuiltinKind     // OpBuiltin
	Scan           ScanKind        // OpSubgroupAdd/Max/Min
	HasStep        bool            // for: Operands[2] is the step
	Scope          MemoryScope     // the released tinytc's atomic instructions
	Semantics      MemorySemantics // the released tinytc's atomic instructions

	// What few instructions have: the attributes of a few opcodes and the
	// parser's record of the source, nil in an instruction with none.
	*Extra
}

// Extra is what few instructions have (Inst.Extra): the attributes of a
// few opcodes, each behind a pointer that NewInst and SetOp make for the
// opcodes that have them (Op.HasConst, Op.HasModes, Op.HasLists) and that
// is nil in every other instruction, so that reading their fields there
// panics; and what the parser read (Inst.Src). The lowerings build
// thousands of instructions, mostly index arithmetic with none of them:
// the lists made each half larger (272 bytes instead of 184), the constant
// and the modes inline made an index addition with its result 288 bytes
// instead of 224, and the four pointers and the mnemonic's position
// (Source.OpPos) in the instruction itself 224 instead of 192.
type Extra struct {
	*ConstAttr // Const
	*ModeAttrs // Mode, ModeTo, Count
	*Lists

	// src is what the parser read besides the instruction itself; nil in
	// built instructions.
	src *Source
}

// extra returns in.Extra, made if in has none.
func (in *Inst) extra() *Extra {
	if in.Extra == nil {
		in.Extra = &Extra{}
	}
	return in.Extra
}

// ConstAttr is the attribute of a constant instruction (Inst.ConstAttr).
type ConstAttr struct {
	Const Constant // OpConstant
}

// ModeAttrs are the integer attributes of the instructions that have a
// mode or a count (Inst.ModeAttrs).
type ModeAttrs struct {
	Mode   int64 // cumsum, size, expand, cooperative_matrix_extract, _insert, _reduce: the mode; fuse: first fused mode
	ModeTo int64 // fuse: last fused mode (inclusive)
	Count  int64 // async_copy: elements per copy; async_wait: copy groups left in flight
}

// HasConst reports whether instructions of op have a ConstAttr: constant.
func (op Op) HasConst() bool { return op == OpConstant }

// HasModes reports whether instructions of op have ModeAttrs: cumsum,
// size, expand, fuse, cooperative_matrix_extract, _insert and _reduce,
// async_copy and async_wait.
func (op Op) HasModes() bool {
	switch op {
	case OpCumsum, OpSize, OpExpand, OpFuse, OpCoopMatrixExtract, OpCoopMatrixInsert, OpCoopMatrixReduce,
		OpAsyncCopy, OpAsyncWait:
		return true
	}
	return false
}

// Lists are the attributes of an instruction that are lists (Inst.Lists).
type Lists struct {
	Static         []int64 // expand: the expand shape, entries that are Dynamic take the next operand; foreach_tile: the tile shape; cooperative_matrix_prefetch: cache level, rows, columns
	Offsets, Sizes []int64 // subview: static offsets and sizes; Dynamic entries take the next operand
	Attrs          Attrs   // alloca, for: the attribute dictionary
}

// HasLists reports whether instructions of op have Lists: subview,
// expand, foreach_tile, cooperative_matrix_prefetch, alloca and for.
func (op Op) HasLists() bool {
	switch op {
	case OpSubview, OpExpand, OpForeachTile, OpCoopMatrixPrefetch, OpAlloca, OpFor:
		return true
	}
	return false
}

// SetOp makes in an instruction of op, with a zero ConstAttr, ModeAttrs
// and empty Lists where op has them and in has none yet.
func (in *Inst) SetOp(op Op) {
	in.Op = op
	if op < numOps && hasExtra[op] {
		in.makeAttrs(op)
	}
}

// hasExtra tells the opcodes whose instructions have attributes in their
// Extra: SetOp, which most instructions built pass through, is a table
// lookup for the others (and small enough to be inlined).
var hasExtra = func() (t [numOps]bool) {
	for op := range numOps {
		t[op] = op.HasConst() || op.HasModes() || op.HasLists()
	}
	return t
}()

// makeAttrs makes the attribute tables of op that in lacks: with its Extra
// in one allocation where in has none (a folded constant, a subview, a
// loop).
func (in *Inst) makeAttrs(op Op) {
	c, m, l := op.HasConst(), op.HasModes(), op.HasLists()
	if in.Extra == nil {
		switch {
		case c:
			in.Extra = extraWith(func(e *Extra, a *ConstAttr) { e.ConstAttr = a })
		case m && !l:
			in.Extra = extraWith(func(e *Extra, a *ModeAttrs) { e.ModeAttrs = a })
		case l && !m:
			in.Extra = extraWith(func(e *Extra, a *Lists) { e.Lists = a })
		default:
			in.Extra = &Extra{}
		}
	}
	e := in.Extra
	if c && e.ConstAttr == nil {
		e.ConstAttr = &ConstAttr{}
	}
	if m && e.ModeAttrs == nil {
		e.ModeAttrs = &ModeAttrs{}
	}
	if l && e.Lists == nil {
		e.Lists = &Lists{}
	}
}

// extraWith is a new Extra and one attribute table of type T, made in one
// allocation, the table set in the Extra by set.
func extraWith[T any](set func(*Extra, *T)) *Extra {
	x := &struct {
		extra Extra
		attr  T
	}{}
	set(&x.extra, &x.attr)
	return &x.extra
}

// Source is what the parser records of an instruction for the printer and
// for diagnostics.
type Source struct {
	OpPos Pos // position of the mnemonic

	// Comments kept for the printer: whole comment lines before the
	// instruction and the comment at the end of its last line, each with
	// its ';' ("" if none). Comments inside an instruction move before it.
	Comments    []string
	LineComment string

	// Source positions for diagnostics.
	OperandPos []Pos // position of each operand's identifier
	TypePos    Pos   // position of the result type annotation
	ModePos    Pos   // position of the mode constant (cumsum, size, expand, fuse)
}

// Source returns what the parser recorded of in: the zero Source for a
// built instruction.
func (in *Inst) Source() Source {
	if src := in.Src(); src != nil {
		return *src
	}
	return Source{}
}

// Src returns what the parser recorded of in, to read or amend; nil for a
// built instruction.
func (in *Inst) Src() *Source {
	if in.Extra == nil {
		return nil
	}
	return in.src
}

// SetSource makes src what the parser recorded of in.
func (in *Inst) SetSource(src *Source) { in.extra().src = src }

// OpPos returns the position of in's mnemonic: where the parser read it,
// else in's position (a built instruction's are the same).
func (in *Inst) OpPos() Pos {
	if src := in.Src(); src != nil && src.OpPos.IsValid() {
		return src.OpPos
	}
	return in.Pos
}

// OperandPos returns the position of in's operand i as the parser read
// it, else in's OpPos.
func (in *Inst) OperandPos(i int) Pos {
	if src := in.Src(); src != nil && i < len(src.OperandPos) && src.OperandPos[i].IsValid() {
		return src.OperandPos[i]
	}
	return in.OpPos()
}

// TypePos returns the position of in's result type annotation as the
// parser read it, else in's OpPos.
func (in *Inst) TypePos() Pos {
	if src := in.Src(); src != nil && src.TypePos.IsValid() {
		return src.TypePos
	}
	return in.OpPos()
}

// ModePos returns the position of in's mode constant as the parser read
// it, else in's OpPos.
func (in *Inst) ModePos() Pos {
	if src := in.Src(); src != nil && src.ModePos.IsValid() {
		return src.ModePos
	}
	return in.OpPos()
}

// Result returns the single result of in (nil if it has none).
func (in *Inst) Result() *Value {
	if len(in.Results) == 0 {
		return nil
	}
	return in.Results[0]
}

// Class returns the region class of in.
func (in *Inst) Class() Class {
	if in.Op == OpBuiltin {
		return in.Builtin.Class()
	}
	return in.Op.Class()
}

// Mnemonic returns the instruction name with its modifiers as written in
// the source, e.g. "gemm.n.t.atomic", "arith.add", "subgroup_add.reduce",
// "cooperative_matrix_store.rows_checked.atomic_add".
func (in *Inst) Mnemonic() string {
	s := in.Op.String()
	switch in.Op {
	case OpArith:
		return s + "." + in.Arith.String()
	case OpArithUnary:
		return s + "." + in.Unary.String()
	case OpCmp:
		return s + "." + in.Cmp.String()
	case OpMath:
		return s + "." + in.Math.String()
	case OpBuiltin:
		return s + "." + in.Builtin.String()
	case OpSubgroupAdd, OpSubgroupMax, OpSubgroupMin:
		return s + "." + in.Scan.String()
	case OpGemm:
		s += "." + in.TransA.String() + "." + in.TransB.String()
	case OpGemv, OpAxpby, OpSum:
		s += "." + in.TransA.String()
	case OpCoopMatrixLoad:
		s += "." + in.TransA.String()
		if in.Checked != Unchecked {
			s += "." + in.Checked.String()
		}
	case OpCoopMatrixStore:
		if in.TransA == Trans {
			s += ".t"
		}
		if in.Checked != Unchecked {
			s += "." + in.Checked.String()
		}
	case OpAtomicUpdate, OpCoopMatrixAtomicUpdate:
		s += "_" + in.Arith.String()
	case OpCoopMatrixReduce:
		return s + "_" + in.Arith.String() + "." + [2]string{"row", "column"}[in.Mode&1]
	case OpAsyncCopy, OpAsyncWait:
		s += "." + strconv.FormatInt(in.Count, 10)
	case OpBarrier:
		if in.Fence&FenceGlobal != 0 {
			s += ".global"
		}
		if in.Fence&FenceLocal != 0 {
			s += ".local"
		}
	}
	switch in.Op {
	case OpCoopMatrixAtomicLoad, OpCoopMatrixAtomicStore, OpCoopMatrixAtomicUpdate:
		s += "." + in.TransA.String()
		if in.Checked != Unchecked {
			s += "." + in.Checked.String()
		}
	}
	if in.Atomic != NotAtomic {
		s += "." + in.Atomic.String()
	}
	if in.IsReleasedAtomic() {
		if in.Scope != ScopeWorkGroup {
			s += "." + in.Scope.String()
		}
		if in.Semantics != Relaxed {
			s += "." + in.Semantics.String()
		}
	}
	return s
}

// IsReleasedAtomic reports whether in is one of the released tinytc's
// atomic instructions, which carry a memory scope and semantics.
func (in *Inst) IsReleasedAtomic() bool {
	switch in.Op {
	case OpAtomicLoad, OpAtomicStore, OpAtomicUpdate,
		OpCoopMatrixAtomicLoad, OpCoopMatrixAtomicStore, OpCoopMatrixAtomicUpdate:
		return true
	}
	return false
}

// Body returns the first region of in (the body of for, foreach, parallel,
// the then-region of if) or nil.
func (in *Inst) Body() *Region {
	if len(in.Regions) == 0 {
		return nil
	}
	return in.Regions[0]
}

// LoopBounds returns the operands of a for instruction: from, to, step (nil
// when absent) and the initial values of the loop-carried values.
func (in *Inst) LoopBounds() (from, to, step *Value, init []*Value) {
	from, to = in.Operands[0], in.Operands[1]
	rest := in.Operands[2:]
	if in.HasStep {
		step, rest = rest[0], rest[1:]
	}
	return from, to, step, rest
}

// ForeachBounds returns the lower and upper bounds of a foreach or
// foreach_tile, one per loop variable.
func (in *Inst) ForeachBounds() (from, to []*Value) {
	n := len(in.Operands) / 2
	return in.Operands[:n], in.Operands[n:]
}

// BLASOperands returns alpha, the inputs, beta and the output of a BLAS
// instruction (see Op.IsBLAS); cumsum's mode is in Inst.Mode.
func (in *Inst) BLASOperands() (alpha *Value, inputs []*Value, beta, out *Value) {
	n := len(in.Operands)
	return in.Operands[0], in.Operands[1 : n-2], in.Operands[n-2], in.Operands[n-1]
}

// Func is a kernel: a function callable from the host.
type Func struct {
	Name       string // without "@"
	Params     []*Value
	ParamAttrs []Attrs // one dictionary per parameter (nil when none)
	Attrs      Attrs   // the function's attribute dictionary
	Body       *Region // a RegionCollective region
	Pos        Pos     // of the "func" keyword
	NamePos    Pos
	Comments   []string // comment lines before the function, each with its ';'

	// NumValues is the count of values Number gave IDs to: the size of a
	// ValueMap for f's values (a hint: f may have grown since).
	NumValues int
}

// WorkGroupSize returns the work_group_size attribute.
func (f *Func) WorkGroupSize() (wg [2]int64, ok bool) {
	v, ok := f.Attrs.Ints(AttrWorkGroupSize)
	if !ok || len(v) != 2 {
		return wg, false
	}
	return [2]int64{v[0], v[1]}, true
}

// SubgroupSize returns the subgroup_size attribute.
func (f *Func) SubgroupSize() (int64, bool) { return f.Attrs.Int(AttrSubgroupSize) }

// Program is a translation unit: a list of functions.
type Program struct {
	Funcs    []*Func
	Comments []string // comment lines after the last function
}

// Func returns the function called name or nil.
func (p *Program) Func(name string) *Func {
	for _, f := range p.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Extent is one static-or-dynamic entry of a subview slice or an expand
// shape: Value is the operand when the entry is dynamic, else nil and Static
// holds the constant.
type Extent struct {
	Static int64
	Value  *Value
}

// dynamicExtents resolves static entries against the operands following the
// first one into out, consuming one operand per Dynamic entry; next is the
// index of the first operand to consume and is advanced.
func (in *Inst) dynamicExtents(out []Extent, static []int64, next *int) {
	for i, s := range static {
		if s == Dynamic {
			out[i].Value = in.Operands[*next]
			*next++
		} else {
			out[i].Static = s
		}
	}
}

// SubviewSlices returns the offset and size of every mode of a subview
// (dynamic offsets and sizes are interleaved in the operands, offset before
// size, mode by mode). A static size 0 drops the mode from the result.
func (in *Inst) SubviewSlices() (offsets, sizes []Extent) {
	n := len(in.Offsets)
	both := make([]Extent, n+len(in.Sizes)) // one allocation for the two
	offsets, sizes = both[:n:n], both[n:]
	next := 1
	for i := range in.Offsets {
		in.dynamicExtents(offsets[i:i+1], in.Offsets[i:i+1], &next)
		in.dynamicExtents(sizes[i:i+1], in.Sizes[i:i+1], &next)
	}
	return offsets, sizes
}

// ExpandShape returns the expand shape of an expand instruction.
func (in *Inst) ExpandShape() []Extent {
	out := make([]Extent, len(in.Static))
	next := 1
	in.dynamicExtents(out, in.Static, &next)
	return out
}
