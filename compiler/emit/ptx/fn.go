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
func widthSuffix(w int) string       { return map[int]string{32: "s32", 64: "s64"}[w] }
func widthClass(w int) class         { return map[int]class{32: b32, 64: b64}[w] }
func b2i(b bool) int                 { return map[bool]int{true: 1}[b] }
func bracket(a string) string        { return "[" + a + "]" }
func braces(regs ...string) string   { return "{" + strings.Join(regs, ", ") + "}" }

// immOf is the integer immediate s, ok false for anything else (a
// register, a float's bits). Most calls ask about registers: they are
// told without ParseInt, whose error for them was a fifth of the bytes
// the writer allocated.
func immOf(s string) (int64, bool) {
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// each is v's registers or immediates.
func (v val) each() []string {
	if v.regs != nil {
		return v.regs
	}
	return v.parts[:v.n]
}

// fn is the state of one kernel being written.
type fn struct {
	f      *ir.Func
	k      *opencl.Kernel
	l      opencl.Launch
	body   strings.Builder
	decls  strings.Builder // the entry's head: parameters
	nregs  [numClasses]int
	labels int
	vals   map[*ir.Value]val
	mems   map[*ir.Value]*memref
	ranges ir.ValueMap[ir.Range]
	// tight are the ranges learnt where values were written (fold.go).
	tight  ir.ValueMap[ir.Range]
	yields map[*ir.Region][]val
	// unrolled collects the values the body of a loop being unrolled
	// yields, in place of yields' registers.
	unrolled map[*ir.Region][]val
	// scopes are pure's instructions, the innermost region's last; key
	// is where pure spells their keys.
	scopes []scope
	key    []byte

	// The prologue's values (emitKernelBody of compiler/emit/opencl).
	sgid, lane  string // b32
	gid, groups string // b64
	part        string // b64, the split's part (builtin.group_id.y)
	shflMask    string // the member mask of a half-warp's shuffles
	// usesGroupSize: builtin.group_size is read (noted by the ranges'
	// builtin callback, which sees every builtin).
	usesGroupSize bool

	t *target.Target
	// shared declares the module's shared arrays of the kernel's allocas
	// (local.go); locals counts them.
	shared strings.Builder
	locals int
	// coop: the kernel has cooperative matrices (coop.go), whose lane
	// parts of fragment positions fragLanes computes.
	coop              bool
	held, replicated  func(*ir.Value) bool // opencl.FragmentLayout, opencl.RowsLayout
	blocked           bool                 // rows over lanes blocked, not interleaved
	done              map[*ir.Inst]bool    // mul_adds written with an earlier one of their group
	lazy              map[*ir.Value]*lazyLoad
	laneG, laneT2     string
	ldAlong, ldAcross [2]string
	// coopUses counts the reads of each cooperative matrix; aliased are
	// the arguments of unrolled loops, whose registers are their initial
	// values' (ownsLastUse).
	coopUses map[*ir.Value]int
	aliased  map[*ir.Value]bool

	// Loop-invariant code motion (affine.go): depth is the number of loops
	// (with a back edge) around what is being written, loops their frames,
	// outermost first, and regDepth the depth at which each register is
	// written (0 where absent).
	depth    int
	loops    []*loopFrame
	regDepth map[string]int
}

func newFn(f *ir.Func, t *target.Target, k *opencl.Kernel) *fn {
	e := &fn{f: f, t: t, k: k, l: k.Launch, vals: map[*ir.Value]val{}, mems: map[*ir.Value]*memref{},
		yields: map[*ir.Region][]val{}, unrolled: map[*ir.Region][]val{}, scopes: []scope{{}}, aliased: map[*ir.Value]bool{}, done: map[*ir.Inst]bool{}, lazy: map[*ir.Value]*lazyLoad{},
		regDepth: map[string]int{}}
	e.l.BatchPerGroup = max(e.l.BatchPerGroup, 1)
	ir.IndexRanges(&e.ranges, f, func(b ir.BuiltinKind) (ir.Range, bool) {
		e.usesGroupSize = e.usesGroupSize || b == ir.GroupSize
		return opencl.LaunchRange(e.l, b)
	})
	e.tight.Reset(f.NumValues)
	return e
}

// reg returns a fresh register of class c, written at the current depth.
func (e *fn) reg(c class) string {
	e.nregs[c]++
	r := regName(c, e.nregs[c])
	if e.depth > 0 {
		e.regDepth[r] = e.depth
	}
	return r
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
func (e *fn) op(opcode string, args ...string) { writeOp(&e.body, opcode, args...) }

// writeOp writes one instruction to b, as every instruction is spelled.
func writeOp(b *strings.Builder, opcode string, args ...string) {
	b.WriteByte('\t')
	b.WriteString(opcode)
	b.WriteByte('\t')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
	b.WriteString(";\n")
}

// def writes opcode into a fresh register of class c and returns it.
func (e *fn) def(c class, opcode string, args ...string) string {
	r := e.reg(c)
	e.op(opcode, append([]string{r}, args...)...)
	return r
}

// newLabel returns a fresh label; putLabel places it.
func (e *fn) newLabel() string {
	e.labels++
	return "$L_" + itoa(e.labels)
}

func (e *fn) putLabel(l string) {
	e.body.WriteString(l)
	e.body.WriteString(":\n")
}

// text is the entry, its register declarations first.
func (e *fn) text() string {
	var b strings.Builder
	b.WriteString(e.shared.String())
	b.WriteString(".entry ")
	b.WriteString(e.k.Symbol)
	b.WriteString("(\n")
	b.WriteString(e.decls.String())
	b.WriteString(")\n.reqntid ")
	b.WriteString(itoa(e.l.WorkGroupSize[0]) + ", " + itoa(e.l.WorkGroupSize[1]) + ", 1\n{\n")
	for c, n := range e.nregs {
		if n > 0 {
			b.WriteString("\t.reg " + classDecl[c] + " \t" + classPrefix[c] + "<" + itoa(n+1) + ">;\n")
		}
	}
	b.WriteString("\n")
	b.WriteString(e.body.String())
	b.WriteString("\tret;\n}\n")
	return b.String()
}

// value returns the operands of v, an affine one added up, a decided
// predicate in a register.
func (e *fn) value(v *ir.Value) val {
	if x, ok := e.vals[v]; ok {
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
