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
	OpVectorLoad  // tltune extension: N consecutive elements in one access
	OpVectorStore // tltune extension: N consecutive elements in one access

	// SPMD instructions.
	OpCoopMatrixLoad
	OpCoopMatrixMulAdd
	OpCoopMatrixScale
	OpCoopMatrixStore
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
	OpAlloca:  "alloca", OpAxpby: "axpby", OpCumsum: "cumsum", OpForeach: "foreach",
	OpGemm: "gemm", OpGemv: "gemv", OpGer: "ger", OpHadamardProduct: "hadamard_product",
	OpParallel: "parallel", OpSum: "sum",
	OpArith: "arith", OpArithUnary: "arith", OpBarrier: "barrier", OpBuiltin: "builtin",
	OpCast: "cast", OpCmp: "cmp", OpConstant: "constant", OpExpand: "expand", OpFor: "for",
	OpFuse: "fuse", OpIf: "if", OpLifetimeStop: "lifetime_stop", OpLoad: "load",
	OpMath: "math", OpSize: "size", OpStore: "store", OpSubview: "subview", OpYield: "yield",
	OpVectorLoad: "vector_load", OpVectorStore: "vector_store",
	OpCoopMatrixLoad: "cooperative_matrix_load", OpCoopMatrixMulAdd: "cooperative_matrix_mul_add",
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
	case op >= OpAlloca && op <= OpSum:
		return Collective
	case op >= OpCoopMatrixLoad && op <= OpAsyncWait:
		return SPMD
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

// AtomicMode is the atomic modifier of BLAS instructions and stores.
type AtomicMode uint8

// Atomic modes. AtomicAdd is only valid on store and cooperative_matrix_store.
const (
	NotAtomic AtomicMode = iota
	Atomic               // .atomic
	AtomicAdd            // .atomic_add
)

func (a AtomicMode) String() string {
	switch a {
	case Atomic:
		return "atomic"
	case AtomicAdd:
		return "atomic_add"
	}
	return ""
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

// Math functions.
const (
	Exp MathOp = iota
	NativeExp
	numMathOps
)

var mathNames = [numMathOps]string{"exp", "native_exp"}

func (m MathOp) String() string { return nameOf(mathNames[:], m) }

// MathOpByName returns the math function spelled name.
func MathOpByName(name string) (MathOp, bool) { return lookup(mathNames[:], name, MathOp(0)) }

// BuiltinKind is the value returned by OpBuiltin.
type BuiltinKind uint8

// Builtins. The first four are mixed, the last two SPMD.
const (
	GroupID BuiltinKind = iota
	GroupSize
	NumSubgroups
	SubgroupSize
	SubgroupID
	SubgroupLocalID
	numBuiltins
)

var builtinNames = [numBuiltins]string{"group_id", "group_size", "num_subgroups", "subgroup_size", "subgroup_id", "subgroup_local_id"}

func (b BuiltinKind) String() string { return nameOf(builtinNames[:], b) }

// BuiltinByName returns the builtin spelled name.
func BuiltinByName(name string) (BuiltinKind, bool) {
	return lookup(builtinNames[:], name, BuiltinKind(0))
}

// Class returns Mixed for the work-group builtins and SPMD for subgroup_id
// and subgroup_local_id.
func (b BuiltinKind) Class() Class {
	if b >= SubgroupID {
		return SPMD
	}
	return Mixed
}

// ResultType returns the type the builtin returns: index for group_id and
// group_size, i32 for the others.
func (b BuiltinKind) ResultType() *Type {
	if b == GroupID || b == GroupSize {
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
