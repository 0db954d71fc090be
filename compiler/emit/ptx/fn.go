package ptx

import (
	"strconv"
	"strings"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/ir"
	"tltune/compiler/target"
)

// class is a PTX register class: what a register of a value holds.
type class uint8

const (
	pred class = iota
	b16        // f16 and bf16 values, as NVVM holds them
	b32        // i32 and narrow index values
	b64        // i64, wide index values and addresses
	f32
	f64
	numClasses
)

// classPrefix and classDecl are each class's register prefix and PTX type,
// the prefixes NVVM uses.
var (
	classPrefix = [numClasses]string{"%p", "%rs", "%r", "%rd", "%f", "%fd"}
	classDecl   = [numClasses]string{".pred", ".b16", ".b32", ".b64", ".f32", ".f64"}
)

// val is a scalar value as PTX operands: one register or immediate, two
// (real and imaginary parts) for a complex value. An integer held as a
// register plus a constant (affine.go) has off, the constant, besides. A
// cooperative matrix is this lane's share of it (coop.go), in regs.
type val struct {
	cls   class
	parts [2]string
	n     int
	off   int64
	regs  []string
}

func one(c class, x string) val      { return val{cls: c, parts: [2]string{x}, n: 1} }
func two(c class, re, im string) val { return val{cls: c, parts: [2]string{re, im}, n: 2} }
func (v val) x() string              { return v.parts[0] }
func isImm(s string) bool            { return s != "" && s[0] != '%' }
func itoa(n int) string              { return strconv.Itoa(n) }
func i64toa(n int64) string          { return strconv.FormatInt(n, 10) }
func widthSuffix(w int) string       { return byWidth{"s32", "s64"}.of(w) }
func widthClass(w int) class         { return [...]class{pred, b32, b64}[widthIndex(w)] }
func bracket(a string) string        { return "[" + a + "]" }
func braces(regs ...string) string   { return "{" + strings.Join(regs, ", ") + "}" }

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// byWidth is what is spelled for 32 and for 64 bits: opcodes are spelled
// once, not concatenated for every instruction.
type byWidth [2]string

// of is o's spelling for w bits, "" for other widths.
func (o byWidth) of(w int) string {
	if i := widthIndex(w); i > 0 {
		return o[i-1]
	}
	return ""
}

// widthIndex is 1 for 32 bits, 2 for 64 and 0 for other widths.
func widthIndex(w int) int {
	switch w {
	case 32:
		return 1
	case 64:
		return 2
	}
	return 0
}

// The integer opcodes the writer spells for either width.
var (
	addS   = byWidth{"add.s32", "add.s64"}
	subS   = byWidth{"sub.s32", "sub.s64"}
	mulLoS = byWidth{"mul.lo.s32", "mul.lo.s64"}
	madLoS = byWidth{"mad.lo.s32", "mad.lo.s64"}
	shrU   = byWidth{"shr.u32", "shr.u64"}
	andB   = byWidth{"and.b32", "and.b64"}
	setpGe = byWidth{"setp.ge.s32", "setp.ge.s64"}
	setpLt = byWidth{"setp.lt.u32", "setp.lt.u64"}
)

// immOf is the integer immediate s, ok false for anything else (a
// register, a float's bits). Most calls ask about registers: they are
// told without ParseInt, whose error for them was a fifth of the bytes
// the writer allocated.
func immOf(s string) (int64, bool) {
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return 0, false
	}
	if len(s) < 19 { // no overflow: spelled here, ParseInt was a tenth of the writer
		neg := s[0] == '-'
		n, ok := decimalDigits(s[b2i(neg):])
		if neg {
			n = -n
		}
		return n, ok
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// decimalDigits is the number that s, one or more decimal digits and
// fewer than 19, spells; ok false where s is empty or holds another byte.
func decimalDigits(s string) (n int64, ok bool) {
	if s == "" {
		return 0, false
	}
	for _, d := range []byte(s) {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// each is v's registers or immediates (a pointer receiver: v's parts
// are not copied to the heap to be sliced).
func (v *val) each() []string {
	if v.regs != nil {
		return v.regs
	}
	return v.parts[:v.n]
}

// fn is the state of one kernel being written; its tables and texts are
// its workspace's.
type fn struct {
	*workspace
	f      *ir.Func
	k      *opencl.Kernel
	l      opencl.Launch
	nregs  [numClasses]int
	labels int

	// The prologue's values (emitKernelBody of compiler/emit/opencl).
	sgid, lane  string // b32
	gid, groups string // b64
	part        string // b64, the split's part (builtin.group_id.y)
	shflMask    string // the member mask of a half-warp's shuffles
	// usesGroupSize: builtin.group_size is read (noted by the ranges'
	// builtin callback, which sees every builtin).
	usesGroupSize bool

	t *target.Target
	// locals counts the shared arrays of the kernel's allocas (local.go),
	// which the workspace's shared declares.
	locals int
	// coop: the kernel has cooperative matrices (coop.go), whose lane
	// parts of fragment positions fragLanes computes.
	coop              bool
	held, replicated  func(*ir.Value) bool // opencl.FragmentLayout, opencl.RowsLayout
	blocked           bool                 // rows over lanes blocked, not interleaved
	laneG, laneT2     string
	ldAlong, ldAcross [2]string

	// Loop-invariant code motion (affine.go): depth is the number of loops
	// (with a back edge) around what is being written; the workspace's
	// loops are their frames, outermost first, and its regDepth the depth
	// at which each register is written.
	depth int
	// operands counts the operands of the instruction begin started.
	operands int
}

func newFn(f *ir.Func, t *target.Target, k *opencl.Kernel, s *workspace) *fn {
	s.reset(f.NumValues)
	e := &fn{workspace: s, f: f, t: t, k: k, l: k.Launch}
	e.l.BatchPerGroup = max(e.l.BatchPerGroup, 1)
	ir.IndexRanges(&e.ranges, f, func(b ir.BuiltinKind) (ir.Range, bool) {
		e.usesGroupSize = e.usesGroupSize || b == ir.GroupSize
		return opencl.LaunchRange(e.l, b)
	})
	return e
}

// get is v's operands as held (affine ones not added up), the zero val
// where v is not written yet.
func (e *fn) get(v *ir.Value) val {
	x, _ := e.vals.Get(v)
	return x
}

// reg returns a fresh register of class c, written at the current depth.
func (e *fn) reg(c class) string {
	e.nregs[c]++
	if e.depth > 0 {
		e.setRegDepth(c, e.nregs[c], e.depth)
	}
	return regName(c, e.nregs[c])
}

// regNames are the first names of each class's registers, spelled once
// for all kernels: a GEMM kernel has hundreds of registers, and spelling
// each was two allocations.
var regNames = func() (names [numClasses][]string) {
	for c := range names {
		names[c] = make([]string, 512)
		for i := range names[c] {
			names[c][i] = classPrefix[c] + strconv.Itoa(i)
		}
	}
	return names
}()

// regName is register n of class c.
func regName(c class, n int) string {
	if n < len(regNames[c]) {
		return regNames[c][n]
	}
	return classPrefix[c] + itoa(n)
}

// op writes one instruction.
func (e *fn) op(opcode string, args ...string) { e.body = appendOp(e.body, opcode, "", args) }

// appendOp appends one instruction to b, as every instruction is spelled:
// its destination dst first where there is one ("" for none).
func appendOp(b []byte, opcode, dst string, args []string) []byte {
	b = append(b, '\t')
	b = append(b, opcode...)
	b = append(b, '\t')
	b = append(b, dst...)
	for i, a := range args {
		if i > 0 || dst != "" {
			b = append(b, ", "...)
		}
		b = append(b, a...)
	}
	return append(b, ";\n"...)
}

// def writes opcode into a fresh register of class c and returns it.
func (e *fn) def(c class, opcode string, args ...string) string {
	r := e.reg(c)
	e.body = appendOp(e.body, opcode, r, args)
	return r
}

// begin starts an instruction whose opcode is the concatenation of parts
// (a guard, a state space, a type): arg, group and at write its operands,
// end ends it. Nothing is concatenated but the text.
func (e *fn) begin(parts ...string) {
	e.body = append(e.body, '\t')
	for _, p := range parts {
		e.body = append(e.body, p...)
	}
	e.body = append(e.body, '\t')
	e.operands = 0
}

// sep separates an operand from the one before.
func (e *fn) sep() {
	if e.operands > 0 {
		e.body = append(e.body, ", "...)
	}
	e.operands++
}

// arg writes operand x.
func (e *fn) arg(x string) {
	e.sep()
	e.body = append(e.body, x...)
}

// group writes the vector operand {regs}.
func (e *fn) group(regs ...string) {
	e.sep()
	e.body = append(e.body, '{')
	for i, r := range regs {
		if i > 0 {
			e.body = append(e.body, ", "...)
		}
		e.body = append(e.body, r...)
	}
	e.body = append(e.body, '}')
}

// at writes the address operand a.
func (e *fn) at(a address) {
	e.sep()
	e.body = a.append(e.body)
}

func (e *fn) end() { e.body = append(e.body, ";\n"...) }

// newLabel returns a fresh label; putLabel places it.
func (e *fn) newLabel() string {
	e.labels++
	return "$L_" + itoa(e.labels)
}

// branch jumps to label where predicate p holds, or where it does not
// (negated).
func (e *fn) branch(p string, negated bool, label string) {
	not := ""
	if negated {
		not = "!"
	}
	e.begin("@", not, p, " bra")
	e.arg(label)
	e.end()
}

func (e *fn) putLabel(l string) {
	e.body = append(e.body, l...)
	e.body = append(e.body, ":\n"...)
}

// writeText appends the entry, its register declarations first, to the
// module's text.
func (e *fn) writeText() {
	b := append(e.out, e.shared...)
	b = append(b, ".entry "...)
	b = append(b, e.k.Symbol...)
	b = append(b, "(\n"...)
	b = append(b, e.decls...)
	b = append(b, ")\n.reqntid "...)
	b = strconv.AppendInt(b, int64(e.l.WorkGroupSize[0]), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(e.l.WorkGroupSize[1]), 10)
	b = append(b, ", 1\n{\n"...)
	for c, n := range e.nregs {
		if n > 0 {
			b = append(b, "\t.reg "...)
			b = append(b, classDecl[c]...)
			b = append(b, " \t"...)
			b = append(b, classPrefix[c]...)
			b = append(b, '<')
			b = strconv.AppendInt(b, int64(n+1), 10)
			b = append(b, ">;\n"...)
		}
	}
	b = append(b, '\n')
	b = append(b, e.body...)
	e.out = append(b, "\tret;\n}\n"...)
}

// value returns the operands of v, an affine one added up, a decided
// predicate in a register.
func (e *fn) value(v *ir.Value) val {
	if x, ok := e.vals.Get(v); ok {
		if x.cls == pred && isImm(x.x()) {
			return one(pred, e.predicate(x.x()))
		}
		if x.off != 0 {
			w := 32
			if x.cls == b64 {
				w = 64
			}
			return one(x.cls, e.operand(affine{x.x(), x.off, w}))
		}
		return x
	}
	panic(unsupported("value %%%s used before it was written (%s)", v.Name, v.Type))
}

// narrow reports whether index value v is held in 32 bits, as the OpenCL C
// writer holds it in an int (its narrow.go).
func (e *fn) narrow(v *ir.Value) bool {
	if v.Type != ir.Index {
		return false
	}
	r, ok := e.ranges.Get(v)
	return ok && r.Fits32()
}

// classOf is the register class of a value of type t (narrow: an index
// held in 32 bits) and whether it is complex (two registers).
func classOf(t *ir.Type, narrow bool) (class, bool) {
	switch t.Kind() {
	case ir.KindBool:
		return pred, false
	case ir.KindI32:
		return b32, false
	case ir.KindIndex:
		if narrow {
			return b32, false
		}
		return b64, false
	case ir.KindI64:
		return b64, false
	case ir.KindF16, ir.KindBF16:
		return b16, false
	case ir.KindF32:
		return f32, false
	case ir.KindF64:
		return f64, false
	case ir.KindC32:
		return f32, true
	case ir.KindC64:
		return f64, true
	}
	panic(unsupported("type %s", t))
}

// classOfValue is classOf for value v.
func (e *fn) classOfValue(v *ir.Value) (class, bool) { return classOf(v.Type, e.narrow(v)) }

// fresh returns new registers for a value of v's type.
func (e *fn) fresh(v *ir.Value) val {
	if isCoop(v) {
		return e.freshCoop(v)
	}
	c, cplx := e.classOfValue(v)
	if cplx {
		return two(c, e.reg(c), e.reg(c))
	}
	return one(c, e.reg(c))
}

// width is the bits an integer value is held in.
func (e *fn) width(v *ir.Value) int {
	if c, _ := e.classOfValue(v); c == b32 {
		return 32
	}
	return 64
}

// intAs is integer value v as an operand of w bits: widened (sign
// extended, as C converts int to long) or truncated where it is held in
// the other width. Immediates serve any width.
func (e *fn) intAs(v *ir.Value, w int) string {
	return e.resize(e.value(v).x(), e.width(v), w)
}

// resize is operand x of from bits as w bits.
func (e *fn) resize(x string, from, w int) string {
	switch {
	case isImm(x) || from == w:
		return x
	case w == 64:
		return e.pure(b64, "cvt.s64.s32", x)
	}
	return e.pure(b32, "cvt.u32.u64", x)
}

// movClass is the mov instruction of class c.
func movOf(c class) string {
	return [numClasses]string{"mov.pred", "mov.b16", "mov.b32", "mov.b64", "mov.f32", "mov.f64"}[c]
}

// assign moves src into the registers of dst.
func (e *fn) assign(dst, src val) {
	from := src.each()
	for i, d := range dst.each() {
		if d != from[i] {
			e.op(movOf(dst.cls), d, from[i])
		}
	}
}
