// Package ir owns the typed intermediate representation of the tensor
// language: types, values, instructions, regions, functions and programs.
// The parser (compiler/syntax) produces it, the verifier (compiler/check)
// checks it, the printer (compiler/printer) writes it back as source, and
// the interpreter, the lowering passes and the back ends consume and rewrite
// it.
//
// # Structure
//
// A Program is a list of Funcs. A Func has parameters (Values), one
// attribute dictionary per parameter (alignment, shape_gcd, stride_gcd), a
// function attribute dictionary (work_group_size, subgroup_size) and a body
// Region. A Region is an ordered list of Insts and may have arguments
// (loop variables, loop-carried values). An Inst has an opcode, operand
// Values, result Values, nested Regions and attribute fields. Every Value
// records where it is defined (Def and Index for results, Region and Index
// for region arguments, neither for parameters).
//
// Types are interned (*Type compares with ==): the predeclared Bool, I8,
// I16, I32, I64, Index, BF16, F16, F32, F64, C32, C64, Void, and the
// constructed Memref(elem, shape, stride, space), Group(memref, size,
// offset) and Coopmatrix(component, rows, cols, use). Dynamic ("?") entries
// of shapes, strides, group sizes and offsets are the constant Dynamic. A
// memref always carries explicit strides; the packed default layout is
// PackedStride(shape), so memref<f32x4x8> and memref<f32x4x8,strided<1,4>>
// are the same *Type. Promotable and Promote implement the promotion lattice
// of the reference (index promotes like i64).
//
// # Walking
//
//	f.Body.Walk(func(in *ir.Inst) bool {
//		switch in.Op {
//		case ir.OpGemm:
//			alpha, ins, beta, c := in.BLASOperands() // ins = [A, B]
//			...
//		case ir.OpFor:
//			from, to, step, init := in.LoopBounds()
//			iv, carried := in.Body().Args[0], in.Body().Args[1:]
//			...
//		}
//		return true // false skips in's regions
//	})
//
// Regions nest: the body of a function is RegionCollective, foreach and
// parallel bodies are RegionSPMD, for and if bodies are RegionInherit (they
// take the kind of the enclosing region). Inst.Class says whether an
// instruction is Collective, SPMD or Mixed.
//
// # Building and rewriting
//
// NewInst(op, operands, resultTypes...) makes an instruction with fresh
// results; set its attribute fields, add regions with AddRegion, and place it
// with Region.Append, Region.Insert or a Builder (which also has typed
// shortcuts: Constant, Arith, Cmp, Cast, Builtin, Load, Store, Yield,
// Barrier, For, Foreach, If, Parallel). Region.Remove deletes an
// instruction, Region.ReplaceUses rewires operands, Region.Uses lists users,
// Region.Clone, Inst.Clone and Func.Clone copy with value remapping, and Diff
// compares two programs structurally. Values without a Name get a fresh
// number when printed. Comments of the source ride along for the printer
// (Inst.Src, Region.EndComments, Func.Comments, Program.Comments); passes
// may ignore them.
//
// # Opcodes
//
// Operands are listed in order; "attrs" are the Inst fields the opcode uses.
// Every other attribute field is zero, except Const (Extra.ConstAttr),
// Mode, ModeTo and Count (Extra.ModeAttrs) and the lists (Extra.Lists),
// which only the opcodes that use them have (in Inst.Extra): NewInst and
// Inst.SetOp make them, and reading them elsewhere panics.
//
// Collective instructions (only in collective regions):
//
//	OpAlloca           () -> memref<..., local>              attrs: Attrs (alignment)
//	OpAxpby            (alpha, A, beta, B)                   attrs: TransA, Atomic
//	OpCumsum           (alpha, A, beta, B)                   attrs: Mode (0-based), Atomic
//	OpForeach          (from_1..from_N, to_1..to_N)          Regions[0]: SPMD, Args = N loop variables
//	OpForeachTile      (from_1..from_N, to_1..to_N)          attrs: Static (tile shape); Regions[0]: SPMD,
//	                                                         Args = N tile offsets, then N tile sizes
//	OpGemm             (alpha, A, B, beta, C)                attrs: TransA, TransB, Atomic
//	OpGemv             (alpha, A, b, beta, c)                attrs: TransA, Atomic
//	OpGer              (alpha, a, b, beta, C)                attrs: Atomic
//	OpHadamardProduct  (alpha, a, b, beta, c)                attrs: Atomic
//	OpParallel         ()                                    Regions[0]: SPMD
//	OpSum              (alpha, A, beta, b)                   attrs: TransA, Atomic
//
// Mixed instructions (anywhere):
//
//	OpArith            (a, b) -> same type                   attrs: Arith (add, sub, ..., xor)
//	OpArithUnary       (a) -> a's type or its component type attrs: Unary (abs, neg, not, conj, im, re)
//	OpBarrier          ()                                    attrs: Fence (FenceGlobal|FenceLocal)
//	OpBuiltin          () -> integer                         attrs: Builtin (subgroup_id, subgroup_local_id are SPMD)
//	OpCast             (a) -> the target type
//	OpCmp              (a, b) -> bool                        attrs: Cmp (eq, ne, gt, ge, lt, le)
//	OpConstant         () -> bool, scalar or coopmatrix      attrs: Const
//	OpExpand           (M, dynamic expand sizes...) -> memref attrs: Mode, Static (Dynamic = next operand); see ExpandShape
//	OpFor              (from, to, [step], init...) -> carried values
//	                                                         attrs: HasStep, Attrs (unroll);
//	                                                         Regions[0]: inherit, Args = loop variable, carried values
//	OpFuse             (M) -> memref                         attrs: Mode (from), ModeTo (to, inclusive)
//	OpIf               (cond) -> values                      Regions[0]: then, Regions[1]: else (possibly empty)
//	OpLifetimeStop     (v)
//	OpLoad             (M, indices...) -> element            or (G, index) -> memref of the group
//	OpMath             (a) -> a's type                       attrs: Math (exp, native_exp, cos, ...)
//	OpSize             (M or G) -> index                     attrs: Mode
//	OpStore            (x, M, indices...)                    attrs: Atomic (Atomic or AtomicAdd)
//	OpSubview          (M, dynamic offsets and sizes...) -> memref
//	                                                         attrs: Offsets, Sizes (Dynamic = next operand,
//	                                                         offset before size; size 0 drops the mode); see SubviewSlices
//	OpYield            (values...)
//	OpVectorLoad       (M, indices...) -> N elements         see VectorWidth
//	OpVectorStore      (x_1..x_N, M, indices...)             see VectorStoreOperands
//	OpAtomicLoad       (M, indices...) -> element            attrs: Scope, Semantics
//	OpAtomicStore      (x, M, indices...)                    attrs: Scope, Semantics
//	OpAtomicUpdate     (x, M, indices...) -> old element     attrs: Arith (Add, Max, Min), Scope, Semantics
//	OpAssociated       (M or G) -> bool
//
// SPMD instructions (only in SPMD regions):
//
//	OpCoopMatrixLoad   (M, x, y) -> coopmatrix               attrs: TransA, Checked
//	OpCoopMatrixMulAdd (A, B, C) -> coopmatrix (matrix_acc)
//	OpCoopMatrixScale  (s, A) -> A's type
//	OpCoopMatrixStore  (A, M, x, y)                          attrs: TransA, Checked, Atomic (Atomic, AtomicAdd, AtomicMax, AtomicMin)
//	OpCoopMatrixApply  (A) -> A's type                       Regions[0]: Args = row i32, column i32, component; yields the new component
//	OpCoopMatrixAtomicLoad   (M, x, y) -> coopmatrix         attrs: TransA, Checked, Scope, Semantics
//	OpCoopMatrixAtomicStore  (A, M, x, y)                    attrs: TransA, Checked, Scope, Semantics
//	OpCoopMatrixAtomicUpdate (A, M, x, y) -> old components  attrs: Arith (Add, Max, Min), TransA, Checked, Scope, Semantics
//	OpCoopMatrixConstruct (s) -> coopmatrix
//	OpCoopMatrixExtract (A) -> component                     attrs: Mode (index into the work-item's share)
//	OpCoopMatrixInsert (s, A) -> A's type                    attrs: Mode (index into the work-item's share)
//	OpCoopMatrixPrefetch (M, x, y)                           attrs: Static = [cache level, rows, columns]
//	OpCoopMatrixReduce (A) -> coopmatrix                     attrs: Arith (Add, Max, Min), Mode (0: rows, 1: columns)
//	OpSubgroupBroadcast (x, lane i32) -> x's type
//	OpSubgroupAdd, OpSubgroupMax, OpSubgroupMin (x) -> x's type  attrs: Scan
//	OpSubgroupShuffleXor (x, mask i32) -> x's type           (tltune extension, below)
//	OpAsyncCopy        (M, indices..., L, indices..., valid) attrs: Count; see AsyncCopyOperands
//	OpAsyncCommit      ()
//	OpAsyncWait        ()                                    attrs: Count
//
// Modes (cumsum, size, expand, fuse) are numbered from 0.
//
// # Vector memory access (a tltune extension)
//
// vector_load and vector_store move N consecutive elements of mode 0 in one
// memory access, so a back end can issue one 128-bit load or store where a
// scalar loop would issue N:
//
//	%x0, %x1, %x2, %x3 = vector_load %M[%i, %j] : f32
//	vector_store %x0, %x1, %x2, %x3, %M[%i, %j]
//
// They access M[i+k, j, ...] for k = 0..N-1. The width N is the number of
// results (load) or of stored values (store); it is 2, 4, 8 or 16 with
// N·size(element) at most MaxVectorBytes, and mode 0 of M has the static
// stride 1 (ValidVectorWidth, VectorWidthOK). What the verifier cannot see is
// undefined behaviour, reported by the interpreter: an element out of bounds,
// or a first element whose address is not a multiple of N·size(element)
// bytes. Buffers passed to a kernel start at an address aligned for every
// vector (device allocations are), local memory (alloca) at its alignment
// attribute; a lowering proves alignment from the alignment attribute of a
// parameter and the static offsets and strides of the views derived from it.
// There are no vector values: the results are N scalars, which keeps every
// other instruction as it is.
//
// # Lane exchange (a tltune extension)
//
// subgroup_shuffle_xor gives each lane the value x of lane (its own lane
// XOR mask), the step of a butterfly: a reduction over the lanes that
// differ only in some bits of the lane index (a cluster of neighbouring
// lanes, or lanes a fixed distance apart) is a sequence of shuffles with
// the masks of those bits, each followed by an add.
//
//	%y = subgroup_shuffle_xor %x, %mask : f32
//
// The mask is an i32 that must be dynamically uniform, and every lane's
// partner must exist (lane XOR mask < subgroup size); the interpreter
// reports either violation, as it does for subgroup_broadcast.
//
// # Asynchronous copies (a tltune extension)
//
// async_copy, async_commit and async_wait let a lowering overlap the copy of
// the next panels into local memory with arithmetic on the current ones (a
// multi-stage pipeline). Each is executed by one work-item and concerns only
// that work-item's copies:
//
//	async_copy.8 %A[%i, %j], %L[%p, %q], %valid
//	async_commit
//	async_wait.1
//
// async_copy.N copies A[i+k, j] to L[p+k, q] for k < valid and writes zero to
// L[p+k, q] for valid ≤ k < N, where 0 ≤ valid ≤ N; A is a global and L a
// local memref, both with the element type of A, mode 0 of static stride 1,
// and the first element of each side aligned to N elements (as for
// vector_load). The copy completes asynchronously: until it does, the
// destination elements hold unspecified values, and what it writes may land
// at any time before. async_commit closes the work-item's open group of
// copies; async_wait.W waits until at most W of the work-item's committed
// groups are incomplete, oldest first. Only after that wait, and a barrier
// when other work-items read the copied elements, is the destination
// defined. The reference interpreter makes every breach visible: it writes
// NaN (all one bits) to the destination when a copy is issued and the copied
// values when a wait retires its group.
package ir
