package spv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// ID is a SPIR-V result id.
type ID uint32

// Generator is tltune's id in the module header's generator word (tool id 0
// with a version of 1: tltune has no Khronos-registered tool id).
const Generator = 1

// Builder assembles one module. Types and constants are deduplicated;
// capabilities, extensions and the header version are derived from the
// instructions and enumerants the module uses (see Bytes). Function code is
// appended in order with Emit; instructions whose operands are only known
// later (phis of loop headers) are reserved and patched.
type Builder struct {
	next     ID
	minVer   uint32
	needs    [][]Capability // each entry: any one of these capabilities
	declared []Capability   // declared explicitly
	exts     []string
	version  uint32

	imports, entries, modes, names, annotations, globals []uint32
	decls                                                []uint32 // function declarations (imports), before every definition
	code                                                 []uint32
	dedup                                                map[dedupKey]ID
	dedupLong                                            map[string]ID
	longKey                                              []byte // uniqueLong's key, a recycled buffer

	seen opSet // opcodes whose requirements are recorded
	// results caches hasResult for the opcodes in known: Emit asks for
	// every instruction, and the grammar's table is a map.
	results, known opSet

	fvars  []uint32 // Function variables of the function being written
	varsAt int      // where they go: after the function's first OpLabel

	head []uint32     // Bytes' capabilities to memory model, a recycled buffer
	caps []Capability // the capabilities the requirements so far need; nil when they changed
}

// NewBuilder returns a builder for a module of at least SPIR-V version
// minVersion (encoded as in the header, e.g. 0x10000 for 1.0).
func NewBuilder(minVersion uint32) *Builder {
	b := builders.Get().(*Builder)
	b.next, b.minVer, b.version = 1, minVersion, minVersion
	return b
}

// NewID allocates a result id.
func (b *Builder) NewID() ID {
	id := b.next
	b.next++
	return id
}

// Capability declares c explicitly: for what the grammar cannot see, such
// as the width of a type (Int64, Float64, Float16Buffer, ...).
func (b *Builder) Capability(c Capability) {
	if !slices.Contains(b.declared, c) {
		b.declared = append(b.declared, c)
		b.caps = nil
	}
}

// Use records the requirements of enumerant v of kind k (a decoration, a
// built-in, an execution mode, ...).
func (b *Builder) Use(k OperandKind, v uint32) {
	if e, ok := Enumerant(k, v); ok {
		b.require(e.Caps, e.Exts, e.Version)
	}
}

// require records what an instruction or enumerant needs. Extensions are
// needed only by what no core version has (version 0): the grammar also
// lists the extensions that once introduced core instructions.
func (b *Builder) require(caps []Capability, exts []string, version uint32) {
	if len(caps) > 0 && !b.needsAlready(caps) {
		b.needs = append(b.needs, caps)
		b.caps = nil
	}
	if version != 0 {
		exts = nil
	}
	for _, x := range exts {
		if !slices.Contains(b.exts, x) {
			b.exts = append(b.exts, x)
		}
	}
	b.version = max(b.version, version)
}

// needsAlready reports whether caps, a list of the grammar's tables, is
// recorded: every use of an enumerant records its list, and a module uses
// the same few hundreds of times (Capabilities sorted them all).
func (b *Builder) needsAlready(caps []Capability) bool {
	for _, n := range b.needs {
		if len(n) == len(caps) && unsafe.SliceData(n) == unsafe.SliceData(caps) {
			return true
		}
	}
	return false
}

// encode appends one instruction to dst and records what op requires (once
// per opcode: the grammar lookup is the costly part of encoding).
func (b *Builder) encode(dst []uint32, op Op, operands []uint32) []uint32 {
	return b.encodeWith(dst, op, nil, operands)
}

// encodeWith is encode with the operands split in two (result type and id,
// then the rest), so that callers need not build a joined slice.
func (b *Builder) encodeWith(dst []uint32, op Op, head, operands []uint32) []uint32 {
	n, size := len(dst), len(head)+len(operands)
	dst = slices.Grow(dst, 1+size)[:n+1+size]
	b.record(op)
	dst[n] = opWord(op, size)
	fill(dst[n+1:], head, operands)
	return dst
}

// emitCode is encodeWith onto the function code.
func (b *Builder) emitCode(op Op, head, operands []uint32) {
	fill(b.codeInst(op, len(head)+len(operands)), head, operands)
}

// codeInst appends an instruction of op with n operand words (result type
// and id included) to the function code, records what op requires and
// returns the operand words for the caller to fill. It extends b.code in
// place and assigns it only when it grows: assigning the slice back for
// every instruction cost a write barrier each while the collector ran (a
// third of Emit in a generic GEMM module). Recording is left to
// codeInstSlow, called for the first instruction of an opcode: calling
// record for every instruction was a twentieth of writing the generic
// GEMM module.
func (b *Builder) codeInst(op Op, n int) []uint32 {
	at := len(b.code)
	if cap(b.code)-at <= n || !b.seen.has(op) {
		b.codeInstSlow(op, n)
	}
	w := b.code[:at+1+n]
	b.code = w // the same array: the compiler writes no pointer
	w[at] = opWord(op, n)
	return w[at+1:]
}

// codeInstSlow makes room for an instruction of n operand words and
// records what op requires.
func (b *Builder) codeInstSlow(op Op, n int) {
	b.code = slices.Grow(b.code, 1+n)
	b.record(op)
}

// opWord is the first word of an instruction of op with n operand words.
func opWord(op Op, n int) uint32 { return uint32(n+1)<<16 | uint32(op) }

// record records what op requires, once per opcode: the grammar lookup is
// the costly part of encoding.
func (b *Builder) record(op Op) {
	if !b.seen.has(op) {
		b.seen.add(op)
		if info := op.Info(); info != nil {
			b.require(info.Caps, info.Exts, info.Version)
		}
	}
}

// fill writes an instruction's operand words into w, which has room for
// exactly them. Word by word: instructions are a few words, for which
// calls to memmove (append's copy) cost more than the copying.
func fill(w []uint32, head, operands []uint32) {
	for i, x := range head {
		w[i] = x
	}
	w = w[len(head):]
	for i, x := range operands {
		w[i] = x
	}
}

// appendString appends literal string s to w: UTF-8, NUL-terminated,
// padded to words.
func appendString(w []uint32, s string) []uint32 {
	for i := 0; i <= len(s); i += 4 { // <=: the NUL ends a word, or is one
		var word [4]byte
		copy(word[:], s[i:])
		w = append(w, binary.LittleEndian.Uint32(word[:]))
	}
	return w
}

// appendIDs appends ids to w as words.
func appendIDs(w []uint32, ids []ID) []uint32 {
	for _, id := range ids {
		w = append(w, uint32(id))
	}
	return w
}

// The module-level instructions below are built in a buffer on the
// stack, which suffices unless a name is long.
const wordBuf = 16

// Type returns the id of the type made by op with operands (everything
// after the result id), creating it once.
func (b *Builder) Type(op Op, operands ...uint32) ID {
	return b.unique(op, 0, operands)
}

// Constant returns the id of a constant of type t made by op (OpConstant,
// OpConstantTrue, OpConstantComposite, OpConstantNull, ...), creating it once.
func (b *Builder) Constant(op Op, t ID, operands ...uint32) ID {
	return b.unique(op, t, operands)
}

// dedupKey identifies a type or constant by its opcode, type and up to
// four operand words (all but function types): plain memory, so lookups,
// which are frequent, neither allocate nor hash strings. Its fields leave
// no padding, so that the map hashes the key in one piece, not field by
// field (the hashing was two thirds of a lookup).
type dedupKey struct {
	op Op
	n  uint16
	t  ID
	w  [4]uint32
}

func (b *Builder) unique(op Op, t ID, operands []uint32) ID {
	if len(operands) > 4 {
		return b.uniqueLong(op, t, operands)
	}
	key := dedupKey{op: op, n: uint16(len(operands)), t: t}
	copy(key.w[:], operands)
	if id, ok := b.dedup[key]; ok {
		return id
	}
	id := b.define(op, t, operands)
	b.dedup[key] = id
	return id
}

// uniqueLong is unique for longer operand lists, keyed by their words
// (the length of the key gives their number).
func (b *Builder) uniqueLong(op Op, t ID, operands []uint32) ID {
	key := binary.LittleEndian.AppendUint32(b.longKey[:0], uint32(op))
	key = binary.LittleEndian.AppendUint32(key, uint32(t))
	for _, w := range operands {
		key = binary.LittleEndian.AppendUint32(key, w)
	}
	b.longKey = key
	if id, ok := b.dedupLong[string(key)]; ok {
		return id
	}
	id := b.define(op, t, operands)
	b.dedupLong[string(key)] = id
	return id
}

// define writes a type or constant to the global section.
func (b *Builder) define(op Op, t ID, operands []uint32) ID {
	id := b.NewID()
	head := [2]uint32{uint32(t), uint32(id)}
	if t != 0 {
		b.globals = b.encodeWith(b.globals, op, head[:], operands)
	} else {
		b.globals = b.encodeWith(b.globals, op, head[1:], operands)
	}
	return id
}

// GlobalVariable declares a module-scope OpVariable of pointer type ptr.
func (b *Builder) GlobalVariable(ptr ID, sc StorageClass) ID {
	b.Use(KindStorageClass, uint32(sc))
	id := b.NewID()
	b.globals = b.encode(b.globals, OpVariable, []uint32{uint32(ptr), uint32(id), uint32(sc)})
	return id
}

// ImportExtInst imports an extended instruction set by name.
func (b *Builder) ImportExtInst(name string) ID {
	id := b.NewID()
	var buf [wordBuf]uint32
	b.imports = b.encode(b.imports, OpExtInstImport, appendString(append(buf[:0], uint32(id)), name))
	return id
}

// EntryPoint declares fn as an entry point; interface lists the Input
// variables it reads.
func (b *Builder) EntryPoint(model ExecutionModel, fn ID, name string, iface []ID) {
	b.Use(KindExecutionModel, uint32(model))
	var buf [wordBuf]uint32
	w := appendString(append(buf[:0], uint32(model), uint32(fn)), name)
	b.entries = b.encode(b.entries, OpEntryPoint, appendIDs(w, iface))
}

// ExecutionMode sets mode m with literal parameters on entry point fn.
func (b *Builder) ExecutionMode(fn ID, m ExecutionMode, params ...uint32) {
	b.Use(KindExecutionMode, uint32(m))
	var buf [wordBuf]uint32
	b.modes = b.encode(b.modes, OpExecutionMode, append(append(buf[:0], uint32(fn), uint32(m)), params...))
}

// Name attaches a debug name to id.
func (b *Builder) Name(id ID, name string) {
	var buf [wordBuf]uint32
	b.names = b.encode(b.names, OpName, appendString(append(buf[:0], uint32(id)), name))
}

// Decorate decorates target with d and its literal parameters.
func (b *Builder) Decorate(target ID, d Decoration, params ...uint32) {
	b.Use(KindDecoration, uint32(d))
	if d == DecorationBuiltIn && len(params) == 1 {
		b.Use(KindBuiltIn, params[0])
	}
	var buf [wordBuf]uint32
	b.annotations = b.encode(b.annotations, OpDecorate, append(append(buf[:0], uint32(target), uint32(d)), params...))
}

// Emit appends an instruction to the function code and returns its result
// id when op has one (a fresh id), or 0.
func (b *Builder) Emit(op Op, resultType ID, operands ...uint32) ID {
	var id ID
	var head [2]uint32
	var n int
	switch {
	case resultType != 0:
		id = b.NewID()
		head, n = [2]uint32{uint32(resultType), uint32(id)}, 2
	case b.hasResult(op):
		id = b.NewID()
		head, n = [2]uint32{uint32(id)}, 1
	}
	b.emitCode(op, head[:n], operands)
	return id
}

// EmitIDs is Emit for an instruction whose operands are all ids, written
// straight from the slice: the back end's most frequent form (arithmetic,
// loads, conversions), which copying into words first made a fifth
// slower to encode. With a result type, as nearly always, it makes room
// itself as codeInst does: the call and the slice it returned were a
// twentieth of writing a module.
func (b *Builder) EmitIDs(op Op, resultType ID, operands []ID) ID {
	if resultType == 0 {
		return b.emitIDsUntyped(op, operands)
	}
	id := b.NewID()
	n := 2 + len(operands)
	at := len(b.code)
	if cap(b.code)-at <= n || !b.seen.has(op) {
		b.codeInstSlow(op, n)
	}
	w := b.code[:at+1+n]
	b.code = w // the same array: the compiler writes no pointer
	w = w[at:]
	w[0], w[1], w[2] = opWord(op, n), uint32(resultType), uint32(id)
	for i, x := range operands {
		w[3+i] = uint32(x)
	}
	return id
}

// emitIDsUntyped is EmitIDs for an instruction without a result type.
func (b *Builder) emitIDsUntyped(op Op, operands []ID) ID {
	if !b.hasResult(op) {
		fillIDs(b.codeInst(op, len(operands)), operands)
		return 0
	}
	id := b.NewID()
	w := b.codeInst(op, 1+len(operands))
	w[0] = uint32(id)
	fillIDs(w[1:], operands)
	return id
}

// fillIDs writes ids into w, which has room for exactly them.
func fillIDs(w []uint32, ids []ID) {
	w = w[:len(ids)]
	for i, x := range ids {
		w[i] = uint32(x)
	}
}

// EmitWithID appends an instruction with a result id chosen earlier (labels
// and values referenced before they are defined).
func (b *Builder) EmitWithID(op Op, resultType, id ID, operands ...uint32) {
	head := [2]uint32{uint32(resultType), uint32(id)}
	if resultType != 0 {
		b.emitCode(op, head[:], operands)
	} else {
		b.emitCode(op, head[1:], operands)
	}
}

// Reserve appends an instruction whose operands after the result are filled
// in later with Patch (a loop header's phi, whose back-edge value is not
// written yet); n is the number of operand words to reserve.
func (b *Builder) Reserve(op Op, resultType, id ID, n int) (slot int) {
	slot = len(b.code)
	head := [2]uint32{uint32(resultType), uint32(id)}
	var zeros [16]uint32 // the operands to patch, on the stack when few
	ops := zeros[:]
	if n > len(zeros) {
		ops = make([]uint32, n)
	}
	b.emitCode(op, head[:], ops[:n])
	return slot
}

// Patch fills the reserved operands of the instruction at slot.
func (b *Builder) Patch(slot int, operands ...uint32) {
	if n := int(b.code[slot]>>16) - 3; n != len(operands) {
		panic(fmt.Sprintf("spv: patch of %d words into a slot of %d", len(operands), n))
	}
	copy(b.code[slot+3:], operands)
}

// ImportFunction declares a function of type fnType (returning ret, taking
// params) that the module imports by its linkage name, and returns its id
// for OpFunctionCall: a function the consumer supplies, such as a
// device's built-in known by its mangled OpenCL C name. Declarations
// precede every function definition in a module.
func (b *Builder) ImportFunction(name string, ret, fnType ID, params []ID) ID {
	id := b.NewID()
	var buf [wordBuf]uint32
	b.Use(KindLinkageType, uint32(LinkageTypeImport))
	b.Decorate(id, DecorationLinkageAttributes, append(appendString(buf[:0], name), uint32(LinkageTypeImport))...)
	b.decls = b.encode(b.decls, OpFunction, []uint32{uint32(ret), uint32(id), uint32(FunctionControlNone), uint32(fnType)})
	for _, p := range params {
		b.decls = b.encode(b.decls, OpFunctionParameter, []uint32{uint32(p), uint32(b.NewID())})
	}
	b.decls = b.encode(b.decls, OpFunctionEnd, nil)
	return id
}

// BeginFunction starts function id of type fnType returning ret and
// declares its parameters (types params); it returns their ids and leaves
// the builder in the entry block labelled entry.
func (b *Builder) BeginFunction(id, ret, fnType ID, params []ID, entry ID) []ID {
	b.EmitWithID(OpFunction, ret, id, uint32(FunctionControlNone), uint32(fnType))
	ids := make([]ID, len(params))
	for i, p := range params {
		ids[i] = b.Emit(OpFunctionParameter, p)
	}
	b.EmitWithID(OpLabel, 0, entry)
	b.varsAt = len(b.code)
	b.fvars = nil
	return ids
}

// FunctionVariable declares a Function-storage variable of pointer type ptr
// in the entry block of the current function (SPIR-V wants them first
// there, whenever the emitter discovers it needs one).
func (b *Builder) FunctionVariable(ptr ID) ID {
	id := b.NewID()
	b.fvars = b.encode(b.fvars, OpVariable, []uint32{uint32(ptr), uint32(id), uint32(StorageClassFunction)})
	return id
}

// EndFunction closes the current function. Reserved slots of the function
// must be patched before.
func (b *Builder) EndFunction() {
	b.code = b.encode(b.code, OpFunctionEnd, nil)
	b.code = slices.Insert(b.code, b.varsAt, b.fvars...)
	b.fvars = nil
}

// hasResult is the package's hasResult, cached per opcode.
func (b *Builder) hasResult(op Op) bool {
	if !b.known.covers(op) {
		return hasResult(op)
	}
	if !b.known.has(op) {
		b.known.add(op)
		if hasResult(op) {
			b.results.add(op)
		}
	}
	return b.results.has(op)
}

// opSet is a set of the opcodes below 1<<13, where the grammar's are
// (up to 6408 in SPIR-V 1.6's grammar); larger ones are never members.
// Three sets are zeroed with every module: a set of all 1<<16 would cost
// more to clear than its lookups save.
type opSet [1 << 13 / 64]uint64

func (s *opSet) covers(op Op) bool { return int(op/64) < len(s) }
func (s *opSet) has(op Op) bool    { return s.covers(op) && s[op/64]&(1<<(op%64)) != 0 }

func (s *opSet) add(op Op) {
	if s.covers(op) {
		s[op/64] |= 1 << (op % 64)
	}
}

func hasResult(op Op) bool {
	info := op.Info()
	return info != nil && len(info.Operands) > 0 &&
		(info.Operands[0].Kind == KindIdResult || len(info.Operands) > 1 && info.Operands[1].Kind == KindIdResult)
}

// Capabilities returns the capabilities the module declares: the explicit
// ones, then for every requirement not met by those (or by what they
// imply) its first alternative.
func (b *Builder) Capabilities() []Capability { return slices.Clone(b.capabilities()) }

// capabilities is Capabilities, worked out once for the requirements so
// far (Bytes and the back end both ask, and the grammar lookups of what
// each capability implies were a twentieth of writing a module).
func (b *Builder) capabilities() []Capability {
	if b.caps == nil {
		b.caps = b.workOutCapabilities()
	}
	return b.caps
}

func (b *Builder) workOutCapabilities() []Capability {
	var have capSet
	var out []Capability
	declare := func(c Capability) {
		out = append(out, c)
		b.implyAll(c, &have)
	}
	for _, c := range b.declared {
		declare(c)
	}
	// Requirements with one alternative first, so an alternative list
	// is satisfied by what the module needs anyway when possible.
	needs := slices.Clone(b.needs)
	slices.SortStableFunc(needs, func(x, y []Capability) int { return len(x) - len(y) })
	for _, alts := range needs {
		if !slices.ContainsFunc(alts, have.has) {
			declare(alts[0])
		}
	}
	return out
}

// implyAll marks c and every capability it implicitly declares.
func (b *Builder) implyAll(c Capability, have *capSet) {
	if have.has(c) {
		return
	}
	have.caps = append(have.caps, c)
	if e, ok := Enumerant(KindCapability, uint32(c)); ok {
		b.require(nil, e.Exts, e.Version)
		for _, d := range e.Caps {
			b.implyAll(d, have)
		}
	}
}

// capSet is a set of the few capabilities a module declares or implies.
type capSet struct{ caps []Capability }

func (s *capSet) has(c Capability) bool { return slices.Contains(s.caps, c) }

// Bytes returns the module in the binary format, little-endian.
func (b *Builder) Bytes(addressing AddressingModel, memory MemoryModel) []byte {
	b.Use(KindAddressingModel, uint32(addressing))
	b.Use(KindMemoryModel, uint32(memory))
	head := b.head[:0]
	for _, c := range b.capabilities() { // first: they may raise the version
		head = b.encode(head, OpCapability, []uint32{uint32(c)})
	}
	exts := slices.Clone(b.exts)
	slices.Sort(exts)
	for _, x := range exts {
		var buf [wordBuf]uint32
		head = b.encode(head, OpExtension, appendString(buf[:0], x))
	}
	head = append(head, b.imports...)
	head = b.encode(head, OpMemoryModel, []uint32{uint32(addressing), uint32(memory)})
	b.head = head
	header := []uint32{MagicNumber, b.version, Generator, uint32(b.next), 0}
	return joinWords(header, head, b.entries, b.modes, b.names, b.annotations, b.globals, b.decls, b.code)
}

// joinWords returns the words of sections one after the other,
// little-endian. On a little-endian machine that is their memory, which
// bytes.Join copies into a buffer it does not clear first: clearing the
// module's tens of KiB cost as much as copying them.
func joinWords(sections ...[]uint32) []byte {
	if littleEndian {
		var parts [9][]byte // Bytes' sections
		for i, sec := range sections {
			parts[i] = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sec))), 4*len(sec))
		}
		return bytes.Join(parts[:len(sections)], nil)
	}
	n := 0
	for _, sec := range sections {
		n += len(sec)
	}
	out := make([]byte, 4*n)
	at := out
	for _, sec := range sections {
		for i, w := range sec {
			binary.LittleEndian.PutUint32(at[4*i:], w)
		}
		at = at[4*len(sec):]
	}
	return out
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Release hands the builder back for the next module, emptied; it must
// not be used after it. Module code is tens of KiB, and a buffer allocated
// per module was a quarter of a compile's allocations; the type and
// constant tables and the sections are kept too (their allocation was a
// twentieth of a SPIR-V compile).
func (b *Builder) Release() {
	if cap(b.code) > maxPooledCode {
		return // one huge module does not pin its buffer
	}
	clear(b.dedup)
	clear(b.dedupLong)
	*b = Builder{
		needs: b.needs[:0], declared: b.declared[:0], exts: b.exts[:0],
		imports: b.imports[:0], entries: b.entries[:0], modes: b.modes[:0], names: b.names[:0],
		annotations: b.annotations[:0], globals: b.globals[:0], decls: b.decls[:0], code: b.code[:0],
		dedup: b.dedup, dedupLong: b.dedupLong, fvars: b.fvars[:0], head: b.head[:0], longKey: b.longKey[:0],
	}
	builders.Put(b)
}

// maxPooledCode bounds the code buffers kept (in words).
const maxPooledCode = 1 << 20

var builders = sync.Pool{New: func() any {
	// Tables sized for a kernel's types and constants.
	return &Builder{dedup: make(map[dedupKey]ID, 64), dedupLong: map[string]ID{}, code: make([]uint32, 0, 1<<12)}
}}

// Version is the module's SPIR-V version so far (final after Bytes).
func (b *Builder) Version() uint32 { return b.version }

// VersionString spells a header version as "1.3".
func VersionString(v uint32) string {
	return strings.Join([]string{itoa(v >> 16 & 0xff), itoa(v >> 8 & 0xff)}, ".")
}
