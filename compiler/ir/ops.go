package ir

// Op is an instruction's opcode. The package documentation lists, for each
// opcode, its operands, results, regions and attribute fields.
type Op uint8

// The opcodes, grouped as the reference groups them.
const (
	OpInvalid Op = iota

	// Collective instructions.
	OpAlloca
	OpAxpby
	OpCumsum
	OpForeach
	OpForeachTile // foreach_tile: the iteration space in tiles, one subgroup per tile
	OpGemm
	OpGemv
	OpGer
	OpHadamardProduct
	OpParallel
	OpSum

	// Mixed instructions.
	OpArith      // binary arithmetic; the operation is Inst.Arith
	OpArithUnary // unary arithmetic; the operation is Inst.Unary
	OpBarrier
	OpBuiltin // the builtin is Inst.Builtin; subgroup_id and subgroup_local_id are SPMD
	OpCast
	OpCmp // comparison; the condition is Inst.Cmp
	OpConstant
	OpExpand
	OpFor
	OpFuse
	OpIf
	OpLifetimeStop
	OpLoad
	OpMath // unary math; the function is Inst.Math
	OpSize
	OpStore
	OpSubview
	OpYield
	OpVectorLoad   // tltune extension: N consecutive elements in one access
	OpVectorStore  // tltune extension: N consecutive elements in one access
	OpAtomicLoad   // released tinytc: atomic_load
	OpAtomicStore  // released tinytc: atomic_store
	OpAtomicUpdate // released tinytc: atomic_add, atomic_max, atomic_min (the operation is Inst.Arith)
	OpAssociated   // released tinytc: whether a memref or group is not null

	// SPMD instructions.
	OpCoopMatrixLoad
	OpCoopMatrixMulAdd
	OpCoopMatrixScale
	OpCoopMatrixStore
	OpCoopMatrixApply        // released tinytc: a region applied to every component
	OpCoopMatrixAtomicLoad   // released tinytc
	OpCoopMatrixAtomicStore  // released tinytc
	OpCoopMatrixAtomicUpdate // released tinytc: add, max, min (Inst.Arith); returns the old components
	OpCoopMatrixConstruct    // released tinytc: every component set to a scalar
	OpCoopMatrixExtract      // released tinytc: component Mode of the work-item's share
	OpCoopMatrixInsert       // released tinytc: the share with component Mode replaced
	OpCoopMatrixPrefetch     // released tinytc: a cache hint
	OpCoopMatrixReduce       // released tinytc: add, max, min (Inst.Arith) over rows (Mode 0) or columns (Mode 1)
	OpSubgroupBroadcast
	OpSubgroupAdd        // the operation is Inst.Scan
	OpSubgroupMax        // the operation is Inst.Scan
	OpSubgroupMin        // the operation is Inst.Scan
	OpSubgroupShuffleXor // tltune extension: the value of lane (own lane XOR mask)
	OpAsyncCopy          // tltune extension: a work-item's asynchronous global-to-local copy
	OpAsyncCommit        // tltune extension: closes the work-item's group of asynchronous copies
	OpAsyncWait          // tltune extension: waits until at most Count copy groups are in flight

	numOps
)

// Class says in which kind of region an instruction may appear.
type Class uint8

// Instruction classes.
const (
	Collective Class = iota // only in collective regions
	SPMD                    // only in SPMD regions
	Mixed                   // anywhere
)

func (c Class) String() string {
	switch c {
	case Collective:
		return "collective"
	case SPMD:
		return "SPMD"
	}
	return "mixed"
}

var opNames = [numOps]string{
	OpInvalid: "invalid",
	OpAlloca:  "alloca", OpAxpby: "axpby", OpCumsum: "cumsum", OpForeach: "foreach", OpForeachTile: "foreach_tile",
	OpGemm: "gemm", OpGemv: "gemv", OpGer: "ger", OpHadamardProduct: "hadamard_product",
	OpParallel: "parallel", OpSum: "sum",
	OpArith: "arith", OpArithUnary: "arith", OpBarrier: "barrier", OpBuiltin: "builtin",
	OpCast: "cast", OpCmp: "cmp", OpConstant: "constant", OpExpand: "expand", OpFor: "for",
	OpFuse: "fuse", OpIf: "if", OpLifetimeStop: "lifetime_stop", OpLoad: "load",
	OpMath: "math", OpSize: "size", OpStore: "store", OpSubview: "subview", OpYield: "yield",
	OpVectorLoad: "vector_load", OpVectorStore: "vector_store",
	OpAtomicLoad: "atomic_load", OpAtomicStore: "atomic_store", OpAtomicUpdate: "atomic", OpAssociated: "associated",
	OpCoopMatrixApply: "cooperative_matrix_apply", OpCoopMatrixAtomicLoad: "cooperative_matrix_atomic_load",
	OpCoopMatrixAtomicStore: "cooperative_matrix_atomic_store", OpCoopMatrixAtomicUpdate: "cooperative_matrix_atomic",
	OpCoopMatrixConstruct: "cooperative_matrix_construct", OpCoopMatrixExtract: "cooperative_matrix_extract",
	OpCoopMatrixInsert: "cooperative_matrix_insert", OpCoopMatrixPrefetch: "cooperative_matrix_prefetch",
	OpCoopMatrixReduce: "cooperative_matrix_reduce",
	OpCoopMatrixLoad:   "cooperative_matrix_load", OpCoopMatrixMulAdd: "cooperative_matrix_mul_add",
	OpCoopMatrixScale: "cooperative_matrix_scale", OpCoopMatrixStore: "cooperative_matrix_store",
	OpSubgroupBroadcast: "subgroup_broadcast", OpSubgroupAdd: "subgroup_add",
	OpSubgroupMax: "subgroup_max", OpSubgroupMin: "subgroup_min",
	OpSubgroupShuffleXor: "subgroup_shuffle_xor",
	OpAsyncCopy:          "async_copy", OpAsyncCommit: "async_commit", OpAsyncWait: "async_wait",
}

// String returns the mnemonic of op without modifiers ("gemm", "arith",
// "subgroup_add"); Inst.Mnemonic gives the full spelling.
func (op Op) String() string {
	if op < numOps {
		return opNames[op]
	}
	return "invalid"
}

// Class returns the region class of op. OpBuiltin is Mixed here; use
// Inst.Class, which looks at the builtin kind.
func (op Op) Class() Class {
	switch {
	case op >= OpAlloca && op <= OpSum: // foreach_tile included
		return Collective
	case op >= OpCoopMatrixLoad && op <= OpAsyncWait:
		return SPMD // the cooperative-matrix extensions of the released tinytc included
	}
	return Mixed
}

// IsBLAS reports whether op is one of the collective linear-algebra
// instructions whose operands are alpha, inputs..., beta, output
// (axpby, cumsum, gemm, gemv, ger, hadamard_product, sum).
func (op Op) IsBLAS() bool {
	switch op {
	case OpAxpby, OpCumsum, OpGemm, OpGemv, OpGer, OpHadamardProduct, OpSum:
		return true
	}
	return false
}

// Transpose is a transposition modifier (.n or .t).
type Transpose uint8

// Transpositions.
const (
	NoTrans Transpose = iota // .n
	Trans                    // .t
)

func (t Transpose) String() string {
	if t == Trans {
		return "t"
	}
	return "n"
}

// Of is the shape of op(X) for X of the given shape: a matrix's two
// modes swapped when t is Trans, any other shape as it is. The verifier
// checks static shapes with it, the interpreter the sizes of a run.
func (t Transpose) Of(shape []int64) []int64 {
	if t == Trans && len(shape) == 2 {
		return []int64{shape[1], shape[0]}
	}
	return shape
}

// AtomicMode is the atomic modifier of BLAS instructions and stores.
type AtomicMode uint8

// Atomic modes. AtomicAdd, AtomicMax and AtomicMin are only valid on store
// and cooperative_matrix_store (max and min come from the released
// tinytc's cooperative_matrix_store).
const (
	NotAtomic AtomicMode = iota
	Atomic               // .atomic
	AtomicAdd            // .atomic_add
	AtomicMax            // .atomic_max
	AtomicMin            // .atomic_min
)

func (a AtomicMode) String() string {
	switch a {
	case Atomic:
		return "atomic"
	case AtomicAdd:
		return "atomic_add"
	case AtomicMax:
		return "atomic_max"
	case AtomicMin:
		return "atomic_min"
	}
	return ""
}

// Op returns the arithmetic an atomic update performs: Add, Max or Min
// (Add for the other modes).
func (a AtomicMode) Op() ArithOp {
	switch a {
	case AtomicMax:
		return Max
	case AtomicMin:
		return Min
	}
	return Add
}

// MemoryScope is the scope of the released tinytc's atomic instructions.
type MemoryScope uint8

// Memory scopes; the zero value, work_group, is the default.
const (
	ScopeWorkGroup MemoryScope = iota
	ScopeSubgroup
	ScopeDevice
	ScopeCrossDevice
	numScopes
)

var scopeNames = [numScopes]string{"work_group", "subgroup", "device", "cross_device"}

func (s MemoryScope) String() string { return nameOf(scopeNames[:], s) }

// ScopeByName returns the scope spelled name.
func ScopeByName(name string) (MemoryScope, bool) { return lookup(scopeNames[:], name, MemoryScope(0)) }

// MemorySemantics is the memory order of the released tinytc's atomic
// instructions.
type MemorySemantics uint8

// Memory orders; the zero value, relaxed, is the default.
const (
	Relaxed MemorySemantics = iota
	Acquire
	Release
	AcquireRelease
	SequentiallyConsistent
	numSemantics
)

var semanticsNames = [numSemantics]string{"relaxed", "acquire", "release", "acquire_release", "sequentially_consistent"}

func (s MemorySemantics) String() string { return nameOf(semanticsNames[:], s) }

// SemanticsByName returns the memory order spelled name.
func SemanticsByName(name string) (MemorySemantics, bool) {
	return lookup(semanticsNames[:], name, MemorySemantics(0))
}

// Checked is the bounds-check flag of cooperative matrix loads and stores.
type Checked uint8

// Bounds-check flags.
const (
	Unchecked   Checked = iota
	RowsChecked         // .rows_checked
	ColsChecked         // .cols_checked
	BothChecked         // .both_checked
)

func (c Checked) String() string {
	switch c {
	case RowsChecked:
		return "rows_checked"
	case ColsChecked:
		return "cols_checked"
	case BothChecked:
		return "both_checked"
	}
	return ""
}

// Fence is the set of memory fences of a barrier.
type Fence uint8

// Fence bits.
const (
	FenceGlobal Fence = 1 << iota // .global
	FenceLocal                    // .local
)

// ArithOp is the operation of OpArith.
type ArithOp uint8

// Binary arithmetic operations.
const (
	Add ArithOp = iota
	Sub
	Mul
	Div
	Rem
	Min
	Max
	Shl
	Shr // arithmetic shift right
	And
	Or
	Xor
	numArithOps
)

var arithNames = [numArithOps]string{"add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor"}

func (a ArithOp) String() string { return nameOf(arithNames[:], a) }

// ArithOpByName returns the binary operation spelled name.
func ArithOpByName(name string) (ArithOp, bool) { return lookup(arithNames[:], name, ArithOp(0)) }

// UnaryOp is the operation of OpArithUnary.
type UnaryOp uint8

// Unary arithmetic operations.
const (
	Abs UnaryOp = iota
	Neg
	Not
	Conj
	Im
	Re
	numUnaryOps
)

var unaryNames = [numUnaryOps]string{"abs", "neg", "not", "conj", "im", "re"}

func (u UnaryOp) String() string { return nameOf(unaryNames[:], u) }

// UnaryOpByName returns the unary operation spelled name.
func UnaryOpByName(name string) (UnaryOp, bool) { return lookup(unaryNames[:], name, UnaryOp(0)) }

// CmpOp is the condition of OpCmp.
type CmpOp uint8

// Comparison conditions.
const (
	Eq CmpOp = iota
	Ne
	Gt
	Ge
	Lt
	Le
	numCmpOps
)

var cmpNames = [numCmpOps]string{"eq", "ne", "gt", "ge", "lt", "le"}

func (c CmpOp) String() string { return nameOf(cmpNames[:], c) }

// CmpOpByName returns the condition spelled name.
func CmpOpByName(name string) (CmpOp, bool) { return lookup(cmpNames[:], name, CmpOp(0)) }

// MathOp is the function of OpMath.
type MathOp uint8

// Math functions. The reference has exp and native_exp; the others are the
// released tinytc's (docs/language.md, Extensions). The native_ variants
// may trade accuracy for speed.
const (
	Exp MathOp = iota
	NativeExp
	Cos
	Sin
	Exp2
	Log
	Log2
	NativeCos
	NativeSin
	NativeExp2
	NativeLog
	NativeLog2
	numMathOps
)

var mathNames = [numMathOps]string{"exp", "native_exp", "cos", "sin", "exp2", "log", "log2",
	"native_cos", "native_sin", "native_exp2", "native_log", "native_log2"}

func (m MathOp) String() string { return nameOf(mathNames[:], m) }

// MathOpByName returns the math function spelled name.
func MathOpByName(name string) (MathOp, bool) { return lookup(mathNames[:], name, MathOp(0)) }

// AcceptsComplex reports whether the function is defined on complex
// numbers too (the exponentials), not only on floating types.
func (m MathOp) AcceptsComplex() bool {
	switch m {
	case Exp, NativeExp, Exp2, NativeExp2:
		return true
	}
	return false
}

// Native returns the accurate function of a native_ one and reports
// whether m was native.
func (m MathOp) Native() (accurate MathOp, native bool) {
	switch m {
	case NativeExp:
		return Exp, true
	case NativeCos:
		return Cos, true
	case NativeSin:
		return Sin, true
	case NativeExp2:
		return Exp2, true
	case NativeLog:
		return Log, true
	case NativeLog2:
		return Log2, true
	}
	return m, false
}

// BuiltinKind is the value returned by OpBuiltin.
type BuiltinKind uint8

// Builtins: the reference's six, then the modes of the released tinytc's
// three-dimensional group id and two-dimensional subgroup grid
// (docs/language.md, Extensions). GroupID and GroupSize are mode x of the
// group id and the number of groups; NumSubgroups and SubgroupID count the
// subgroups of the work-group linearly (x fastest).
const (
	GroupID BuiltinKind = iota
	GroupSize
	NumSubgroups
	SubgroupSize
	SubgroupID
	SubgroupLocalID
	GroupIDY      // group id, mode y
	GroupIDZ      // group id, mode z
	GroupSizeY    // number of groups, mode y
	GroupSizeZ    // number of groups, mode z
	NumSubgroupsX // subgroups per work-group row: work_group_size[0] / subgroup_size
	NumSubgroupsY // subgroup rows: work_group_size[1]
	SubgroupIDX   // subgroup id, mode x
	SubgroupIDY   // subgroup id, mode y
	NumSubgroupsZ // 1: the subgroup grid is two-dimensional
	SubgroupIDZ   // 0
	numBuiltins
)

var builtinNames = [numBuiltins]string{"group_id", "group_size", "num_subgroups", "subgroup_size", "subgroup_id", "subgroup_local_id",
	"group_id.y", "group_id.z", "group_size.y", "group_size.z", "num_subgroups.x", "num_subgroups.y", "subgroup_id.x", "subgroup_id.y",
	"num_subgroups.z", "subgroup_id.z"}

func (b BuiltinKind) String() string { return nameOf(builtinNames[:], b) }

// BuiltinByName returns the builtin spelled name ("group_id",
// "subgroup_id.x"; "group_id.x" and "group_size.x" are GroupID and
// GroupSize).
func BuiltinByName(name string) (BuiltinKind, bool) {
	switch name {
	case "group_id.x":
		return GroupID, true
	case "group_size.x":
		return GroupSize, true
	}
	return lookup(builtinNames[:], name, BuiltinKind(0))
}

// Class returns SPMD for the subgroup ids and the lane, Mixed for the rest.
func (b BuiltinKind) Class() Class {
	switch b {
	case SubgroupID, SubgroupLocalID, SubgroupIDX, SubgroupIDY, SubgroupIDZ:
		return SPMD
	}
	return Mixed
}

// ResultType returns the type the builtin returns: index for the group ids
// and sizes, i32 for the others.
func (b BuiltinKind) ResultType() *Type {
	switch b {
	case GroupID, GroupSize, GroupIDY, GroupIDZ, GroupSizeY, GroupSizeZ:
		return Index
	}
	return I32
}

// ScanKind is the operation of the subgroup collectives.
type ScanKind uint8

// Subgroup operations.
const (
	ExclusiveScan ScanKind = iota
	InclusiveScan
	Reduce
	numScanKinds
)

var scanNames = [numScanKinds]string{"exclusive_scan", "inclusive_scan", "reduce"}

func (s ScanKind) String() string { return nameOf(scanNames[:], s) }

// ScanKindByName returns the subgroup operation spelled name.
func ScanKindByName(name string) (ScanKind, bool) { return lookup(scanNames[:], name, ScanKind(0)) }

// nameOf returns names[i], or "invalid" for a value no constant has (a
// corrupted instruction must still print and verify without panicking).
func nameOf[T ~uint8](names []string, i T) string {
	if int(i) < len(names) {
		return names[i]
	}
	return "invalid"
}

func lookup[T ~uint8](names []string, name string, _ T) (T, bool) {
	for i, n := range names {
		if n == name {
			return T(i), true
		}
	}
	return 0, false
}
